//go:build linux

// Command loadgen is a wrk2- and ApacheBench-compatible HTTP/1.1 load
// generator built on the loadgen package.
//
//	loadgen -c1280 -t128 -R500000 -d60 --latency URL   # wrk2: open model, corrected latency
//	loadgen -c64 -d10 URL                              # wrk: closed loop, as fast as it can
//	loadgen ab -k -n 100000 -c 149 URL                 # ApacheBench
//	loadgen                                            # demo against a built-in HelloWorld page
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/loadgen"
)

const usage = `usage: loadgen [-c N] [-t N] [-d T] [-R rate] [-H "Name: value"] [--timeout T] [-L] [-U] [--warmup T] [--slack T] [--json] [URL]
       loadgen ab [-k] [-n N] [-c N] [-t secs] [-s secs] [-H "Name: value"] [-i] [-p file -T type] [--json] URL
Without a URL, loadgen serves Tomcat's HelloWorldExample page on 127.0.0.1 and runs a short demo.`

var demoArgs = []string{"-t2", "-c16", "-R2000", "-d3", "--latency"}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, unix.SIGTERM)
	go func() { <-sig; cancel(); <-sig; os.Exit(130) }() // the first signal stops the run, a second exits
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, loadgen.ErrUsage) {
		fmt.Fprintln(os.Stderr, usage)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run dispatches to the ab mode or the wrk2 mode.
func run(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	if len(args) > 0 && args[0] == "ab" {
		return runAB(ctx, args[1:], stdout, stderr)
	}
	return runWrk(ctx, args, stdout, stderr)
}

func runWrk(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	if len(args) == 0 {
		args = demoArgs
	}
	w, err := loadgen.ParseWrkArgs(args)
	if err != nil || w.Help {
		return errors.Join(err, helpErr(w.Help))
	}
	if w.Config.URL == "" {
		hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer hello.Close()
		w.Config.URL = hello.URL
		fmt.Fprintf(stderr, "no URL: serving Tomcat's HelloWorldExample page at %s\nrunning: loadgen %s %s\n\n", hello.URL, strings.Join(args, " "), hello.URL)
	}
	if !w.JSON {
		loadgen.WriteWrkHeader(stdout, w.Config.URL, w.Config.Duration, w.Config.Threads, w.Config.Connections)
	}
	w.Config.OnInterval = progress(stderr)
	res, err := loadgen.Run(ctx, w.Config)
	if w.Config.OnInterval != nil {
		fmt.Fprint(stderr, "\r\033[K") // clear the progress line
	}
	if err != nil {
		return err
	}
	if w.JSON {
		return loadgen.WriteJSON(stdout, res)
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
	return loadgen.WriteWrk(stdout, res, w.Report)
}

func runAB(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	a, err := loadgen.ParseABArgs(args)
	if err != nil || a.Help || a.Config.URL == "" {
		return errors.Join(err, helpErr(a.Help || err == nil))
	}
	if !a.JSON {
		loadgen.WriteABHeader(stdout, a.Config.URL)
	}
	step := loadgen.ABProgress(a.Config.Requests)
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
		return loadgen.WriteJSON(stdout, res)
	}
	if step > 0 && !a.Quiet {
		fmt.Fprintf(stderr, "Finished %d requests\n", res.Requests)
	}
	return loadgen.WriteAB(stdout, res, a.Config.Connections)
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
			s.TotalErrors, loadgen.FormatTimeUS(float64(s.Cumulative.ValueAtQuantile(99))))
	}
}

func helpErr(help bool) error {
	if help {
		return loadgen.ErrUsage
	}
	return nil
}
