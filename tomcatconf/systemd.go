package tomcatconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"

	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nettune/nettune/internal/atomicfile"
	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/httpready"
)

const (
	// dropInName is the name of the drop-in SetDropIn writes in
	// /run/systemd/system/UNIT.d/ (or /etc/systemd/system/UNIT.d/ for a
	// Persistent Unit, where a file of the same name shadows the runtime
	// one).
	dropInName = "nettune.conf"
	// defaultUnitTimeout bounds each wait of start, stop and restart.
	defaultUnitTimeout = 90 * time.Second
)

// ErrNoSystemd: systemd is not the init system under the Unit's root.
var ErrNoSystemd = errors.New("tomcatconf: systemd is not running")

// Unit is the systemd service unit that runs a Tomcat (Debian's
// tomcat10.service): its state from systemctl, its journal, and the
// drop-in that tunes it (LimitNOFILE=, CPUAffinity=): a runtime one, or
// with Persistent one that stays across reboots. An
// Instance under ControlSystemd starts, stops and restarts it. The zero
// value is Debian's unit on this host.
type Unit struct {
	// Name is the unit. Default: DefaultService.
	Name string
	// Root is the host root holding /run and /proc ("" is this host,
	// "/"); systemctl and journalctl still run through Runner, which must
	// reach the systemd of that root.
	Root string
	// Runner runs systemctl and journalctl. Default nil: run them on
	// this host.
	Runner Runner
	// Persistent makes the drop-in methods (DropInPath, SetDropIn,
	// RemoveDropIn, RestoreDropIn) use /etc/systemd/system/UNIT.d, which
	// systemd reads at every boot, instead of the runtime
	// /run/systemd/system/UNIT.d, which is gone at the next boot. The
	// persistent file has the runtime one's name, so while it exists it
	// shadows the runtime one. Default: false (runtime).
	Persistent bool
}

func (u *Unit) name() string {
	if u.Name != "" {
		return u.Name
	}
	return DefaultService
}

func (u *Unit) runner() Runner { return runnerOr(u.Runner) }

func (u *Unit) root() (hostfs.Root, error) {
	if u.Root == "" || u.Root == hostfs.DefaultRoot {
		return hostfs.Default(), nil
	}
	r, err := hostfs.New(u.Root)
	if err != nil {
		return hostfs.Root{}, fmt.Errorf("tomcatconf: %w", err)
	}
	return r, nil
}

// systemdBooted reports whether systemd is the init system under root (""
// is this host), as sd_booted(3) decides: ROOT/run/systemd/system is a
// directory. It needs no privileges.
func systemdBooted(root string) bool {
	u := Unit{Root: root}
	r, err := u.root()
	if err != nil {
		return false
	}
	fi, err := os.Stat(r.Path("run", "systemd", "system"))
	return err == nil && fi.IsDir()
}

// UnitState is what `systemctl show` says about a unit.
type UnitState struct {
	LoadState     string // "loaded", "not-found", ...
	ActiveState   string // "active", "activating", "deactivating", "inactive", "failed"
	SubState      string // "running", "dead", "auto-restart", ...
	UnitFileState string // "enabled", "disabled", "static", ... ("" for a transient unit)
	Result        string // "success", "exit-code", "signal", ...
	MainPID       int    // 0 when no main process runs
}

// Active reports whether the unit is active.
func (s UnitState) Active() bool { return s.ActiveState == "active" }

// Enabled reports whether the unit starts at boot (enabled or
// enabled-runtime).
func (s UnitState) Enabled() bool {
	return s.UnitFileState == "enabled" || s.UnitFileState == "enabled-runtime"
}

// String gives the state as KEY=VALUE pairs, for messages.
func (s UnitState) String() string {
	return fmt.Sprintf("LoadState=%s ActiveState=%s SubState=%s Result=%s MainPID=%d",
		s.LoadState, s.ActiveState, s.SubState, s.Result, s.MainPID)
}

var showProps = "LoadState,ActiveState,SubState,UnitFileState,Result,MainPID"

// State runs `systemctl show UNIT -p LoadState,ActiveState,SubState,
// UnitFileState,Result,MainPID`. It needs no privileges; without systemd
// the error is compatible with errors.Is(err, ErrNoSystemd).
func (u *Unit) State(ctx context.Context) (UnitState, error) {
	if !systemdBooted(u.Root) {
		return UnitState{}, u.noSystemd()
	}
	out, err := u.systemctl(ctx, "show", u.name(), "-p", showProps, "--no-pager")
	if err != nil {
		return UnitState{}, err
	}
	st, err := parseUnitShow(out)
	if err != nil {
		return UnitState{}, fmt.Errorf("tomcatconf: systemctl show %s: %w", u.name(), err)
	}
	return st, nil
}

func (u *Unit) noSystemd() error {
	r, _ := u.root()
	return fmt.Errorf("%w: %s is not a directory (not booted with systemd)", ErrNoSystemd, r.Path("run", "systemd", "system"))
}

func (u *Unit) systemctl(ctx context.Context, args ...string) ([]byte, error) {
	out, err := u.runner().Run(ctx, Command{Path: "systemctl", Args: args})
	if err != nil {
		return out, fmt.Errorf("tomcatconf: %w", err)
	}
	return out, nil
}

// parseUnitShow parses `systemctl show -p ...` output: KEY=VALUE lines.
// Unknown keys are ignored; a line without "=" or a MainPID that is not a
// PID is an error.
func parseUnitShow(data []byte) (UnitState, error) {
	var s UnitState
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return UnitState{}, fmt.Errorf("line %d: %q is not KEY=VALUE", i+1, line)
		}
		switch k {
		case "LoadState":
			s.LoadState = v
		case "ActiveState":
			s.ActiveState = v
		case "SubState":
			s.SubState = v
		case "UnitFileState":
			s.UnitFileState = v
		case "Result":
			s.Result = v
		case "MainPID":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return UnitState{}, fmt.Errorf("line %d: MainPID=%q, want a PID (0 for none)", i+1, v)
			}
			s.MainPID = n
		}
	}
	return s, nil
}

// MainPID returns the unit's main process (the JVM for Debian's
// tomcat10), or an error compatible with errors.Is(err, ErrNotRunning).
func (u *Unit) MainPID(ctx context.Context) (int, error) {
	st, err := u.State(ctx)
	if err != nil {
		return 0, err
	}
	if st.MainPID == 0 {
		return 0, fmt.Errorf("%w: %s has no main process (%s)", ErrNotRunning, u.name(), st)
	}
	return st.MainPID, nil
}

// unitOptions tune start and stop. A nil *unitOptions means the
// defaults.
type unitOptions struct {
	// ReadyURL is polled until it answers with a status below 400.
	// Default: "" (return once systemd reports the unit active with a
	// main process; Type=simple units such as tomcat10 are active as
	// soon as the start script is forked, before it execs the JVM and
	// before Tomcat listens).
	ReadyURL string
	// Timeout bounds the systemctl call and each wait. Default:
	// defaultUnitTimeout.
	Timeout time.Duration
}

// processLimits is what a process actually got, read from
// /proc/PID/limits and /proc/PID/status.
type processLimits struct {
	PID        int
	NoFileSoft uint64 // "Max open files" soft limit; math.MaxUint64 for unlimited
	NoFileHard uint64 // and hard limit
	CPUs       []int  // Cpus_allowed_list, in ascending order
}

// unitStartResult says what start did.
type unitStartResult struct {
	PID         int           // the new main process
	PreviousPID int           // restart: the main process before; 0 when none ran
	Limits      processLimits // what the new main process got
	Took        time.Duration // from the systemctl call until active (and ReadyURL answered)
}

// start runs `systemctl VERB UNIT` (start or restart; systemd stops the
// old main process, then starts a new one) and waits (at most Timeout
// each) until systemd reports the unit active with a main process (for
// restart, another than before) and, with a ReadyURL, until that answers;
// a unit already active keeps its main process, which the result
// reports. It then reads the main process's limits from
// ROOT/proc/PID/limits and ROOT/proc/PID/status. A unit that fails —
// systemctl fails, the unit leaves the active state, or the wait times
// out — gives an error compatible with errors.Is(err, ErrStart) holding
// the unit's state and the last 20 lines of `journalctl -u UNIT`. It needs
// root (or polkit's permission to manage the unit).
func (u *Unit) start(ctx context.Context, verb string, opts *unitOptions) (unitStartResult, error) {
	var o unitOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout == 0 {
		o.Timeout = defaultUnitTimeout
	}
	var res unitStartResult
	before, err := u.State(ctx)
	if err != nil {
		return res, err
	}
	if verb == "restart" {
		res.PreviousPID = before.MainPID
	}
	t0 := time.Now()
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	_, err = u.systemctl(cctx, verb, u.name())
	cancel()
	if err != nil {
		return res, u.startError(ctx, err)
	}
	st, err := u.waitActive(ctx, res.PreviousPID, o.Timeout)
	if err != nil {
		return res, u.startError(ctx, err)
	}
	res.PID = st.MainPID
	if o.ReadyURL != "" {
		if err := u.waitReady(ctx, st.MainPID, o.ReadyURL, o.Timeout); err != nil {
			return res, u.startError(ctx, err)
		}
	}
	res.Took = time.Since(t0)
	lim, err := u.limits(res.PID)
	if err != nil {
		return res, err
	}
	res.Limits = lim
	return res, nil
}

// waitActive polls the unit until it is active with a main process other
// than old, leaves the way to active, or timeout passes.
func (u *Unit) waitActive(ctx context.Context, old int, timeout time.Duration) (UnitState, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		st, err := u.State(ctx)
		if err != nil {
			return st, err
		}
		switch {
		case st.Active() && st.MainPID != 0 && st.MainPID != old:
			return st, nil
		// systemctl returns once the start job is done: a unit that is
		// inactive now has already stopped again.
		case st.ActiveState == "failed", st.ActiveState == "inactive", st.SubState == "auto-restart":
			return st, fmt.Errorf("%s did not stay up", u.name())
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("%s not active with a new main process within %s", u.name(), timeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReady polls url until it answers below 400, the unit's main process
// changes or the unit leaves the active state, or timeout passes.
func (u *Unit) waitReady(ctx context.Context, pid int, url string, timeout time.Duration) error {
	return httpready.Wait(ctx, url, timeout, func() error {
		st, err := u.State(ctx)
		if err != nil {
			return err
		}
		if !st.Active() || st.MainPID != pid {
			return fmt.Errorf("%s stopped before %s answered (main process was %d)", u.name(), url, pid)
		}
		return nil
	})
}

// startError wraps err in ErrStart with the unit's state and the last
// journal lines.
func (u *Unit) startError(ctx context.Context, err error) error {
	ctx = context.WithoutCancel(ctx)
	state := ""
	if st, serr := u.State(ctx); serr == nil {
		state = st.String()
	} else {
		state = "unknown: " + serr.Error()
	}
	out, jerr := u.Journal(ctx, 20)
	journal := strings.TrimRight(string(out), "\n")
	if jerr != nil {
		journal = "(journalctl failed: " + jerr.Error() + ")"
	}
	return fmt.Errorf("%w: %w\nunit state: %s\n--- journalctl -u %s -n 20 ---\n%s", ErrStart, err, state, u.name(), journal)
}

// Journal returns the last n lines of the unit's journal (`journalctl -u
// UNIT -n N --no-pager`). Reading another unit's journal needs root or
// the systemd-journal group.
func (u *Unit) Journal(ctx context.Context, n int) ([]byte, error) {
	out, err := u.runner().Run(ctx, Command{Path: "journalctl", Args: []string{"-u", u.name(), "-n", strconv.Itoa(n), "--no-pager"}})
	if err != nil {
		return out, fmt.Errorf("tomcatconf: %w", err)
	}
	return out, nil
}

// unitStopResult says what stop did.
type unitStopResult struct {
	PID  int // the main process that was stopped; 0 when none ran
	Took time.Duration
}

// stop runs `systemctl stop UNIT` (systemd sends SIGTERM to the unit's
// processes, then SIGKILL after its TimeoutStopSec) and waits, at most
// Timeout, until the unit is inactive or failed and the old main process
// is gone from ROOT/proc. Stopping a stopped unit is not an error. It
// needs root (or polkit's permission to manage the unit).
func (u *Unit) stop(ctx context.Context, opts *unitOptions) (unitStopResult, error) {
	var o unitOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout == 0 {
		o.Timeout = defaultUnitTimeout
	}
	before, err := u.State(ctx)
	if err != nil {
		return unitStopResult{}, err
	}
	res := unitStopResult{PID: before.MainPID}
	t0 := time.Now()
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if _, err := u.systemctl(cctx, "stop", u.name()); err != nil {
		return res, err
	}
	r, err := u.root()
	if err != nil {
		return res, err
	}
	for {
		st, err := u.State(cctx)
		gone := res.PID == 0 || !hostfs.Exists(r.Proc(strconv.Itoa(res.PID)))
		if err == nil && (st.ActiveState == "inactive" || st.ActiveState == "failed") && gone {
			res.Took = time.Since(t0)
			return res, nil
		}
		select {
		case <-cctx.Done():
			return res, fmt.Errorf("tomcatconf: %s not stopped within %s (%s; main process %d gone: %t)", u.name(), o.Timeout, st, res.PID, gone)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// processLimits reads what process pid got: ROOT/proc/PID/limits ("Max
// open files") and ROOT/proc/PID/status (Cpus_allowed_list). Any user may
// read them.
func (u *Unit) limits(pid int) (processLimits, error) {
	r, err := u.root()
	if err != nil {
		return processLimits{}, err
	}
	res := processLimits{PID: pid}
	p := r.Proc(strconv.Itoa(pid), "limits")
	data, err := hostfs.ReadFile(p)
	if err != nil {
		return res, fmt.Errorf("tomcatconf: %w", err)
	}
	if res.NoFileSoft, res.NoFileHard, err = parseLimitsNoFile(data); err != nil {
		return res, fmt.Errorf("tomcatconf: %s: %w", p, err)
	}
	p = r.Proc(strconv.Itoa(pid), "status")
	data, err = hostfs.ReadFile(p)
	if err != nil {
		return res, fmt.Errorf("tomcatconf: %w", err)
	}
	if res.CPUs, err = parseStatusCPUs(data, p); err != nil {
		return res, err
	}
	return res, nil
}

// parseLimitsNoFile returns the soft and hard "Max open files" limits
// from a /proc/PID/limits file ("unlimited" is math.MaxUint64).
func parseLimitsNoFile(data []byte) (soft, hard uint64, err error) {
	for _, l := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(l, "Max open files")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			return 0, 0, fmt.Errorf("\"Max open files\" line %q: want soft and hard limits", l)
		}
		if soft, err = parseLimit(f[0]); err != nil {
			return 0, 0, fmt.Errorf("\"Max open files\" soft limit: %w", err)
		}
		if hard, err = parseLimit(f[1]); err != nil {
			return 0, 0, fmt.Errorf("\"Max open files\" hard limit: %w", err)
		}
		return soft, hard, nil
	}
	return 0, 0, errors.New("no \"Max open files\" line")
}

func parseLimit(s string) (uint64, error) {
	if s == "unlimited" {
		return math.MaxUint64, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a number nor \"unlimited\"", s)
	}
	return n, nil
}

// parseStatusCPUs returns the CPUs of the Cpus_allowed_list line of a
// /proc/PID/status file read from path.
func parseStatusCPUs(data []byte, path string) ([]int, error) {
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			set, err := cpuset.ParseNamed(strings.TrimSpace(rest), path)
			if err != nil {
				return nil, fmt.Errorf("tomcatconf: %w", err)
			}
			return set.IDs(), nil
		}
	}
	return nil, fmt.Errorf("tomcatconf: %s: no Cpus_allowed_list line", path)
}

// ManagerNoFile returns the hard open-files limit of the service manager,
// PID 1, from ROOT/proc/1/limits: systemd cannot give a service more.
// Any user may read it.
func (u *Unit) ManagerNoFile() (uint64, error) {
	lim, err := u.limits(1)
	if err != nil {
		return 0, err
	}
	return lim.NoFileHard, nil
}

// DropIn is what SetDropIn puts in a unit's [Service] section. Zero
// fields are left out.
type DropIn struct {
	// LimitNOFILE sets the open-files limit, soft and hard. Default: 0
	// (not set).
	LimitNOFILE uint64
	// CPUAffinity pins the unit's processes to these CPUs. Default: nil
	// (not set).
	CPUAffinity []int
}

// Render returns the drop-in's text, a [Service] section holding the
// non-zero fields. A negative CPU is an error.
func (d DropIn) Render() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Written by nettune (tomcatconf.Unit.SetDropIn); RemoveDropIn deletes it.\n[Service]\n")
	if d.LimitNOFILE != 0 {
		fmt.Fprintf(&b, "LimitNOFILE=%d\n", d.LimitNOFILE)
	}
	if len(d.CPUAffinity) > 0 {
		for _, c := range d.CPUAffinity {
			if c < 0 {
				return nil, fmt.Errorf("tomcatconf: drop-in CPUAffinity %v: CPU %d is negative, want CPU numbers >= 0", d.CPUAffinity, c)
			}
		}
		fmt.Fprintf(&b, "CPUAffinity=%s\n", cpuset.Of(d.CPUAffinity...).String())
	}
	return b.Bytes(), nil
}

// capNoFile caps a requested LimitNOFILE at the manager's hard limit.
func capNoFile(want, manager uint64) (uint64, bool) {
	if want > manager {
		return manager, true
	}
	return want, false
}

// DropInResult says what SetDropIn or RemoveDropIn did, and holds what a
// caller needs to journal the change and undo it with RestoreDropIn.
type DropInResult struct {
	Path      string // ROOT/run/systemd/system/UNIT.d/nettune.conf, or under ROOT/etc when Persistent
	Existed   bool   // a file of that name was there before
	Previous  []byte // its content; nil when it did not exist
	Requested DropIn // what the caller asked for (SetDropIn)
	Written   DropIn // what was written, after capping
	// ManagerNoFile is PID 1's hard open-files limit (SetDropIn with a
	// LimitNOFILE).
	ManagerNoFile uint64
	// Capped is true when LimitNOFILE was above ManagerNoFile and
	// ManagerNoFile was written instead.
	Capped  bool
	Changed bool // false when the file already held these bytes (or was already absent)
}

// DropInPath returns ROOT/run/systemd/system/UNIT.d/nettune.conf, or
// ROOT/etc/systemd/system/UNIT.d/nettune.conf when the Unit is Persistent.
func (u *Unit) DropInPath() (string, error) {
	r, err := u.root()
	if err != nil {
		return "", err
	}
	top := "run"
	if u.Persistent {
		top = "etc"
	}
	return r.Path(top, "systemd", "system", u.name()+".d", dropInName), nil
}

// SetDropIn writes the drop-in DropInPath (the runtime one, gone at the
// next boot; with Persistent the one under /etc, read at every boot) with d, then runs `systemctl daemon-reload`. A LimitNOFILE above the
// manager's hard limit (ROOT/proc/1/limits) is capped to it, and the
// result says so: systemd cannot give more. The file is written safely
// (temp file, fsync, rename; on error the old file is intact); the unit's
// running processes keep their limits until the next Start or Restart. It
// needs root.
func (u *Unit) SetDropIn(ctx context.Context, d DropIn) (DropInResult, error) {
	res := DropInResult{Requested: d, Written: d}
	if !systemdBooted(u.Root) {
		return res, u.noSystemd()
	}
	p, err := u.DropInPath()
	if err != nil {
		return res, err
	}
	res.Path = p
	if d.LimitNOFILE != 0 {
		if res.ManagerNoFile, err = u.ManagerNoFile(); err != nil {
			return res, err
		}
		res.Written.LimitNOFILE, res.Capped = capNoFile(d.LimitNOFILE, res.ManagerNoFile)
	}
	data, err := res.Written.Render()
	if err != nil {
		return res, err
	}
	if err := res.readPrevious(); err != nil {
		return res, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return res, fmt.Errorf("tomcatconf: drop-in directory: %w", err)
	}
	w, err := atomicfile.WriteFile(p, data, &atomicfile.Options{NoBackup: true, Perm: 0o644})
	if err != nil {
		return res, fmt.Errorf("tomcatconf: write drop-in %s: %w", p, err)
	}
	res.Changed = w.Changed
	if _, err := u.systemctl(ctx, "daemon-reload"); err != nil {
		return res, fmt.Errorf("%w (after writing %s)", err, p)
	}
	return res, nil
}

func (res *DropInResult) readPrevious() error {
	prev, err := os.ReadFile(res.Path)
	switch {
	case err == nil:
		res.Existed, res.Previous = true, prev
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("tomcatconf: read drop-in %s: %w", res.Path, err)
	}
	return nil
}

// RemoveDropIn deletes DropInPath, and its directory when that is then
// empty, then runs `systemctl daemon-reload`. The result's Previous is
// the removed content; removing an absent drop-in is not an error
// (Changed is false). It needs root.
func (u *Unit) RemoveDropIn(ctx context.Context) (DropInResult, error) {
	var res DropInResult
	if !systemdBooted(u.Root) {
		return res, u.noSystemd()
	}
	p, err := u.DropInPath()
	if err != nil {
		return res, err
	}
	res.Path = p
	if err := res.readPrevious(); err != nil {
		return res, err
	}
	if !res.Existed {
		return res, nil
	}
	if err := os.Remove(p); err != nil {
		return res, fmt.Errorf("tomcatconf: remove drop-in %s: %w", p, err)
	}
	res.Changed = true
	// Only an empty directory goes; another drop-in keeps it.
	if err := os.Remove(filepath.Dir(p)); err != nil && !errors.Is(err, os.ErrNotExist) && !isNotEmpty(err) {
		return res, fmt.Errorf("tomcatconf: remove drop-in directory: %w", err)
	}
	if _, err := u.systemctl(ctx, "daemon-reload"); err != nil {
		return res, fmt.Errorf("%w (after removing %s)", err, p)
	}
	return res, nil
}

func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}

// RestoreDropIn puts the drop-in back as it was before the SetDropIn or
// RemoveDropIn that returned prev: the previous content, or no file. It
// runs `systemctl daemon-reload` when it changed something. A prev whose
// Path is not this Unit's DropInPath (the runtime drop-in's result given
// to a Persistent Unit, or the reverse: both files have one name) is an
// error, and nothing changes. It needs root.
func (u *Unit) RestoreDropIn(ctx context.Context, prev DropInResult) error {
	p, err := u.DropInPath()
	if err != nil {
		return err
	}
	if prev.Path != "" && prev.Path != p {
		return fmt.Errorf("tomcatconf: restore drop-in: %s was changed, but this unit's drop-in is %s: left as it is", prev.Path, p)
	}
	if !prev.Existed {
		_, err := u.RemoveDropIn(ctx)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("tomcatconf: drop-in directory: %w", err)
	}
	w, err := atomicfile.WriteFile(p, prev.Previous, &atomicfile.Options{NoBackup: true, Perm: 0o644})
	if err != nil {
		return fmt.Errorf("tomcatconf: restore drop-in %s: %w", p, err)
	}
	if !w.Changed {
		return nil
	}
	if _, err := u.systemctl(ctx, "daemon-reload"); err != nil {
		return fmt.Errorf("%w (after restoring %s)", err, p)
	}
	return nil
}
