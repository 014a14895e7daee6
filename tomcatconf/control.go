package tomcatconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/cpuset"
)

// Control says how an Instance's JVM is started and stopped.
type Control string

// The ways an Instance can be controlled.
const (
	// ControlAuto decides at each call, with DetectControl.
	ControlAuto Control = ""
	// ControlProcess runs the JVM as a child this program holds (or with
	// Daemon, through catalina.sh start) and stops it by signal.
	ControlProcess Control = "process"
	// ControlSystemd starts, stops and restarts the instance's unit
	// (Instance.Service) with systemctl, so systemd keeps tracking the
	// JVM; the open-files limit goes into a runtime drop-in.
	ControlSystemd Control = "systemd"
)

// Unit returns the systemd unit that runs the instance: Service under
// Root, with Runner. Without a Service it is DefaultService.
func (in *Instance) Unit() *Unit {
	return &Unit{Name: in.Service, Root: in.Root, Runner: in.Runner}
}

// DetectControl returns how Start, Stop, StopAll and Restart control the
// instance, and why. A Control other than ControlAuto is returned as it
// is (ControlSystemd without a Service, or without systemd under Root, is
// an error). Otherwise the rule is: ControlSystemd when the instance has
// a Service (UseService found the unit that runs its base), systemd is
// the init system under Root (Root/run/systemd/system exists), and that unit is loaded and
// its ActiveState is neither inactive nor failed (active, activating,
// reloading, deactivating), or it is enabled; ControlProcess in every
// other case — no
// unit, no systemd, or a unit that is stopped and would not start at
// boot, so that a JVM started beside it fights nobody for the port. The
// unit's state comes from `systemctl show`, which needs no privileges.
//
// An active unit that is then stopped and is not enabled no longer
// counts: a program that stops Tomcat and starts it later sets
// Instance.Control to the answer once, before it changes anything.
func (in *Instance) DetectControl(ctx context.Context) (Control, string, error) {
	u := in.Unit()
	switch in.Control {
	case ControlProcess:
		return ControlProcess, "set by Instance.Control", nil
	case ControlSystemd:
		if in.Service == "" {
			return "", "", fmt.Errorf("tomcatconf: Instance.Control %q for %s: no Service names the unit", in.Control, in.Base)
		}
		if !systemdBooted(in.Root) {
			return "", "", u.noSystemd()
		}
		return ControlSystemd, "set by Instance.Control", nil
	case ControlAuto:
	default:
		return "", "", fmt.Errorf("tomcatconf: Instance.Control %q: want %q, %q or \"\"", in.Control, ControlProcess, ControlSystemd)
	}
	if in.Service == "" {
		return ControlProcess, "no systemd unit runs " + in.Base, nil
	}
	if !systemdBooted(in.Root) {
		r, err := u.root()
		if err != nil {
			return "", "", err
		}
		return ControlProcess, fmt.Sprintf("systemd is not running: no %s", r.Path("run", "systemd", "system")), nil
	}
	st, err := u.State(ctx)
	if err != nil {
		return "", "", err
	}
	switch {
	case st.LoadState != "loaded":
		return ControlProcess, fmt.Sprintf("%s is not loaded (LoadState=%s)", in.Service, st.LoadState), nil
	case st.ActiveState != "inactive" && st.ActiveState != "failed":
		return ControlSystemd, fmt.Sprintf("%s is %s (UnitFileState=%s, MainPID %d)", in.Service, st.ActiveState, st.UnitFileState, st.MainPID), nil
	case st.Enabled():
		return ControlSystemd, fmt.Sprintf("%s is %s and %s", in.Service, st.ActiveState, st.UnitFileState), nil
	}
	return ControlProcess, fmt.Sprintf("%s is %s and not enabled (UnitFileState=%s)", in.Service, st.ActiveState, st.UnitFileState), nil
}

// control resolves in.Control.
func (in *Instance) control(ctx context.Context) (Control, error) {
	c, _, err := in.DetectControl(ctx)
	return c, err
}

// Restart stops the instance's JVM, if one runs, and starts it again with
// the current files and settings. Under ControlSystemd it is one
// `systemctl restart UNIT` (after the open-files drop-in, see Start),
// which waits for a new main process that is the JVM; a JVM of Base
// running beside the unit is refused (ErrRunning). Otherwise it is Stop
// (no JVM is fine) then Start. Errors and privileges are Start's and
// Stop's.
func (in *Instance) Restart(ctx context.Context, opts *StartOptions) (StartResult, error) {
	c, err := in.control(ctx)
	if err != nil {
		return StartResult{}, err
	}
	if c == ControlSystemd {
		return in.startUnit(ctx, opts, true)
	}
	if _, err := in.Stop(ctx, nil); err != nil && !errors.Is(err, ErrNotRunning) {
		return StartResult{}, err
	}
	return in.Start(ctx, opts)
}

// startUnit is Start (or Restart) under ControlSystemd.
func (in *Instance) startUnit(ctx context.Context, opts *StartOptions, restart bool) (StartResult, error) {
	var o StartOptions
	if opts != nil {
		o = *opts
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = defaultReadyTimeout
	}
	u := in.Unit()
	verb := "start"
	if restart {
		verb = "restart"
	}
	res := StartResult{Control: ControlSystemd, Unit: u.name(),
		Command: "systemctl " + verb + " " + u.name(), Log: "journalctl -u " + u.name()}
	st, err := u.State(ctx)
	if err != nil {
		return res, err
	}
	if !restart && st.Active() && st.MainPID != 0 {
		return res, fmt.Errorf("%w: %s is active with main process %d", ErrRunning, u.name(), st.MainPID)
	}
	jvms, err := in.JVMs()
	if err != nil {
		return res, err
	}
	for _, j := range jvms {
		if j.PID != st.MainPID {
			return res, fmt.Errorf("%w: JVM %d (user %s) has -Dcatalina.base=%s beside %s (main process %d): stop it first",
				ErrRunning, j.PID, j.User, in.Base, u.name(), st.MainPID)
		}
	}
	if in.NoFile != 0 {
		dr, err := in.setNoFile(ctx, u)
		if err != nil {
			return res, fmt.Errorf("%w: %w", ErrStart, err)
		}
		res.DropIn = &dr
	}
	// undo puts the drop-in back and the unit down after a failed start.
	undo := func(err error) error {
		ctx := context.WithoutCancel(ctx)
		var errs []error
		if res.DropIn != nil && res.DropIn.Changed {
			if rerr := u.RestoreDropIn(ctx, *res.DropIn); rerr != nil {
				errs = append(errs, fmt.Errorf("and restoring %s: %v", res.DropIn.Path, rerr))
			}
		}
		if _, serr := u.stop(ctx, nil); serr != nil {
			errs = append(errs, fmt.Errorf("and stopping %s: %v", u.name(), serr))
		}
		if len(errs) == 0 {
			return err
		}
		return fmt.Errorf("%w (%w)", err, errors.Join(errs...))
	}
	uo := &unitOptions{ReadyURL: o.ReadyURL, Timeout: o.ReadyTimeout}
	var ur unitStartResult
	if restart {
		ur, err = u.start(ctx, "restart", uo)
	} else {
		ur, err = u.start(ctx, "start", uo)
	}
	if err != nil {
		return res, undo(err)
	}
	pid, err := in.waitUnitJVM(ctx, u, ur.PID)
	if err != nil {
		return res, undo(fmt.Errorf("%w: %w", ErrStart, err))
	}
	res.PID = pid
	if o.ReadyURL != "" {
		res.Ready = ur.Took
	}
	if jvms, err := in.JVMs(); err == nil {
		for _, j := range jvms {
			if j.PID == pid {
				res.User = firstOf(j.User, strconv.Itoa(j.UID))
			}
		}
	}
	if lim, err := u.limits(pid); err == nil {
		res.NoFile, res.CPUs = lim.NoFileSoft, lim.CPUs
	}
	return res, nil
}

func firstOf(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// waitUnitJVM waits, at most execTimeout, until the unit's main process
// pid has exec'd the JVM (Debian's tomcat-start.sh execs it in the same
// process), and fails when pid is gone.
func (in *Instance) waitUnitJVM(ctx context.Context, u *Unit, pid int) (int, error) {
	ok := in.poll(ctx, execTimeout, func() bool { return in.alive(pid) || !in.exists(pid) })
	switch {
	case in.alive(pid):
		return pid, nil
	case !in.exists(pid):
		return 0, fmt.Errorf("main process %d of %s is gone before it became the JVM", pid, u.name())
	case !ok && ctx.Err() != nil:
		return 0, fmt.Errorf("waiting for main process %d of %s to exec the JVM: %w", pid, u.name(), context.Cause(ctx))
	}
	return 0, fmt.Errorf("main process %d of %s has no -Dcatalina.base=%s after %s", pid, u.name(), in.Base, execTimeout)
}

// setNoFile writes in.NoFile as the drop-in's LimitNOFILE, keeping the
// rest of the drop-in.
func (in *Instance) setNoFile(ctx context.Context, u *Unit) (DropInResult, error) {
	d, _, err := u.ReadDropIn()
	if err != nil {
		return DropInResult{}, err
	}
	d.LimitNOFILE = in.NoFile
	return u.SetDropIn(ctx, d)
}

// stopUnit is Stop under ControlSystemd: `systemctl stop UNIT`, unless
// o.PID names a JVM of Base that is not the unit's main process.
func (in *Instance) stopUnit(ctx context.Context, o StopOptions) (StopResult, error) {
	u := in.Unit()
	st, err := u.State(ctx)
	if err != nil {
		return StopResult{}, err
	}
	if o.PID != 0 && o.PID != st.MainPID {
		return in.stopProcess(ctx, o)
	}
	if st.MainPID == 0 && (st.ActiveState == "inactive" || st.ActiveState == "failed") {
		return StopResult{}, fmt.Errorf("%w: %s is %s with no main process", ErrNotRunning, u.name(), st.ActiveState)
	}
	r, err := u.stop(ctx, &unitOptions{Timeout: o.Timeout})
	if err != nil {
		return StopResult{PID: r.PID}, err
	}
	return StopResult{PID: r.PID, Method: stopSystemctl, Took: r.Took}, nil
}

// ReadDropIn reads DropInPath, as SetDropIn writes it: a [Service]
// section with LimitNOFILE= and CPUAffinity= lines (comments and blank
// lines are ignored). It reports whether the file exists; any other key
// is an error naming the file and line. It needs read access to the file
// only.
func (u *Unit) ReadDropIn() (DropIn, bool, error) {
	p, err := u.DropInPath()
	if err != nil {
		return DropIn{}, false, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return DropIn{}, false, nil
	}
	if err != nil {
		return DropIn{}, false, fmt.Errorf("tomcatconf: read drop-in: %w", err)
	}
	d, err := parseDropIn(data, p)
	return d, true, err
}

// parseDropIn parses a drop-in written by SetDropIn, read from path.
func parseDropIn(data []byte, path string) (DropIn, error) {
	var d DropIn
	for i, line := range bytes.Split(data, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if l == "" || l[0] == '#' || l[0] == ';' || l == "[Service]" {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return DropIn{}, fmt.Errorf("tomcatconf: drop-in %s line %d: %q: want KEY=VALUE", path, i+1, l)
		}
		switch k {
		case "LimitNOFILE":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return DropIn{}, fmt.Errorf("tomcatconf: drop-in %s line %d: LimitNOFILE=%q: want a number", path, i+1, v)
			}
			d.LimitNOFILE = n
		case "CPUAffinity":
			if v == "" {
				d.CPUAffinity = nil // an empty value resets it, as in systemd
				continue
			}
			set, err := cpuset.ParseNamed(v, path)
			if err != nil {
				return DropIn{}, fmt.Errorf("tomcatconf: drop-in %s line %d: %w", path, i+1, err)
			}
			d.CPUAffinity = nil
			if !set.IsEmpty() {
				d.CPUAffinity = set.IDs()
			}
		default:
			return DropIn{}, fmt.Errorf("tomcatconf: drop-in %s line %d: %q: want LimitNOFILE= or CPUAffinity=", path, i+1, l)
		}
	}
	return d, nil
}

// unitStopAll is StopAll's first part under ControlSystemd: the unit is
// stopped with systemctl; the JVMs left beside it are StopAll's.
func (in *Instance) unitStopAll(ctx context.Context, timeout time.Duration) ([]StopResult, error) {
	r, err := in.Unit().stop(ctx, &unitOptions{Timeout: timeout})
	if err != nil {
		return nil, err
	}
	if r.PID == 0 {
		return nil, nil
	}
	return []StopResult{{PID: r.PID, Method: stopSystemctl, Took: r.Took}}, nil
}
