//go:build linux

package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
	unit, bases := pendingUnit(path), serverXMLBases(path)
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
	switch {
	case errors.Is(err, tuning.ErrJournalLocked):
		// A live run owns it: reverting under it would undo its files
		// and stop its JVM.
		return fmt.Errorf("not reverted: %w", err)
	case errors.Is(err, tuning.ErrTornJournal):
		return fmt.Errorf("revert: the journal holds a cut record (what it says was reverted; check the rest by hand): %w", err)
	case err != nil:
		return fmt.Errorf("revert (run -revert again once fixed; the journal keeps what is pending): %w", err)
	}
	if !slices.Contains(done, StepTomcat) {
		// (A journal from before the study recorded its Tomcat.) Only a
		// JVM that runs has the old configuration loaded.
		for _, base := range bases {
			jvms, err := (&tomcatconf.Instance{Base: base}).JVMs()
			if err != nil || len(jvms) == 0 {
				continue
			}
			var pids []string
			for _, j := range jvms {
				pids = append(pids, strconv.Itoa(j.PID))
			}
			how := "restart it"
			if u := journalUnit(path); u != "" {
				how = "restart it: systemctl restart " + u
			}
			fmt.Fprintf(log, "Tomcat of %s still runs (JVM %s) with the configuration the journal reverted loaded: %s\n", base, strings.Join(pids, ", "), how)
		}
	}
	return nil
}

// serverXMLBases returns the CATALINA_BASEs whose server.xml the journal's
// pending records change.
func serverXMLBases(path string) []string {
	entries, err := tuning.ReadJournal(path)
	if err != nil {
		return nil
	}
	var bases []string
	for _, e := range entries {
		if e.Reverted {
			continue
		}
		for _, u := range e.Undo {
			var rec struct {
				Path string `json:"path"`
			}
			// Whatever the record's kind (a tomcatconf edit, a tuning
			// file rewrite), its path names the file it changed.
			if json.Unmarshal(u.Data, &rec) == nil && rec.Path != "" &&
				filepath.Base(rec.Path) == "server.xml" && filepath.Base(filepath.Dir(rec.Path)) == "conf" {
				if b := filepath.Dir(filepath.Dir(rec.Path)); !slices.Contains(bases, b) {
					bases = append(bases, b)
				}
			}
		}
	}
	return bases
}

// journalUnit returns the unit of the journal's tomcat record, pending or
// not, when the run controlled Tomcat through systemd, else "".
func journalUnit(path string) string {
	entries, err := tuning.ReadJournal(path)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		for _, u := range e.Undo {
			var rc tomcatconf.RestartChange
			if e.Step == StepTomcat && u.Kind == (tomcatconf.RestartChange{}).Kind() && json.Unmarshal(u.Data, &rc) == nil && rc.Control == tomcatconf.ControlSystemd {
				return rc.Service
			}
		}
	}
	return ""
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
			if u.Kind == (tomcatconf.RestartChange{}).Kind() && json.Unmarshal(u.Data, &rc) == nil && rc.Control == tomcatconf.ControlSystemd {
				return rc.Service
			}
		}
	}
	return ""
}
