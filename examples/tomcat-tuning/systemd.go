//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// undoDropIn is the journal kind of a change to the unit's runtime
// drop-in; its data is a dropInUndo.
const undoDropIn = "systemd-drop-in"

// dropInUndo is the drop-in as it was before a step wrote it: reverting
// writes Previous back, or removes the file when it did not exist, then
// runs systemctl daemon-reload.
type dropInUndo struct {
	Unit     string `json:"unit"`
	Path     string `json:"path"`
	Existed  bool   `json:"existed"`
	Previous string `json:"previous,omitempty"`
}

func revertDropIn(ctx context.Context, data json.RawMessage) error {
	var d dropInUndo
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("systemd drop-in undo record: %w", err)
	}
	if d.Unit == "" {
		return fmt.Errorf("systemd drop-in undo record %s: no unit", data)
	}
	u := &tomcatconf.Unit{Name: d.Unit}
	return u.RestoreDropIn(ctx, tomcatconf.DropInResult{Path: d.Path, Existed: d.Existed, Previous: []byte(d.Previous)})
}

// systemd reports whether the study controls Tomcat through its unit.
func (s *study) systemd() bool {
	return s.inst != nil && s.control == tomcatconf.ControlSystemd
}

// detectControl decides, once, how the study starts and stops Tomcat,
// prints it and holds the decision in the instance (a unit the study
// stops must still be started through systemd).
func (s *study) detectControl(ctx context.Context) error {
	if !s.live {
		return nil
	}
	c, why, err := s.inst.DetectControl(ctx)
	if err != nil {
		return err
	}
	s.control = c
	s.inst.Control = c
	if c == tomcatconf.ControlSystemd {
		fmt.Fprintf(s.w, "controlled by systemd: %s (%s); restarts go through systemctl, limits through a runtime drop-in\n", s.inst.Service, why)
		return nil
	}
	fmt.Fprintf(s.w, "controlled by this program: the JVM runs as its child (%s)\n", why)
	return nil
}

// dropInChange is a step that sets one setting of the unit's runtime
// drop-in, keeping the others; the undo record holds the file as it is
// now.
func (s *study) dropInChange(what string, set func(*tomcatconf.DropIn)) (*tuning.Change, error) {
	u := s.inst.Unit()
	p, err := u.DropInPath()
	if err != nil {
		return nil, err
	}
	cur, existed, err := u.ReadDropIn()
	if err != nil {
		return nil, err
	}
	undo := dropInUndo{Unit: s.inst.Service, Path: p, Existed: existed}
	if existed {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		undo.Previous = string(b)
	}
	next := tomcatconf.DropIn{LimitNOFILE: cur.LimitNOFILE, CPUAffinity: slices.Clone(cur.CPUAffinity)}
	set(&next)
	desc := fmt.Sprintf("%s: runtime drop-in %s (%s) + systemctl daemon-reload; takes effect at the next restart", what, p, dropInText(next))
	if next.LimitNOFILE != 0 {
		mgr, err := u.ManagerNoFile()
		if err != nil {
			return nil, err
		}
		if next.LimitNOFILE > mgr {
			desc += fmt.Sprintf("\nLimitNOFILE=%d capped to %d, systemd's own hard limit (PID 1): a higher value makes the unit fail to start", next.LimitNOFILE, mgr)
		}
	}
	rec, err := tuning.NewUndo(undoDropIn, undo)
	if err != nil {
		return nil, err
	}
	return &tuning.Change{
		Describe: desc,
		Undo:     []tuning.Undo{rec},
		Apply: func(ctx context.Context) error {
			res, err := u.SetDropIn(ctx, next)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.w, "drop-in %s written (%s)", res.Path, dropInText(res.Written))
			if res.Capped {
				fmt.Fprintf(s.w, "; LimitNOFILE=%d capped to %d, the manager's hard limit", res.Requested.LimitNOFILE, res.ManagerNoFile)
			}
			fmt.Fprintln(s.w, "; daemon-reload done")
			return nil
		},
	}, nil
}

// dropInText is d's settings on one line ("LimitNOFILE=20000
// CPUAffinity=0").
func dropInText(d tomcatconf.DropIn) string {
	b, err := d.Render()
	if err != nil {
		return err.Error()
	}
	var settings []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && l[0] != '#' && l[0] != '[' {
			settings = append(settings, l)
		}
	}
	if len(settings) == 0 {
		return "no setting"
	}
	return strings.Join(settings, " ")
}

// restartUnit restarts Tomcat through its unit: the drop-in's
// LimitNOFILE= and CPUAffinity= apply; with -cpu-method affinity and no
// CPUAffinity= (the cpus step not run), the JVM is pinned after the
// start, as without systemd.
func (s *study) restartUnit(ctx context.Context) error {
	s.inst.NoFile = 0 // the open-files step's drop-in sets it, journaled
	res, err := s.inst.Restart(ctx, &tomcatconf.StartOptions{ReadyURL: s.url})
	if err != nil {
		return err
	}
	s.jvmPID = res.PID
	fmt.Fprintf(s.w, "restarted Tomcat through systemd (%s): MainPID %d is the JVM, as %s, ready in %s, open files %d, CPUs %s\n",
		res.Command, res.PID, res.User, res.Ready.Round(time.Millisecond), res.NoFile, cpuset.Of(res.CPUs...))
	if s.o.cpuMethod != methodAffinity {
		return nil
	}
	s.mu.Lock()
	cpus := s.tomcatCPUs
	s.mu.Unlock()
	if cpuset.Of(res.CPUs...).Equal(cpus) {
		return nil
	}
	if _, err := s.numaHost.Pin(res.PID, cpus); err != nil {
		return err
	}
	fmt.Fprintf(s.w, "pinned JVM %d to CPUs %s (no CPUAffinity= in the drop-in)\n", res.PID, cpus)
	return nil
}

// checkUnit refuses a JVM of the base beside the unit (it would fight
// the unit for the port) and says whether the unit runs Tomcat now.
func (s *study) checkUnit(ctx context.Context, jvms []tomcatconf.JVM) error {
	u := s.inst.Unit()
	st, err := u.State(ctx)
	if err != nil {
		return err
	}
	for _, j := range jvms {
		if j.PID != st.MainPID {
			return fmt.Errorf("JVM %d (user %s) runs with -Dcatalina.base=%s beside %s (MainPID %d): stop it before -apply",
				j.PID, j.User, s.inst.Base, s.inst.Service, st.MainPID)
		}
	}
	s.wasRunning = st.Active()
	if s.wasRunning {
		fmt.Fprintf(s.w, "Tomcat runs under %s (MainPID %d, %s); the study restarts it with systemctl and leaves it active at the end\n",
			s.inst.Service, st.MainPID, st.UnitFileState)
	} else {
		fmt.Fprintf(s.w, "%s is %s (%s); the study starts it with systemctl and stops it at the end\n", s.inst.Service, st.ActiveState, st.UnitFileState)
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
		if e.Step != stepTomcat || e.Reverted {
			continue
		}
		for _, u := range e.Undo {
			var tu tomcatUndo
			if u.Kind == undoTomcat && json.Unmarshal(u.Data, &tu) == nil && tu.Control == string(tomcatconf.ControlSystemd) {
				return tu.Service
			}
		}
	}
	return ""
}
