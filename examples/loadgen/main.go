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

const usage = `usage: loadgen [-c N] [-t N] [-d T] [-R rate] [-H "Name: value"] [--timeout T] [-L] [-U] [--json] [URL]
       loadgen ab [-k] [-n N] [-c N] [-t secs] [-s secs] [-H "Name: value"] [-i] [-p file -T type] [--json] URL
Without a URL, loadgen serves Tomcat's HelloWorldExample page on 127.0.0.1 and runs a short demo.`

var demoArgs = []string{"-t2", "-c16", "-R2000", "-d3", "--latency"}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, unix.SIGTERM)
	go func() { <-sig; cancel(); <-sig; os.Exit(130) }() // the first signal stops the run, a second exits
	var err error
	if len(os.Args) > 1 && os.Args[1] == "ab" {
		err = runAB(ctx, os.Args[2:])
	} else {
		err = runWrk(ctx, os.Args[1:])
	}
	if errors.Is(err, loadgen.ErrUsage) {
		fmt.Fprintln(os.Stderr, usage)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func runWrk(ctx context.Context, args []string) error {
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
		fmt.Fprintf(os.Stderr, "no URL: serving Tomcat's HelloWorldExample page at %s\nrunning: loadgen %s %s\n\n", hello.URL, strings.Join(args, " "), hello.URL)
	}
	if !w.JSON {
		loadgen.WriteWrkHeader(os.Stdout, w.Config.URL, w.Config.Duration, w.Config.Threads, w.Config.Connections)
	}
	w.Config.OnInterval = progress(os.Stderr, nil)
	res, err := loadgen.Run(ctx, w.Config)
	if err != nil {
		return err
	}
	if w.JSON {
		return loadgen.WriteJSON(os.Stdout, res)
	}
	if res.Threads != w.Config.Threads {
		fmt.Fprintf(os.Stderr, "note: %d event loops used for -t%d (at most %d on this machine)\n", res.Threads, w.Config.Threads, res.Threads)
	}
	for _, e := range res.Errors.Errnos {
		fmt.Fprintf(os.Stderr, "  %s errors: %d %s\n", e.Class, e.Count, e.Errno)
	}
	if res.Missed > 0 {
		fmt.Fprintf(os.Stderr, "  %d requests due in the run were never sent (all connections busy): add connections\n", res.Missed)
	}
	return loadgen.WriteWrk(os.Stdout, res, w.Report)
}

func runAB(ctx context.Context, args []string) error {
	a, err := loadgen.ParseABArgs(args)
	if err != nil || a.Help || a.Config.URL == "" {
		return errors.Join(err, helpErr(a.Help || err == nil))
	}
	if !a.JSON {
		loadgen.WriteABHeader(os.Stdout, a.Config.URL)
	}
	step := loadgen.ABProgress(a.Config.Requests)
	if !a.Quiet && !a.JSON && step > 0 {
		next := step
		a.Config.Interval = 100 * time.Millisecond
		a.Config.OnInterval = func(s loadgen.Snapshot) {
			for ; int64(s.TotalRequests) >= next; next += step {
				fmt.Fprintf(os.Stderr, "Completed %d requests\n", next)
			}
		}
	}
	res, err := loadgen.Run(ctx, a.Config)
	if err != nil {
		return err
	}
	if a.JSON {
		return loadgen.WriteJSON(os.Stdout, res)
	}
	if step > 0 && !a.Quiet {
		fmt.Fprintf(os.Stderr, "Finished %d requests\n", res.Requests)
	}
	return loadgen.WriteAB(os.Stdout, res, a.Config.Connections)
}

// progress returns an interval callback that keeps one live line on a
// terminal (elapsed, req/s, errors, p99 so far); it is silent when w is
// not a terminal.
func progress(w *os.File, _ io.Writer) func(loadgen.Snapshot) {
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
