//go:build linux

// Command cpus lists CPUs as lscpu does and keeps only some of them
// online, the Arm Tomcat guide's `echo 0 > /sys/devices/system/cpu/cpuN/online`
// loop, with a snapshot to put them back.
//
//	cpus                     # lscpu-like summary
//	cpus -online 0-7         # dry run: what would change
//	cpus -online 0-7 -apply  # change it; the state before goes to a new snapshot file
//	cpus -restore /var/lib/nettune/cpus-snapshot-20261203T080000Z-1234.json -apply
//
// Each -apply of -online writes the state before the change to a new file
// in -snapshot-dir (by default where the tomcat-tuning study keeps its
// journal: /var/lib/nettune as root, else $XDG_STATE_HOME/nettune or
// ~/.local/state/nettune), named after the time and never overwriting an
// earlier one, and prints its path.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/internal/statedir"
	"github.com/nettune/nettune/tuning"
)

const synopsis = `usage: cpus [-root DIR] [-flat]                    lscpu-like summary
       cpus -online CPUS [-best-effort] [-apply [-snapshot-dir DIR]]
       cpus -restore FILE [-apply]
Changes are a dry run without -apply. Exit status: 0 done, 1 failed, 2 a bad command line.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	cliflag.Exit("cpus", err)
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cliflag.New("cpus", synopsis, out)
	root := fs.String("root", "/", "host root holding sys/ (a fixture tree or a mounted image)")
	online := fs.String("online", "", "keep only these CPUs online, e.g. 0-7 or 96-103")
	restore := fs.String("restore", "", "put back the snapshot saved in `FILE`")
	snapDir := fs.String("snapshot-dir", statedir.Dir(), "with -online -apply: save the state before the change to a new file in `DIR`")
	apply := fs.Bool("apply", false, "change the host (default: dry run, print what would change)")
	bestEffort := fs.Bool("best-effort", false, "keep what succeeded instead of rolling back on a failure")
	flat := fs.Bool("flat", false, "print the summary flat, as lscpu does into a pipe")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	if err := refuse(fs.Given()); err != nil {
		return err
	}
	h, err := tuning.New(*root)
	if err != nil {
		return err
	}
	var snap tuning.CPUSnapshot
	switch {
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
			return cliflag.Usagef("-online: %w", err)
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
		err = keepOnline(ctx, h, snap.Online, *snapDir, *bestEffort, out)
	}
	if perr := printSummary(h, out, *flat); perr != nil && err == nil {
		err = perr
	}
	return err
}

// refuse returns the first contradictory or pointless combination of the
// flags given.
func refuse(given cliflag.Given) error {
	change := given["online"] || given["restore"]
	switch {
	case given["online"] && given["restore"]:
		return cliflag.Usagef("-online and -restore exclude each other")
	case given["apply"] && !change:
		return cliflag.Usagef("-apply makes the change of -online or -restore: give one of them")
	case given["best-effort"] && !given["online"]:
		return cliflag.Usagef("-best-effort is about the CPUs -online takes offline: give -online")
	case given["snapshot-dir"] && !(given["online"] && given["apply"]):
		return cliflag.Usagef("-snapshot-dir is where -online -apply saves the state before: give both")
	case given["flat"] && change && !given["apply"]:
		return cliflag.Usagef("-flat formats the summary, which a dry run of -online or -restore does not print")
	}
	return nil
}

// keepOnline saves the current state to a new file in dir, then changes
// it, so a crash half-way still leaves the snapshot to restore.
func keepOnline(ctx context.Context, h *tuning.Host, want tuning.CPUSet, dir string, bestEffort bool, out io.Writer) error {
	before, err := h.CPUSnapshot()
	if err != nil {
		return err
	}
	path, err := saveSnapshot(dir, before, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "saved the previous state to %s\nput it back with: cpus -restore %s -apply\n", path, path)
	_, err = h.KeepOnline(ctx, want, &tuning.KeepOptions{BestEffort: bestEffort})
	return err
}

// saveSnapshot writes snap to a new file in dir (created if missing),
// cpus-snapshot-<UTC time>-<unique>.json, and returns its path. The file
// is created exclusively, so an earlier snapshot is never overwritten.
func saveSnapshot(dir string, snap tuning.CPUSnapshot, now time.Time) (string, error) {
	b, err := json.Marshal(snap)
	if err != nil {
		return "", fmt.Errorf("cpus: snapshot: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cpus: snapshot folder: %w", err)
	}
	f, err := os.CreateTemp(dir, "cpus-snapshot-"+now.UTC().Format("20060102T150405Z")+"-*.json")
	if err != nil {
		return "", fmt.Errorf("cpus: new snapshot file in %s: %w", dir, err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("cpus: write snapshot %s: %w", f.Name(), err)
	}
	return f.Name(), nil
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
		fmt.Fprintf(out, "not hot-pluggable: %s\n", fixed.Lscpu())
	}
	return nil
}
