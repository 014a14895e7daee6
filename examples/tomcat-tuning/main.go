//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/tuning"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == remoteload.WorkerArg {
		os.Exit(remoteload.WorkerMain())
	}
	c, err := parseArgs(os.Args[1:], os.Stdout)
	if err != nil {
		cliflag.Exit("tomcat-tuning", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "\ntomcat-tuning: %v: reverting (signal again to exit at once; journal %s)\n", s, c.o.Journal)
		cancel()
		s = <-sigs
		fmt.Fprintf(os.Stderr, "tomcat-tuning: %v: exiting without reverting; run -revert -journal %s\n", s, c.o.Journal)
		os.Exit(130)
	}()
	err = run(ctx, os.Stdout, c)
	cancel()
	cliflag.Exit("tomcat-tuning", err)
}

// run checks the options, then reverts, verifies, or discovers, prints
// the host and plans (-plan: only that; else measuring a baseline) or
// applies the study, and prints its results.
func run(ctx context.Context, w io.Writer, c command) error {
	o := c.o
	switch {
	case c.revert:
		return study.Revert(ctx, o.Journal, w)
	case c.verify:
		return study.Verify(ctx, o.Journal, w)
	case c.plan:
		return planOnly(ctx, w, o)
	}
	if err := o.Check(); err != nil {
		return err
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
		fmt.Fprint(w, study.StepTable(o, res, false))
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
		fmt.Fprint(w, study.StepTable(o, res, o.Wide))
		if err := study.WriteOutputs(o, res); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	switch {
	case res.Kept && runErr == nil:
		fmt.Fprintf(w, "changes kept; undo them with -revert -journal %s\n", o.Journal)
	case len(res.Persisted) > 0:
		fmt.Fprintln(w, persistedLine(res.Persisted, runErr, o.Journal))
	default:
		if pending := pendingSteps(o.Journal); len(pending) > 0 {
			fmt.Fprintf(w, "reverted, except what the journal still holds (%s): run -revert -journal %s\n", strings.Join(pending, ", "), o.Journal)
		} else {
			fmt.Fprintln(w, "every change reverted")
		}
	}
	return runErr
}

// persistedLine says which persistent writes are in force and how to undo
// them: after a run that succeeded, or one that failed once they were
// written (Tomcat not started again, say), which must not read as done.
func persistedLine(persisted []string, runErr error, journal string) string {
	list := strings.Join(persisted, ", ")
	if runErr != nil {
		return fmt.Sprintf("the run failed after -persist wrote %s: they are in force until -revert -journal %s", list, journal)
	}
	return fmt.Sprintf("every measured change reverted; made persistent: %s (undo them with -revert -journal %s)", list, journal)
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
