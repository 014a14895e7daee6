//go:build linux

// Command cpus lists CPUs as lscpu does and keeps only some of them
// online, the seeds' `echo 0 > /sys/devices/system/cpu/cpuN/online` loop,
// with a snapshot to put them back.
//
//	cpus                               # lscpu-like summary
//	cpus -online 0-7                   # dry run: what would change
//	cpus -online 0-7 -apply            # change it; snapshot to cpus-snapshot.json
//	cpus -restore cpus-snapshot.json -apply
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"

	"github.com/nettune/nettune/tuning"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cpus", flag.ContinueOnError)
	root := fs.String("root", "/", "host root holding sys/ (a fixture tree or a mounted image)")
	online := fs.String("online", "", "keep only these CPUs online, e.g. 0-7 or 96-103")
	restore := fs.String("restore", "", "put back the snapshot saved in `FILE`")
	save := fs.String("save", "cpus-snapshot.json", "with -online -apply: save the state before the change to `FILE`")
	apply := fs.Bool("apply", false, "change the host (default: dry run, print what would change)")
	bestEffort := fs.Bool("best-effort", false, "keep what succeeded instead of rolling back on a failure")
	flat := fs.Bool("flat", false, "print the summary flat, as lscpu does into a pipe")
	if err := fs.Parse(args); err != nil {
		return err
	}
	h, err := tuning.New(*root)
	if err != nil {
		return err
	}
	var snap tuning.CPUSnapshot
	switch {
	case *online != "" && *restore != "":
		return errors.New("cpus: -online and -restore exclude each other")
	case *restore != "":
		b, err := os.ReadFile(*restore)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &snap); err != nil {
			return fmt.Errorf("cpus: snapshot %s: %w", *restore, err)
		}
	case *online != "":
		want, err := tuning.ParseCPUList(*online)
		if err != nil {
			return fmt.Errorf("cpus: -online: %w", err)
		}
		snap.Online = want
	default:
		return printSummary(h, out, *flat)
	}

	plan, err := h.PlanKeepOnline(snap.Online)
	if err != nil {
		return err
	}
	fmt.Fprint(out, plan)
	if len(plan.Blocked) > 0 && !*bestEffort && *restore == "" {
		fmt.Fprintln(out, "-apply refuses this change; pass -best-effort to leave those CPUs online")
	}
	if !*apply {
		fmt.Fprintln(out, "dry run: pass -apply to change the host")
		return nil
	}
	if *restore != "" {
		err = h.RestoreCPUs(ctx, snap)
	} else {
		err = keepOnline(ctx, h, snap.Online, *save, *bestEffort, out)
	}
	if perr := printSummary(h, out, *flat); perr != nil && err == nil {
		err = perr
	}
	return err
}

// keepOnline saves the current state to file, then changes it, so a
// crash half-way still leaves the snapshot to restore.
func keepOnline(ctx context.Context, h *tuning.Host, want tuning.CPUSet, file string, bestEffort bool, out io.Writer) error {
	before, err := h.CPUSnapshot()
	if err != nil {
		return err
	}
	b, err := json.Marshal(before)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "saved the previous state to %s\n", file)
	_, err = h.KeepOnline(ctx, want, &tuning.KeepOptions{BestEffort: bestEffort})
	return err
}

func printSummary(h *tuning.Host, out io.Writer, flat bool) error {
	s, err := h.Summary()
	if err != nil {
		return err
	}
	st, err := h.CPUState()
	if err != nil {
		return err
	}
	fmt.Fprint(out, s.Text(&tuning.SummaryOptions{Flat: flat}))
	if fixed := st.Present.Difference(st.Hotpluggable()); !fixed.IsEmpty() {
		fmt.Fprintf(out, "not hot-pluggable: %s\n", tuning.LscpuList(fixed))
	}
	return nil
}
