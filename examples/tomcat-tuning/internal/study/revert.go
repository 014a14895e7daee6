//go:build linux

package study

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// Revert restores what the journal at path records as applied and not
// reverted, newest first, through the packages' own undo (Reverters), and
// prints what it did to log.
func Revert(ctx context.Context, path string, log io.Writer) error {
	fmt.Fprintf(log, "journal: %s\n", path)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("nothing to revert: %w", err)
	}
	unit := pendingUnit(path)
	done, err := tuning.RevertJournal(context.WithoutCancel(ctx), path, Reverters(tuning.NewDefault()))
	if len(done) == 0 && err == nil {
		fmt.Fprintln(log, "nothing to revert: every change in the journal is already reverted")
	}
	for _, s := range done {
		fmt.Fprintf(log, "reverted %s\n", s)
		switch {
		case s == StepTomcat && unit != "":
			fmt.Fprintf(log, "  (%s stopped with systemctl, and started again with systemctl if it was active before the run)\n", unit)
		case s == StepTomcat:
			fmt.Fprintln(log, "  (the run's JVM stopped; Tomcat started again if it was running before the run)")
		}
	}
	if err != nil {
		return fmt.Errorf("revert (run -revert again once fixed; the journal keeps what is pending): %w", err)
	}
	if !slices.Contains(done, StepTomcat) {
		// (A journal from before the study recorded its Tomcat.)
		fmt.Fprintln(log, "a Tomcat still running has the old configuration loaded: restart it")
	}
	return nil
}

// pendingUnit returns the unit of the journal's pending tomcat record when
// the run controlled Tomcat through systemd, else "".
func pendingUnit(path string) string {
	entries, err := tuning.ReadJournal(path)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if e.Step != StepTomcat || e.Reverted {
			continue
		}
		for _, u := range e.Undo {
			var rc tomcatconf.RestartChange
			if u.Kind == KindTomcat && json.Unmarshal(u.Data, &rc) == nil && rc.Control == tomcatconf.ControlSystemd {
				return rc.Service
			}
		}
	}
	return ""
}
