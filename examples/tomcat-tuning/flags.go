//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/loadgen"
)

const synopsis = `usage: tomcat-tuning [flags]                     discover, plan and measure a baseline; changes nothing
       tomcat-tuning -apply [-keep | -persist] [flags]  run the steps, measuring after each; revert at the end
       tomcat-tuning -plan [-json FILE] [flags]         discover and plan only: every step's change, no load, no JVM
       tomcat-tuning -export DIR [flags]                write the plan's persistent files into DIR; changes nothing
       tomcat-tuning -verify [-journal FILE]            check the host still holds what the journal keeps in force
       tomcat-tuning -revert [-journal FILE]            undo what an earlier run's journal records
A duration is a bare number of seconds (60, as wrk2's -d60) or has a unit (30s, 1m).
Exit status: 0 done, 1 failed, 2 a bad command line (refused before anything runs).`

// command is the parsed command line: the study's options, or -revert,
// -verify or -plan.
type command struct {
	o                    study.Options
	revert, verify, plan bool
}

// parseArgs parses the command line and refuses flag combinations that
// contradict each other or would have no effect (a usage error), before
// anything runs. -h and -version are answered on stdout (flag.ErrHelp).
func parseArgs(args []string, stdout io.Writer) (command, error) {
	c := command{o: study.DefaultOptions()}
	o := &c.o
	fs := cliflag.New("tomcat-tuning", synopsis, stdout)
	steps := strings.Join(o.Steps, ",")
	var persistSteps string
	search := o.Search != study.SearchOff
	fs.BoolVar(&o.Apply, "apply", false, "run the steps, measuring after each (default: discover, plan and measure a baseline only)")
	fs.BoolVar(&c.revert, "revert", false, "restore everything the journal of an earlier run records, then exit; takes only -journal")
	fs.BoolVar(&c.plan, "plan", false, "discover and plan only: print every step's change (CPUs kept, server.xml diffs, ethtool channels, drop-ins, GRUB lines) and write -json; no load, no JVM started, nothing changed")
	fs.BoolVar(&c.verify, "verify", false, "check that the host still holds every change the journal keeps in force (-persist's files, a -keep run's state): each as expected/found; exit 0 when all hold, 1 otherwise; takes only -journal")
	fs.BoolVar(&o.Keep, "keep", false, "with -apply: leave the changes in place (revert later with -revert)")
	fs.StringVar(&o.Journal, "journal", o.Journal, "journal `file` of -apply, -verify and -revert")
	fs.StringVar(&steps, "steps", steps, "steps to run, in this order: the guide's (iommu,cpus,open-files,access-log,threads,nic-queues,numa-local) and your own, sysctl:NAME=VALUE, jvm:OPTION, connector:ATTR=VALUE, irq:spread, tuned:PROFILE (a comma inside a step is written \\,)")
	fs.StringVar(&o.Home, "catalina-home", "", "Tomcat's CATALINA_HOME (default: $CATALINA_HOME or Debian's)")
	fs.StringVar(&o.Base, "catalina-base", "", "Tomcat's CATALINA_BASE (default: $CATALINA_BASE or Debian's)")
	fs.StringVar(&o.Port, "port", "", "port of the HTTP Connector to tune (default: the first HTTP/1.1 Connector's)")
	fs.StringVar(&o.URL, "url", "", "URL to measure (default: http://127.0.0.1:PORT"+loadgen.HelloWorldPath+")")
	fs.StringVar(&o.TargetsFile, "targets", "", "the requests to send, a `file` in vegeta's targets format (METHOD URL, header lines, @body; a blank line between), round-robin on each connection, instead of a GET of -url; every target's URL on -url's scheme, host and port (without -url, the first target's URL is the study's)")
	fs.IntVar(&o.CPUs, "cpus", o.CPUs, "CPUs to give Tomcat (capped to the host's)")
	fs.StringVar(&o.CPUMethod, "cpu-method", o.CPUMethod, "how to restrict Tomcat's CPUs: "+study.MethodAuto+" ("+study.MethodAffinity+" when the load runs on this host, the CPUs split between Tomcat and the load; "+
		study.MethodHotplug+" with -load-host, as the guide does), "+study.MethodHotplug+" (the guide's: the other CPUs offline) or "+study.MethodAffinity+" (the JVM pinned)")
	fs.Float64Var(&o.CapacityRate, "capacity-rate", o.CapacityRate, "requests/s offered by each capacity run, far above what Tomcat answers: the guide's wrk2 -R")
	fs.IntVar(&o.Repeat, "repeat", o.Repeat, "capacity runs per step: the table shows their median and range, and tests each uplift on them")
	fs.Float64Var(&o.Alpha, "alpha", o.Alpha, "significance level of the uplifts' Mann-Whitney U test (benchstat's -alpha)")
	fs.BoolVar(&search, "search", search, "measure candidates where the guide applies a rule (maxThreads: CPUs-1, the census, 2x and 4x CPUs, the pool before; NIC queues: 1, CPUs/2, CPUs, the maximum) and keep the best; -search=false applies the guide's rules exactly")
	var threadValues, queueValues string
	fs.StringVar(&threadValues, "threads-candidates", "", "with -search: the maxThreads `values` measured beside the guide's rule and the pool before, comma-separated (16,32,64), in place of the census's and 2x and 4x CPUs")
	fs.StringVar(&queueValues, "queues-candidates", "", "with -search: the NIC queue `counts` measured beside the guide's rule and the count before, comma-separated (4,8), in place of 1, CPUs/2 and the maximum (capped at the device's)")
	fs.Float64Var(&o.Rate, "latency-rate", o.Rate, fmt.Sprintf("requests/s of the latency run, one rate common to every step, below capacity; not the guide's wrk2 -R, which is -capacity-rate (0: %.0f%% of the baseline's capacity)", 100*study.DefaultLatencyShare))
	fs.IntVar(&o.Connections, "connections", o.Connections, fmt.Sprintf("load connections (wrk2 -c); 0 sizes the load to the server: from Tomcat's CPUs at the guide's -c%d for %d CPUs, doubled on the baseline while the capacity grows beyond the noise band, up to %d× the start (at most %d)",
		study.GuideConnections, study.GuideCPUs, 1<<study.SizingDoublings, study.MaxSizedConnections))
	cliflag.DurationVar(fs, &o.Duration, "duration", o.Duration, "length of each capacity run and of the latency run, a `duration` (wrk2 -d: 60 is 60s)")
	cliflag.DurationVar(fs, &o.WarmUp, "warmup", o.WarmUp, "longest warm-up before each step's measurement, a `duration`: closed-loop runs until the rate stops climbing (0: none)")
	cliflag.DurationVar(fs, &o.WarmUpStep, "warmup-interval", o.WarmUpStep, "length of each warm-up run, a `duration`")
	fs.StringVar(&o.JSONFile, "json", "", "with -plan: write the host and the planned steps with their changes; with -apply: write the steps (status, capacity with its spread, latency at the common rate) as JSON to this `file`")
	fs.StringVar(&o.PlotFile, "plot", "", "with -apply: write a bar chart of the steps' capacity (median requests/s), and beside it their CPU time per request stacked by where it went, to this SVG `file`")
	fs.BoolVar(&o.Wide, "wide", false, fmt.Sprintf("with -apply: print the step table with every column (each uplift's interval and p, p50, max, p99's change, the JVM's CPU) instead of the %d-column table", study.TableWidth))
	fs.StringVar(&o.Grub, "grub", "", "GRUB defaults `file` (default: ROOT/etc/default/grub)")
	fs.StringVar(&o.Root, "root", o.Root, "host root: a fixture or mounted `tree` for plan mode (nothing is measured there)")
	fs.StringVar(&o.Iface, "iface", "", "NIC to tune (default: the interface holding the URL's address)")
	fs.BoolVar(&o.Persist, "persist", false, "with -apply: make the steps that gained significantly survive a reboot (a tuned profile, or systemd pieces; the unit's drop-in; server.xml), journaled for -revert")
	fs.StringVar(&persistSteps, "persist-steps", "", "with -persist or -export: the steps to keep (default: the steps that gained significantly, and the baseline's; without -apply, the guide's plan)")
	fs.StringVar(&o.Export, "export", "", "write the persistent files (tuned profile, drop-in, server.xml diff, README) into this `folder`, changing nothing on the host; without -apply, the guide's plan, unmeasured")
	fs.StringVar(&o.LoadNetNS, "load-netns", "", "run each load inside this network namespace (ip netns), through a veth as from a client machine, but on this host's CPUs")
	fs.BoolVar(&o.LoadSharesCPUs, "load-shares-cpus", false, "with -apply: measure even though the load on this host runs on Tomcat's CPUs (hotplug, or affinity with no CPU left), which is otherwise refused; every figure is marked")
	fs.StringVar(&o.LoadHost, "load-host", "", "run each load on this client machine, [USER@]HOST[:PORT], through ssh (BatchMode, known host keys only), as the guide's wrk2 client, or on several, comma-separated (one shard each, merged); needs -url with an address they reach")
	fs.StringVar(&o.SSHConfig, "ssh-config", "", "with -load-host: ssh configuration `file` (ssh -F)")
	fs.StringVar(&o.LoadWorker, "load-worker", "", "with -load-host: the worker binary to copy to the client (default: this binary; build one with GOARCH=… go build for a client of another architecture)")
	var studyFile string
	fs.StringVar(&studyFile, "study", "", "a JSON `file` of flag names and values for a study run often (README: a study file); the command line's flags override it")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := fs.NoArgs(); err != nil {
		return c, err
	}
	if studyFile != "" {
		if err := fs.SetFromFile(studyFile, "study", "revert", "verify"); err != nil {
			return c, err
		}
		// Again, over the file's values: the command line wins.
		if err := fs.Parse(args); err != nil {
			return c, err
		}
	}
	if !search {
		o.Search = study.SearchOff
	}
	if err := refuse(fs.Given(), c); err != nil {
		return c, cliflag.Usage(err)
	}
	var err error
	if o.Steps, err = study.ParseSteps(steps); err != nil {
		return c, cliflag.Usage(err)
	}
	if o.TargetsFile != "" {
		if o.Targets, err = loadgen.ReadTargets(o.TargetsFile); err != nil {
			return c, cliflag.Usagef("-targets: %w", err)
		}
		if o.URL == "" && len(o.Targets) > 0 && !strings.HasPrefix(o.Targets[0].URL, "/") {
			o.URL = o.Targets[0].URL
		}
	}
	if o.ThreadCandidates, err = study.ParseCandidates("threads-candidates", threadValues, study.MaxThreadCandidate); err != nil {
		return c, cliflag.Usage(err)
	}
	if o.QueueCandidates, err = study.ParseCandidates("queues-candidates", queueValues, study.MaxQueueCandidate); err != nil {
		return c, cliflag.Usage(err)
	}
	if persistSteps != "" {
		if o.PersistSteps, err = study.ParseSteps(persistSteps); err != nil {
			return c, cliflag.Usagef("-persist-steps: %w", err)
		}
	}
	return c, nil
}

// measureFlags shape the measurement: without one (-export alone, a
// fixture -root) they would change nothing.
var measureFlags = []string{"capacity-rate", "repeat", "alpha", "latency-rate", "connections", "duration", "warmup", "warmup-interval", "load-netns", "load-host", "targets"}

// refuse returns the first flag combination of the command line that
// contradicts itself or would have no effect, naming the flags: those
// told by which flags were given. What the options' values tell alone
// (-persist without -apply, -ssh-config without -load-host, -apply with a
// fixture -root, ...) study.Options.Check refuses, also a usage error.
func refuse(given cliflag.Given, c command) error {
	o := c.o
	if c.revert {
		if other := given.Other("revert", "journal"); other != "" {
			return fmt.Errorf("-revert restores what the journal of an earlier run records and takes only -journal: drop -%s", other)
		}
		return nil
	}
	if c.verify {
		if other := given.Other("verify", "journal"); other != "" {
			return fmt.Errorf("-verify checks the host against the journal of an earlier run and takes only -journal: drop -%s", other)
		}
		return nil
	}
	if c.plan {
		return refusePlan(given, o)
	}
	if !o.Apply {
		for _, n := range []struct{ flag, why string }{
			{"keep", "-keep leaves -apply's changes in place: give -apply too"},
			{"load-shares-cpus", "-load-shares-cpus lets -apply measure with the load on Tomcat's CPUs: give -apply too (plan mode changes no CPU)"},
			{"json", "-json writes the step table of -apply or the plan of -plan: give one of them (plan mode measures only a baseline)"},
			{"plot", "-plot draws the step table of -apply: give -apply too (plan mode measures only a baseline)"},
			{"wide", "-wide prints the step table of -apply with every column: give -apply too (plan mode measures only a baseline)"},
		} {
			if given[n.flag] {
				return fmt.Errorf("%s", n.why)
			}
		}
	}
	switch {
	case given["persist-steps"] && !o.Persist && o.Export == "":
		return fmt.Errorf("-persist-steps chooses the steps -persist or -export keeps: give one of them")
	case given["warmup-interval"] && o.WarmUp == 0:
		return fmt.Errorf("-warmup-interval sets the length of the warm-up runs, and -warmup is 0 (none): drop one")
	}
	for _, name := range measureFlags {
		switch {
		case !given[name]:
		case !o.Live():
			return fmt.Errorf("-%s: nothing is measured on a fixture -root (plan mode only prints the plan)", name)
		case o.Export != "" && !o.Apply:
			return fmt.Errorf("-%s: -export without -apply writes the guide's plan and measures nothing (give -apply to measure first)", name)
		}
	}
	switch {
	case given["search"] && o.Export != "" && !o.Apply:
		return fmt.Errorf("-search: -export without -apply writes the guide's rules, unmeasured: nothing to search (give -apply to measure first)")
	case (given["threads-candidates"] || given["queues-candidates"]) && o.Export != "" && !o.Apply:
		return fmt.Errorf("-threads-candidates, -queues-candidates: -export without -apply writes the guide's rules, unmeasured: nothing to search (give -apply to measure first)")
	case (given["threads-candidates"] || given["queues-candidates"]) && o.Search == study.SearchOff:
		return fmt.Errorf("-threads-candidates and -queues-candidates are measured by the search: drop -search=false")
	case given["journal"] && !o.Apply:
		return fmt.Errorf("-journal names the journal of -apply, -verify and -revert: without one of them nothing is journaled")
	}
	return nil
}

// planRefused are the flags -plan refuses: what would run, keep or write
// the plan (it only prints it), and what shapes a measurement it does
// not make; -load-host and -load-netns change the plan (where the load
// runs), so they stay.
var planRefused = append([]string{"apply", "keep", "persist", "persist-steps", "export", "plot", "wide", "journal", "load-shares-cpus"}, measureFlags...)

// refusePlan refuses the flags -plan has no use for, naming them.
func refusePlan(given cliflag.Given, o study.Options) error {
	for _, name := range planRefused {
		switch {
		case !given[name]:
		case name == "load-host" || name == "load-netns":
			if !o.Live() {
				return fmt.Errorf("-%s: nothing is measured on a fixture -root (plan mode only prints the plan)", name)
			}
		case slices.Contains(measureFlags, name):
			return fmt.Errorf("-plan measures nothing: drop -%s (it shapes -apply's measurement)", name)
		default:
			return fmt.Errorf("-plan only prints the plan (and writes -json): drop -%s, or drop -plan to run it", name)
		}
	}
	return nil
}
