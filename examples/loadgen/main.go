//go:build linux

// Command loadgen is a wrk2- and ApacheBench-compatible HTTP/1.1 load
// generator built on the loadgen package.
//
//	loadgen -c1280 -t128 -R500000 -d60 --latency URL   # wrk2: open model, corrected latency
//	loadgen -c64 -d10 URL                              # wrk: closed loop, as fast as it can
//	loadgen ab -k -n 100000 -c 149 URL                 # ApacheBench
//	loadgen sweep -c 20,40,60,80 -d30 --process java URL  # a load sweep, as the IBM study
//	loadgen -R30k -d60 -shard 1/3 -start-at 2026-12-02T18:00:00Z -hlog s1.hlog URL
//	loadgen merge -o all.hlog s0.hlog s1.hlog s2.hlog  # one load from several machines
//	loadgen compare base=base.json iommu=step1.json   # uplift against a baseline (--json results)
//	loadgen                                            # demo against a built-in HelloWorld page
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
	"time"

	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// usage is the synopsis -h prints before the options of the mode asked
// about; examples/loadgen/README.md shows it verbatim (a test checks).
const usage = `usage: loadgen [-c N] [-t N] [-d T] [-R N] [-H HEADER] [-m METHOD] [--body S | --body-file FILE] [-T T] [-L] [-U] [--warmup T]
               [--slack T] [--ok-status LIST] [--json] [--hlog FILE] [--plot FILE.svg] [--shard i/n] [--start-at TIME] [--insecure]
               [URL | --targets FILE]
       loadgen sweep (-c 8,16,32,64 | -R 1k,2k,4k [-c N] [--slack T]) [-t N] [-d T] [--warmup T] [-H HEADER] [-m METHOD] [--body S] [-T T]
               [--pid N | --process NAME] [--json] [--plot FILE.svg] [URL]
       loadgen merge [-o merged.hlog] [--tag TAG] a.hlog b.hlog ...
       loadgen compare [--cpu P,P,...] [--json] [--plot FILE.svg] [NAME=]base.json [NAME=]step.json ...
       loadgen ab [-k] [-n N] [-c N] [-t T] [-s T] [-H HEADER] [-m METHOD] [-i | -p FILE | -u FILE] [-T TYPE] [-q] [--json] URL
       loadgen -h | -v | ab -h | ab -V | sweep -h | merge -h | compare -h
Without a URL, loadgen serves Tomcat's HelloWorldExample page on 127.0.0.1 and runs a short demo.
A time T is a bare number of seconds (60, as wrk2's -d60) or has a unit (30s, 1m); a count N takes SI suffixes (500k).
Long options take one dash or two (-hlog FILE, --hlog=FILE). Exit status: 0 done, 1 failed, 2 a bad command line.`

var demoArgs = []string{"-t2", "-c16", "-R2000", "-d3", "--latency"}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, unix.SIGTERM)
	go func() { <-sig; cancel(); <-sig; os.Exit(130) }() // the first signal stops the run, a second exits
	cliflag.Exit("loadgen", run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to the ab mode or the wrk2 mode.
func run(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	if len(args) > 0 {
		switch args[0] {
		case "ab":
			return runAB(ctx, args[1:], stdout, stderr)
		case "sweep":
			return runSweep(ctx, args[1:], stdout, stderr)
		case "merge":
			return runMerge(args[1:], stdout)
		case "compare":
			return runCompare(args[1:], stdout, stderr)
		}
	}
	return runWrk(ctx, args, stdout, stderr)
}

func runWrk(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	if len(args) == 0 {
		args = demoArgs
	}
	w, err := parseWrkArgs(args)
	if err != nil || w.Help || w.Version {
		return answer(err, stdout, w.Help, w.Version, "wrk2 mode", wrkSpecs)
	}
	if w.Config.URL == "" && len(w.Config.Targets) == 0 {
		hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer hello.Close()
		w.Config.URL = hello.URL
		fmt.Fprintf(stderr, "no URL: serving Tomcat's HelloWorldExample page at %s\nrunning: loadgen %s %s\n\n", hello.URL, strings.Join(args, " "), hello.URL)
	}
	if !w.JSON {
		report.WriteWrkHeader(stdout, w.label(), w.Config.Duration, w.Config.Threads, w.Config.Connections)
	}
	prog := progress(stderr)
	w.Config.OnInterval = prog
	var hlog *report.HlogRecorder
	if w.Hlog != "" {
		f, err := os.Create(w.Hlog)
		if err != nil {
			return err
		}
		defer f.Close()
		hlog = report.NewHlogRecorder(f, "loadgen "+strings.Join(args, " "))
		w.Config.OnInterval = both(hlog.Record, w.Config.OnInterval)
	}
	if w.Config.Shards > 1 {
		fmt.Fprintf(stderr, "shard %d/%d: %g of %g requests/s\n", w.Config.Shard, w.Config.Shards, w.Config.Rate/float64(w.Config.Shards), w.Config.Rate)
	}
	res, err := loadgen.Run(ctx, w.Config)
	if prog != nil {
		fmt.Fprint(stderr, "\r\033[K") // clear the progress line
	}
	if err != nil {
		return err
	}
	if hlog != nil {
		if err := hlog.Err(); err != nil {
			return fmt.Errorf("%s: %w", w.Hlog, err)
		}
	}
	if w.Plot != "" {
		if err := writeRunPlot(w.Plot, w.label(), res); err != nil {
			return err
		}
	}
	if w.JSON {
		return report.WriteJSON(stdout, res)
	}
	if res.Threads != w.Config.Threads {
		fmt.Fprintf(stderr, "note: %d event loops used for -t%d (at most %d on this machine)\n", res.Threads, w.Config.Threads, res.Threads)
	}
	for _, e := range res.Errors.Errnos {
		fmt.Fprintf(stderr, "  %s errors: %d %s\n", e.Class, e.Count, e.Errno)
	}
	if res.Missed > 0 {
		fmt.Fprintf(stderr, "  %d requests due in the run were never sent (all connections busy): add connections\n", res.Missed)
	}
	if t := res.TLS; t.Handshakes > 0 {
		fmt.Fprintf(stderr, "  %s %s: %d handshakes, %d resumed\n", t.Version, t.CipherSuite, t.Handshakes, t.Resumed)
	}
	return report.WriteWrk(stdout, res, w.Report)
}

func runAB(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	a, err := parseABArgs(args)
	if err == nil && !a.Help && !a.Version && a.Config.URL == "" {
		err = cliflag.Usagef("ab: give the URL to load")
	}
	if err != nil || a.Help || a.Version {
		return answer(err, stdout, a.Help, a.Version, "ab mode", abSpecs)
	}
	if !a.JSON {
		report.WriteABHeader(stdout, a.Config.URL)
	}
	step := abProgress(a.Config.Requests)
	if !a.Quiet && !a.JSON && step > 0 {
		next := step
		a.Config.Interval = 100 * time.Millisecond
		a.Config.OnInterval = func(s loadgen.Snapshot) {
			for ; int64(s.TotalRequests) >= next; next += step {
				fmt.Fprintf(stderr, "Completed %d requests\n", next)
			}
		}
	}
	res, err := loadgen.Run(ctx, a.Config)
	if err != nil {
		return err
	}
	if a.JSON {
		return report.WriteJSON(stdout, res)
	}
	if step > 0 && !a.Quiet {
		fmt.Fprintf(stderr, "Finished %d requests\n", res.Requests)
	}
	return report.WriteAB(stdout, res, a.Config.Connections)
}

func runSweep(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	a, err := parseSweepArgs(args)
	if err != nil || a.Help {
		return answer(err, stdout, a.Help, false, "sweep", sweepSpecs)
	}
	if a.Sweep.Base.URL == "" {
		hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer hello.Close()
		a.Sweep.Base.URL = hello.URL
		a.Sweep.PID = os.Getpid()
		fmt.Fprintf(stderr, "no URL: sweeping Tomcat's HelloWorldExample page served by this process at %s\n", hello.URL)
	}
	if a.Process != "" && a.Sweep.PID == 0 {
		pids, err := loadgen.FindProcess(a.Sweep.Root, a.Process)
		if err != nil || len(pids) != 1 {
			return errors.Join(err, fmt.Errorf("--process %s: found processes %v: want exactly one; give --pid", a.Process, pids))
		}
		a.Sweep.PID = pids[0]
	}
	a.Sweep.OnLevel = func(l loadgen.SweepLevel) {
		fmt.Fprintf(stderr, "%-8s %10.2f req/s  mean %-8s p99 %-8s CPU %.1f%%\n", l.Name, l.Throughput, report.FormatDuration(l.Mean), report.FormatDuration(l.P99), l.CPU)
	}
	res, err := loadgen.Sweep(ctx, a.Sweep)
	if err != nil {
		return err
	}
	if a.Plot != "" {
		files, err := writeSweepPlots(a.Plot, "loadgen sweep", res)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "plots: %s\n", strings.Join(files, ", "))
	}
	if a.JSON {
		b, err := res.JSON()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	_, err = io.WriteString(stdout, res.Text())
	return err
}

func runMerge(args []string, stdout io.Writer) error {
	a, err := parseMergeArgs(args)
	if err != nil || a.Help {
		return answer(err, stdout, a.Help, false, "merge", mergeSpecs)
	}
	m, err := mergeHlogFiles(a.Out, a.Tag, a.Files...)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, m.Summary(a.Files, a.Tag))
	return err
}

func runCompare(args []string, stdout io.Writer, stderr *os.File) error {
	a, err := parseCompareArgs(args)
	if err != nil || a.Help {
		return answer(err, stdout, a.Help, false, "compare", compareSpecs)
	}
	c, series, err := compareFiles(a.Runs, a.CPU)
	if err != nil {
		return err
	}
	if a.Plot != "" {
		files, err := writeComparePlots(a.Plot, "loadgen compare", c, series)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "plots: %s\n", strings.Join(files, ", "))
	}
	if a.JSON {
		b, err := c.JSON()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	_, err = io.WriteString(stdout, c.Text())
	return err
}

// both calls f and then g, skipping a nil g.
func both(f, g func(loadgen.Snapshot)) func(loadgen.Snapshot) {
	if g == nil {
		return f
	}
	return func(s loadgen.Snapshot) { f(s); g(s) }
}

// progress returns an interval callback that keeps one live line on a
// terminal (elapsed, req/s, errors, p99 so far); it is silent when w is
// not a terminal.
func progress(w *os.File) func(loadgen.Snapshot) {
	if _, err := unix.IoctlGetTermios(int(w.Fd()), unix.TCGETS); err != nil {
		return nil
	}
	return func(s loadgen.Snapshot) {
		secs := (s.End - s.Start).Seconds()
		fmt.Fprintf(w, "\r\033[K  %5.1fs  %9.0f req/s  errors %d  p99 %s", s.End.Seconds(), float64(s.Requests)/secs,
			s.TotalErrors, report.FormatTimeUS(float64(s.Cumulative.ValueAtQuantile(99))))
	}
}

// answer ends a mode that will not run: it returns a parse error, or
// prints -h's synopsis and the mode's options, or -v's version, and
// returns flag.ErrHelp (exit status 0).
func answer(err error, w io.Writer, help, version bool, mode string, specs []optSpec) error {
	switch {
	case err != nil:
		return err
	case version:
		_, err = io.WriteString(w, cliflag.Version("loadgen"))
	default:
		if _, err = fmt.Fprintf(w, "%s\n\n%s options:\n", usage, mode); err == nil {
			err = writeOptions(w, specs)
		}
	}
	if err != nil {
		return err
	}
	return flag.ErrHelp
}
