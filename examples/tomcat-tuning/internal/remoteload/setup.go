//go:build linux

package remoteload

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nettune/nettune/loadgen/report"
	"github.com/nettune/nettune/tuning"
)

// SetupOptions says how Connect puts the worker on the clients.
type SetupOptions struct {
	// Worker is the binary copied to every client; "" is this process's
	// own executable, and a client of another architecture then gets a
	// worker built for it from this module's source (WorkerBuilder),
	// when Go and the source are at hand.
	Worker string
	// Journal, when not nil, gets a StepLoadHost record of each client's
	// directory (KindRemoteDir) before anything is copied into it, so a
	// run killed meanwhile leaves the directory to -revert.
	Journal *tuning.Journal
	// JournalPath is the journal's file, named when a directory cannot
	// be removed at the end.
	JournalPath string
	// Log gets a line per client (worker, clock offset) and, with more
	// than one client, how a load is split between them.
	Log io.Writer
}

// Connect puts the worker on each of hosts (SSHClient.Setup), measures
// each client's clock offset (MeasureClock) and returns the Clients that
// run a load on them all, and the function that removes the worker
// directories at the end (marking their journal records reverted). On an
// error the directories already made are removed.
func Connect(ctx context.Context, hosts []*SSHClient, o SetupOptions) (*Clients, func(), error) {
	exe := o.Worker
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			var names []string
			for _, c := range hosts {
				names = append(names, c.Host)
			}
			return nil, nil, fmt.Errorf("the study's binary, to copy to %s: %w", strings.Join(names, ","), err)
		}
	}
	var builder *WorkerBuilder
	if o.Worker == "" {
		out, err := os.MkdirTemp("", "tomcat-tuning-workers-")
		if err != nil {
			return nil, nil, err
		}
		// The builds are removed once copied.
		defer os.RemoveAll(out)
		builder = &WorkerBuilder{Out: out}
	}
	cs := &Clients{Log: o.Log}
	var seqs []int
	done := func() {
		for i, c := range cs.Hosts {
			if err := c.Cleanup(context.Background()); err != nil {
				fmt.Fprintf(o.Log, "remove the worker from %s: %v (-revert -journal %s retries)\n", c.Host, err, o.JournalPath)
				continue
			}
			fmt.Fprintf(o.Log, "removed %s from %s\n", c.Dir, c.Host)
			if o.Journal != nil && seqs[i] >= 0 {
				if err := o.Journal.Reverted(seqs[i]); err != nil {
					fmt.Fprintf(o.Log, "journal: %v\n", err)
				}
			}
		}
	}
	for _, c := range hosts {
		if builder != nil {
			c.Build = builder.Build
		}
		seq, err := setupOne(ctx, c, exe, o.Journal)
		if err != nil {
			done()
			return nil, nil, err
		}
		cs.Hosts, seqs = append(cs.Hosts, c), append(seqs, seq)
		clock, err := c.MeasureClock(ctx)
		if err != nil {
			done()
			return nil, nil, err
		}
		cs.Clocks = append(cs.Clocks, clock)
		logClient(o.Log, c, clock)
	}
	if n := len(cs.Hosts); n > 1 {
		fmt.Fprintf(o.Log, "each load runs on the %d clients together: open-model runs as shards i/%d of one schedule, closed-loop runs (warm-ups) with the connections split; "+
			"a shared start %s ahead, set on each client's clock by its offset; histograms merged, capacity = their responses over the common window\n",
			n, n, report.FormatDuration(cs.Lead()))
	}
	return cs, done, nil
}

// setupOne puts the worker on c, journaling its directory in j (when not
// nil) as soon as it exists; it returns the record's sequence number, -1
// without a journal. On an error Setup has removed the directory and the
// record is marked reverted.
func setupOne(ctx context.Context, c *SSHClient, exe string, j *tuning.Journal) (int, error) {
	seq := -1
	err := c.Setup(ctx, exe, func(c *SSHClient) error {
		if j == nil {
			return nil
		}
		undo, err := tuning.NewUndo(KindRemoteDir, c)
		if err != nil {
			return err
		}
		if seq, err = j.Begin(StepLoadHost, []tuning.Undo{undo}); err != nil {
			return err
		}
		return j.Applied(seq)
	})
	if err != nil {
		if seq >= 0 {
			_ = j.Reverted(seq)
		}
		return -1, err
	}
	return seq, nil
}

// logClient says which worker runs on c and how its clock compares.
func logClient(w io.Writer, c *SSHClient, clock ClockOffset) {
	if c.Built != "" {
		fmt.Fprintf(w, "load generator: %s is not this host's architecture: built its worker from this module's source (%s)\n", c.Host, filepath.Base(c.Built))
	}
	fmt.Fprintf(w, "load generator: client %s over ssh, worker %s (SHA-256 verified); its clock %s against this host's (smallest of %d ssh round trips), session set-up %s\n",
		c.Host, c.Exe(), clock, clockRounds, report.FormatDuration(clock.Setup))
}
