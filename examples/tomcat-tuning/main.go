//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// errRemoteLoad is what the retired -remote-load says: it waited for Enter
// while a load was run by hand, and recorded no figure.
var errRemoteLoad = errors.New("-remote-load was replaced by -load-host [USER@]HOST[:PORT]: the study runs the load on the client over ssh " +
	"and records every figure (see the README's \"Load from the client host\")")

func main() {
	if len(os.Args) == 2 && os.Args[1] == study.WorkerArg {
		os.Exit(study.WorkerMain())
	}
	o := study.DefaultOptions()
	var revert bool
	steps := strings.Join(o.Steps, ",")
	flag.BoolVar(&o.Apply, "apply", false, "run the steps (default: discover, plan and measure a baseline only)")
	flag.BoolVar(&revert, "revert", false, "restore everything the journal of an earlier run records, then exit")
	flag.BoolVar(&o.Keep, "keep", false, "with -apply: leave the changes in place (revert later with -revert)")
	flag.StringVar(&o.Journal, "journal", o.Journal, "journal file")
	flag.StringVar(&steps, "steps", steps, "steps to run, in this order")
	flag.StringVar(&o.Home, "catalina-home", "", "Tomcat's CATALINA_HOME (default: $CATALINA_HOME or Debian's)")
	flag.StringVar(&o.Base, "catalina-base", "", "Tomcat's CATALINA_BASE (default: $CATALINA_BASE or Debian's)")
	flag.StringVar(&o.Port, "port", "", "port of the HTTP Connector to tune (default: the first HTTP/1.1 Connector's)")
	flag.StringVar(&o.URL, "url", "", "URL to measure (default: http://127.0.0.1:PORT"+loadgen.HelloWorldPath+")")
	flag.IntVar(&o.CPUs, "cpus", o.CPUs, "CPUs to give Tomcat (capped to the host's)")
	flag.StringVar(&o.CPUMethod, "cpu-method", o.CPUMethod, "how to restrict Tomcat's CPUs: hotplug (the guide's) or affinity")
	flag.Float64Var(&o.CapacityRate, "capacity-rate", o.CapacityRate, "requests/s offered by each capacity run, far above what Tomcat answers (wrk2 -R)")
	flag.IntVar(&o.Repeat, "repeat", o.Repeat, "capacity runs per step: the table shows their median and range, and tests each uplift on them")
	flag.Float64Var(&o.Alpha, "alpha", o.Alpha, "significance level of the uplifts' Mann-Whitney U test (benchstat's -alpha)")
	flag.StringVar(&o.Search, "search", o.Search, "on: measure candidates where the guide applies a rule (maxThreads: CPUs-1, the census, 2x and 4x CPUs, the pool before; NIC queues: 1, CPUs/2, CPUs, the maximum) and keep the best; off: the guide's rules exactly")
	flag.Float64Var(&o.Rate, "rate", o.Rate, fmt.Sprintf("requests/s of the latency run, common to every step (0: %.0f%% of the baseline's capacity)", 100*study.DefaultLatencyShare))
	flag.IntVar(&o.Connections, "connections", o.Connections, "load connections (wrk2 -c)")
	flag.DurationVar(&o.Duration, "duration", o.Duration, "length of each capacity run and of the latency run (wrk2 -d)")
	flag.DurationVar(&o.WarmUp, "warmup", o.WarmUp, "longest warm-up before each step's measurement: closed-loop runs until the rate stops climbing (0: none)")
	flag.DurationVar(&o.WarmUpStep, "warmup-interval", o.WarmUpStep, "length of each warm-up run")
	flag.BoolFunc("remote-load", "replaced by -load-host: the study runs the load on the client itself, over ssh, and records every figure", func(string) error {
		return errRemoteLoad
	})
	flag.StringVar(&o.JSONFile, "json", "", "write the steps (status, capacity with its spread, latency at the common rate) as JSON to this file")
	flag.StringVar(&o.PlotFile, "plot", "", "write a bar chart of the steps' capacity (median requests/s) to this SVG file")
	flag.StringVar(&o.Grub, "grub", "", "GRUB defaults file (default: ROOT/etc/default/grub)")
	flag.StringVar(&o.Root, "root", o.Root, "host root: a fixture or mounted tree for plan mode")
	flag.StringVar(&o.Iface, "iface", "", "NIC to tune (default: the interface holding the URL's address)")
	flag.BoolVar(&o.Persist, "persist", false, "with -apply: make the steps that gained significantly survive a reboot (a tuned profile, or systemd pieces; the unit's drop-in; server.xml), journaled for -revert")
	var persistSteps string
	flag.StringVar(&persistSteps, "persist-steps", "", "steps -persist and -export keep (default: the steps that gained significantly, and the baseline's)")
	flag.StringVar(&o.Export, "export", "", "write the persistent files (tuned profile, drop-in, server.xml diff, README) into this folder, changing nothing on the host")
	flag.StringVar(&o.LoadNetNS, "load-netns", "", "run each load inside this network namespace (ip netns), through a veth as from a client machine, but on this host's CPUs")
	flag.BoolVar(&o.LoadSharesCPUs, "load-shares-cpus", false, "with -apply: measure even though the load on this host runs on Tomcat's CPUs (hotplug, or affinity with no CPU left), which is otherwise refused; every figure is marked")
	flag.StringVar(&o.LoadHost, "load-host", "", "run each load on this client machine, [USER@]HOST[:PORT], through ssh (BatchMode, known host keys only), as the guide's wrk2 client, or on several, comma-separated (one shard each, merged); needs -url with an address they reach")
	flag.StringVar(&o.SSHConfig, "ssh-config", "", "with -load-host: ssh configuration file (ssh -F)")
	flag.StringVar(&o.LoadWorker, "load-worker", "", "with -load-host: the worker binary to copy to the client (default: this binary; build one with GOARCH=… go build for a client of another architecture)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "tomcat-tuning: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "\ntomcat-tuning: %v: reverting (signal again to exit at once; journal %s)\n", s, o.Journal)
		cancel()
		s = <-sigs
		fmt.Fprintf(os.Stderr, "tomcat-tuning: %v: exiting without reverting; run -revert -journal %s\n", s, o.Journal)
		os.Exit(130)
	}()

	if persistSteps != "" {
		var err error
		if o.PersistSteps, err = study.ParseSteps(persistSteps); err != nil {
			fmt.Fprintf(os.Stderr, "tomcat-tuning: -persist-steps: %v\n", err)
			os.Exit(2)
		}
	}
	err := run(ctx, os.Stdout, steps, o, revert)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tomcat-tuning: %v\n", err)
		os.Exit(1)
	}
}

// run checks the options, then reverts, or discovers, prints the host and
// plans (measuring a baseline) or applies the study, and prints its
// results.
func run(ctx context.Context, w io.Writer, steps string, o study.Options, revert bool) error {
	var err error
	if o.Steps, err = study.ParseSteps(steps); err != nil {
		return err
	}
	if err := o.Check(); err != nil {
		return err
	}
	if revert {
		return study.Revert(ctx, o.Journal, w)
	}
	if o.Apply {
		fmt.Fprintf(w, "journal: %s\n", o.Journal)
	}
	h, err := study.Discover(ctx, o)
	if err != nil {
		return err
	}
	study.WriteHost(w, h)
	if !o.Apply && o.Export != "" {
		// The guide's plan as files, without measuring or changing anything.
		p, err := study.PlanPersist(h, o, nil, o.Steps)
		if err != nil {
			return err
		}
		files, err := p.Export(h, o.Export)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "exported the plan's persistent files to %s: %s\n", o.Export, strings.Join(files, ", "))
		return nil
	}
	if !o.Apply {
		res, err := study.Plan(ctx, h, o, w)
		if err != nil || len(res.Measured) == 0 {
			return err
		}
		cmp := res.Comparison()
		fmt.Fprint(w, cmp.Text())
		fmt.Fprint(w, res.LoadBoundText())
		fmt.Fprint(w, study.Legend(o, cmp))
		fmt.Fprintln(w, "-apply runs the plan, measuring after each step")
		return nil
	}
	res, runErr := study.Apply(ctx, h, o, w)
	if res.Steps == nil {
		return runErr
	}
	fmt.Fprintln(w, "== Steps ==")
	fmt.Fprint(w, study.FormatResults(res.Steps))
	if len(res.Measured) > 0 {
		fmt.Fprintln(w, "== Step table ==")
		cmp := res.Comparison()
		fmt.Fprint(w, cmp.Text())
		fmt.Fprint(w, res.LoadBoundText())
		fmt.Fprint(w, study.Legend(o, cmp))
		if d, ok := res.Drift(); ok {
			fmt.Fprint(w, d.Text())
		}
		if err := study.WriteOutputs(o, res); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	switch {
	case res.Kept && runErr == nil:
		fmt.Fprintf(w, "changes kept; undo them with -revert -journal %s\n", o.Journal)
	case len(res.Persisted) > 0:
		fmt.Fprintf(w, "every measured change reverted; made persistent: %s (undo them with -revert -journal %s)\n",
			strings.Join(res.Persisted, ", "), o.Journal)
	default:
		if pending := pendingSteps(o.Journal); len(pending) > 0 {
			fmt.Fprintf(w, "reverted, except what the journal still holds (%s): run -revert -journal %s\n", strings.Join(pending, ", "), o.Journal)
		} else {
			fmt.Fprintln(w, "every change reverted")
		}
	}
	return runErr
}

// pendingSteps names the journal's records not reverted (a client's
// worker directory that could not be removed, say).
func pendingSteps(journal string) []string {
	entries, err := tuning.ReadJournal(journal)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.Reverted {
			out = append(out, e.Step)
		}
	}
	return out
}
