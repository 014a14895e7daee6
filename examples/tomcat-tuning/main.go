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
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nettune/nettune/internal/statedir"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// Defaults of the measurement flags: each step is warmed up until its
// rate stops climbing, then measured by DefaultRepeat saturating runs and
// one run at the common rate, so the study takes a few minutes on a
// 2-core machine.
const (
	// DefaultRate 0 sets the common latency rate to DefaultLatencyShare
	// of the baseline's capacity.
	DefaultRate         = 0
	DefaultLatencyShare = 0.6
	DefaultCapacityRate = loadgen.DefaultCapacityRate
	DefaultRepeat       = 3
	DefaultConnections  = 64
	DefaultDuration     = 5 * time.Second
	DefaultWarmup       = loadgen.DefaultWarmUpMax
	DefaultWarmupStep   = loadgen.DefaultWarmUpInterval
	DefaultCPUs         = 8
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == loadWorkerArg {
		os.Exit(loadWorkerMain())
	}
	var o options
	flag.BoolVar(&o.apply, "apply", false, "run the steps (default: discover, plan and measure a baseline only)")
	flag.BoolVar(&o.revert, "revert", false, "restore everything the journal of an earlier run records, then exit")
	flag.BoolVar(&o.keep, "keep", false, "with -apply: leave the changes in place (revert later with -revert)")
	flag.StringVar(&o.journal, "journal", defaultJournal(), "journal file")
	flag.StringVar(&o.steps, "steps", strings.Join(stepNames, ","), "steps to run, in this order")
	flag.StringVar(&o.home, "catalina-home", "", "Tomcat's CATALINA_HOME (default: $CATALINA_HOME or Debian's)")
	flag.StringVar(&o.base, "catalina-base", "", "Tomcat's CATALINA_BASE (default: $CATALINA_BASE or Debian's)")
	flag.StringVar(&o.port, "port", "", "port of the HTTP Connector to tune (default: the first HTTP/1.1 Connector's)")
	flag.StringVar(&o.url, "url", "", "URL to measure (default: http://127.0.0.1:PORT"+"/examples/servlets/servlet/HelloWorldExample)")
	flag.IntVar(&o.cpus, "cpus", DefaultCPUs, "CPUs to give Tomcat (capped to the host's)")
	flag.StringVar(&o.cpuMethod, "cpu-method", methodHotplug, "how to restrict Tomcat's CPUs: hotplug (the guide's) or affinity")
	flag.Float64Var(&o.capacityRate, "capacity-rate", DefaultCapacityRate, "requests/s offered by each capacity run, far above what Tomcat answers (wrk2 -R)")
	flag.IntVar(&o.repeat, "repeat", DefaultRepeat, "capacity runs per step: the table shows their median and range")
	flag.Float64Var(&o.rate, "rate", DefaultRate, fmt.Sprintf("requests/s of the latency run, common to every step (0: %.0f%% of the baseline's capacity)", 100*DefaultLatencyShare))
	flag.IntVar(&o.connections, "connections", DefaultConnections, "load connections (wrk2 -c)")
	flag.DurationVar(&o.duration, "duration", DefaultDuration, "length of each capacity run and of the latency run (wrk2 -d)")
	flag.DurationVar(&o.warmup, "warmup", DefaultWarmup, "longest warm-up before each step's measurement: closed-loop runs until the rate stops climbing (0: none)")
	flag.DurationVar(&o.warmupStep, "warmup-interval", DefaultWarmupStep, "length of each warm-up run")
	flag.BoolVar(&o.remote, "remote-load", false, "do not load locally: after each step wait for Enter while the load runs from a client machine")
	flag.StringVar(&o.jsonFile, "json", "", "write the steps (status, capacity with its spread, latency at the common rate) as JSON to this file")
	flag.StringVar(&o.plotFile, "plot", "", "write a bar chart of the steps' capacity (median requests/s) to this SVG file")
	flag.StringVar(&o.grub, "grub", "", "GRUB defaults file (default: ROOT/etc/default/grub)")
	flag.StringVar(&o.root, "root", "/", "host root: a fixture or mounted tree for plan mode")
	flag.StringVar(&o.iface, "iface", "", "NIC to tune (default: the interface holding the URL's address)")
	flag.StringVar(&o.loadNetNS, "load-netns", "", "run each load inside this network namespace (ip netns), like the guide's client machine")
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
		fmt.Fprintf(os.Stderr, "\ntomcat-tuning: %v: reverting (signal again to exit at once; journal %s)\n", s, o.journal)
		cancel()
		s = <-sigs
		fmt.Fprintf(os.Stderr, "tomcat-tuning: %v: exiting without reverting; run -revert -journal %s\n", s, o.journal)
		os.Exit(130)
	}()

	if err := run(ctx, os.Stdout, o); err != nil {
		fmt.Fprintf(os.Stderr, "tomcat-tuning: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	apply, revert, keep, remote bool
	journal, steps              string
	home, base, port, url       string
	cpus                        int
	cpuMethod                   string
	rate, capacityRate          float64
	repeat, connections         int
	duration, warmup            time.Duration
	warmupStep                  time.Duration
	jsonFile, plotFile          string
	grub, root, iface           string
	loadNetNS                   string
}

const (
	methodHotplug  = "hotplug"
	methodAffinity = "affinity"
)

// defaultJournal is the study's journal in the state directory
// (internal/statedir): /var/lib/nettune for root.
func defaultJournal() string { return filepath.Join(statedir.Dir(), "tomcat-tuning.journal") }

func run(ctx context.Context, w io.Writer, o options) error {
	if o.cpuMethod != methodHotplug && o.cpuMethod != methodAffinity {
		return fmt.Errorf("-cpu-method %q: want %s or %s", o.cpuMethod, methodHotplug, methodAffinity)
	}
	if o.cpus < 1 {
		return fmt.Errorf("-cpus %d: want 1 or more", o.cpus)
	}
	if err := o.checkMeasure(); err != nil {
		return err
	}
	if o.revert {
		return revert(ctx, w, o.journal)
	}
	if err := checkLoadNetNS(o); err != nil {
		return err
	}
	if o.apply && o.root != "/" {
		return errors.New("-apply changes the running host: it cannot be used with -root")
	}
	st, err := discover(ctx, w, o)
	if err != nil {
		return err
	}
	steps, err := buildSteps(st, o.steps)
	if err != nil {
		return err
	}
	if !o.apply {
		return planOnly(ctx, w, st, steps)
	}
	return applySteps(ctx, w, st, steps)
}

// revert restores what the journal at path records as applied and not
// reverted.
func revert(ctx context.Context, w io.Writer, path string) error {
	fmt.Fprintf(w, "journal: %s\n", path)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("nothing to revert: %w", err)
	}
	rev, closeNIC := reverters(tuning.NewDefault())
	defer closeNIC()
	unit := pendingUnit(path)
	done, err := tuning.RevertJournal(context.WithoutCancel(ctx), path, rev)
	if len(done) == 0 && err == nil {
		fmt.Fprintln(w, "nothing to revert: every change in the journal is already reverted")
	}
	for _, s := range done {
		fmt.Fprintf(w, "reverted %s\n", s)
		switch {
		case s == stepTomcat && unit != "":
			fmt.Fprintf(w, "  (%s stopped with systemctl, and started again with systemctl if it was active before the run)\n", unit)
		case s == stepTomcat:
			fmt.Fprintln(w, "  (the run's JVM stopped; Tomcat started again if it was running before the run)")
		}
	}
	if err != nil {
		return fmt.Errorf("revert (run -revert again once fixed; the journal keeps what is pending): %w", err)
	}
	if !slices.Contains(done, stepTomcat) {
		// (A journal from before the study recorded its Tomcat.)
		fmt.Fprintln(w, "a Tomcat still running has the old configuration loaded: restart it")
	}
	return nil
}
