package tuning

import (
	"context"
	"fmt"
	"strings"

	"github.com/nettune/nettune/internal/cpuset"
)

// CPUError is the failure to bring one CPU online or offline. Err is a
// *hostfs path error unwrapping to the errno the kernel returned
// (errors.Is(err, syscall.EBUSY), errors.Is(err, os.ErrPermission)), or
// ErrNotHotpluggable, ErrUnknownCPU or ErrNotApplied.
type CPUError struct {
	CPU    int   // the CPU id
	Online bool  // the state that was asked for
	Err    error // why it failed
}

// Error describes the CPU, the asked state and the cause.
func (e *CPUError) Error() string {
	if e.CPU < 0 {
		return fmt.Sprintf("tuning: verify online cpus: %v", e.Err)
	}
	return fmt.Sprintf("tuning: %s cpu%d: %s", onOff(e.Online), e.CPU, strings.TrimPrefix(e.Err.Error(), "tuning: "))
}

// Unwrap returns the cause.
func (e *CPUError) Unwrap() error { return e.Err }

func onOff(online bool) string {
	if online {
		return "online"
	}
	return "offline"
}

// HotplugError reports a multi-CPU change that did not fully succeed:
// every CPU that failed and why, and what was done about the CPUs already
// changed. errors.Is and errors.As see each CPUError in Failed.
type HotplugError struct {
	// Failed lists the CPUs that could not be changed, in the order tried.
	Failed []*CPUError
	// RolledBack reports whether the CPUs already changed were put back
	// (the default); false after a best-effort change or a restore,
	// which keep what succeeded.
	RolledBack bool
	// RollbackFailed lists the CPUs that could not be put back during the
	// roll-back. Empty when the roll-back succeeded.
	RollbackFailed []*CPUError
}

// Error lists every failed CPU with its cause, and the roll-back outcome.
func (e *HotplugError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tuning: %d cpu change(s) failed: ", len(e.Failed))
	for i, f := range e.Failed {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strings.TrimPrefix(f.Error(), "tuning: "))
	}
	if e.RolledBack {
		if len(e.RollbackFailed) == 0 {
			b.WriteString("; changes already made were rolled back")
		} else {
			fmt.Fprintf(&b, "; roll-back failed for %d cpu(s): ", len(e.RollbackFailed))
			for i, f := range e.RollbackFailed {
				if i > 0 {
					b.WriteString("; ")
				}
				b.WriteString(strings.TrimPrefix(f.Error(), "tuning: "))
			}
		}
	}
	return b.String()
}

// Unwrap returns the per-CPU errors, failures first, then roll-back
// failures.
func (e *HotplugError) Unwrap() []error {
	errs := make([]error, 0, len(e.Failed)+len(e.RollbackFailed))
	for _, f := range e.Failed {
		errs = append(errs, f)
	}
	for _, f := range e.RollbackFailed {
		errs = append(errs, f)
	}
	return errs
}

// FailedCPUs returns the ids in Failed as a set.
func (e *HotplugError) FailedCPUs() CPUSet {
	ids := make([]int, len(e.Failed))
	for i, f := range e.Failed {
		ids[i] = f.CPU
	}
	return cpuset.Of(ids...)
}

// CPUSnapshot is the online state of a host's CPUs at one moment, as
// returned by KeepOnline and taken by RestoreCPUs. It marshals to JSON
// with the lists in kernel form:
//
//	{"online":"0-191","present":"0-191","hotpluggable":"0-191"}
type CPUSnapshot struct {
	// Online is the online list at the time.
	Online CPUSet `json:"online"`
	// Present is the present list at the time, for reference.
	Present CPUSet `json:"present"`
	// Hotpluggable is the CPUs that had a cpuN/online file.
	Hotpluggable CPUSet `json:"hotpluggable"`
}

// Snapshot returns the CPUSnapshot of the state s.
func (s CPUState) Snapshot() CPUSnapshot {
	return CPUSnapshot{Online: s.Online, Present: s.Present, Hotpluggable: s.Hotpluggable()}
}

// CPUSnapshot reads the current online state; see CPUState for the files.
func (h *Host) CPUSnapshot() (CPUSnapshot, error) {
	st, err := h.CPUState()
	if err != nil {
		return CPUSnapshot{}, err
	}
	return st.Snapshot(), nil
}

// CPUChange is the difference between the online state and the wanted
// one: what KeepOnline will write, computed without touching the host.
type CPUChange struct {
	// From is the online list now; To is the wanted one.
	From, To CPUSet
	// Online is the CPUs to bring online, done first.
	Online CPUSet
	// Offline is the CPUs to take offline, done after.
	Offline CPUSet
	// Blocked explains each CPU that should go offline but cannot (no
	// cpuN/online file: ErrNotHotpluggable). KeepOnline refuses a change
	// with blocked CPUs unless KeepOptions.BestEffort is set.
	Blocked []*CPUError
}

// IsEmpty reports whether the change writes nothing.
func (c CPUChange) IsEmpty() bool { return c.Online.IsEmpty() && c.Offline.IsEmpty() }

// String describes the change in one line per action, for dry runs and
// logs.
func (c CPUChange) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "online now: %s\nwanted:     %s\n", listOrNone(c.From), listOrNone(c.To))
	if c.IsEmpty() && len(c.Blocked) == 0 {
		b.WriteString("no change\n")
		return b.String()
	}
	if !c.Online.IsEmpty() {
		fmt.Fprintf(&b, "bring online: %s\n", c.Online)
	}
	if !c.Offline.IsEmpty() {
		fmt.Fprintf(&b, "take offline: %s\n", c.Offline)
	}
	for _, e := range c.Blocked {
		fmt.Fprintf(&b, "cannot take cpu%d offline: %s\n", e.CPU, strings.TrimPrefix(e.Err.Error(), "tuning: "))
	}
	return b.String()
}

func listOrNone(s CPUSet) string {
	if s.IsEmpty() {
		return "(none)"
	}
	return s.String()
}

// planKeep computes the change from st to want. It checks want against
// the present CPUs and refuses an empty want.
func (h *Host) planKeep(st CPUState, want CPUSet) (CPUChange, error) {
	c := CPUChange{From: st.Online, To: want}
	if want.IsEmpty() {
		return c, fmt.Errorf("%w: the wanted online list is empty (present: %s)", ErrAllOffline, st.Present)
	}
	if missing := want.Difference(st.Present); !missing.IsEmpty() {
		return c, fmt.Errorf("%w: cpu(s) %s not present (%s: %s)", ErrUnknownCPU, missing, h.cpuDir("present"), listOrNone(st.Present))
	}
	c.Online = want.Difference(st.Online)
	for _, id := range st.Online.Difference(want).IDs() {
		cpu, ok := st.CPU(id)
		if ok && cpu.Hotpluggable {
			c.Offline = c.Offline.With(id)
			continue
		}
		reason := fmt.Errorf("%w: no %s file", ErrNotHotpluggable, h.cpuDir(cpuName(id), "online"))
		if !ok {
			reason = fmt.Errorf("%w: online but no %s directory", ErrNotHotpluggable, h.cpuDir(cpuName(id)))
		}
		c.Blocked = append(c.Blocked, &CPUError{CPU: id, Online: false, Err: reason})
	}
	return c, nil
}

// PlanKeepOnline computes, without writing anything, what KeepOnline(want)
// would do: the CPUs to bring online, those to take offline, and those
// that cannot go offline. It reads the files CPUState reads. An empty want
// is ErrAllOffline; a CPU that is not present is ErrUnknownCPU.
func (h *Host) PlanKeepOnline(want CPUSet) (CPUChange, error) {
	st, err := h.CPUState()
	if err != nil {
		return CPUChange{}, err
	}
	return h.planKeep(st, want)
}

// KeepOptions tunes KeepOnline. The zero value (or nil) is the default.
type KeepOptions struct {
	// BestEffort keeps every change that succeeded when some CPU fails,
	// skips CPUs that cannot go offline, and reports both in a
	// *HotplugError. Default false: the first failure rolls back every
	// change already made, and a CPU that cannot go offline makes
	// KeepOnline refuse before writing anything.
	BestEffort bool
}

// KeepOnline makes want the set of online CPUs, as the Arm Neoverse Tomcat
// tuning guide's loop of
// `echo 0 > /sys/devices/system/cpu/cpuN/online` does: it first brings
// online the CPUs of want that are offline, then takes offline the online
// CPUs outside want, by writing "1" or "0" to
// /sys/devices/system/cpu/cpuN/online. It then re-reads
// /sys/devices/system/cpu/online and checks the result is want. It needs
// root (CAP_SYS_ADMIN).
//
// It returns the snapshot taken before the change, for RestoreCPUs; the
// snapshot is valid even when an error is returned. It refuses an empty
// want (ErrAllOffline) and CPUs that are not present (ErrUnknownCPU)
// before writing anything. A CPU that cannot be changed is reported in a
// *HotplugError naming each CPU and the kernel's reason (errors.Is with
// syscall.EBUSY, os.ErrPermission, ErrNotHotpluggable, ErrNotApplied);
// unless opts.BestEffort is set, the CPUs already changed are put back
// first. ctx is checked between CPUs; when it is done the change stops
// and is rolled back like a failure.
func (h *Host) KeepOnline(ctx context.Context, want CPUSet, opts *KeepOptions) (CPUSnapshot, error) {
	if opts == nil {
		opts = &KeepOptions{}
	}
	st, err := h.CPUState()
	if err != nil {
		return CPUSnapshot{}, err
	}
	snap := st.Snapshot()
	plan, err := h.planKeep(st, want)
	if err != nil {
		return snap, err
	}
	if len(plan.Blocked) > 0 && !opts.BestEffort {
		return snap, &HotplugError{Failed: plan.Blocked}
	}
	herr := h.apply(ctx, plan, want, !opts.BestEffort)
	if herr != nil && opts.BestEffort {
		herr.Failed = append(plan.Blocked, herr.Failed...)
	} else if len(plan.Blocked) > 0 {
		herr = &HotplugError{Failed: plan.Blocked}
	}
	if herr != nil {
		return snap, herr
	}
	return snap, nil
}

// RestoreCPUs puts the online state of snap back: it brings online the
// CPUs of snap.Online that are offline, then takes offline the online
// CPUs outside it, and verifies the online list, writing
// /sys/devices/system/cpu/cpuN/online. Restoring a state that is already
// current writes nothing, so it is safe to call twice. It is best effort:
// a CPU that fails does not stop the others, and every failure is
// reported in a *HotplugError. It needs root.
func (h *Host) RestoreCPUs(ctx context.Context, snap CPUSnapshot) error {
	if snap.Online.IsEmpty() {
		return fmt.Errorf("%w: the snapshot's online list is empty", ErrAllOffline)
	}
	st, err := h.CPUState()
	if err != nil {
		return err
	}
	want := snap.Online
	var missing []*CPUError
	for _, id := range want.Difference(st.Present).IDs() {
		missing = append(missing, &CPUError{CPU: id, Online: true,
			Err: fmt.Errorf("%w: cpu%d was online in the snapshot but is not present now (present: %s)", ErrUnknownCPU, id, listOrNone(st.Present))})
	}
	want = want.Intersect(st.Present)
	if want.IsEmpty() {
		return &HotplugError{Failed: missing}
	}
	plan, err := h.planKeep(st, want)
	if err != nil {
		return err
	}
	herr := h.apply(ctx, plan, want, false)
	failed := append(missing, plan.Blocked...)
	if herr != nil {
		herr.Failed = append(failed, herr.Failed...)
		return herr
	}
	if len(failed) > 0 {
		return &HotplugError{Failed: failed}
	}
	return nil
}

// apply writes plan: online first, then offline. With rollback, the first
// failure stops it and the CPUs already changed are put back. It verifies
// the online list at the end. It never takes the last online CPU offline.
func (h *Host) apply(ctx context.Context, plan CPUChange, want CPUSet, rollback bool) *HotplugError {
	type step struct {
		cpu    int
		online bool
	}
	var steps, done []step
	for _, id := range plan.Online.IDs() {
		steps = append(steps, step{id, true})
	}
	for _, id := range plan.Offline.IDs() {
		steps = append(steps, step{id, false})
	}
	herr := &HotplugError{}
	online := plan.From
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			herr.Failed = append(herr.Failed, &CPUError{CPU: s.cpu, Online: s.online, Err: fmt.Errorf("not attempted: %w", err)})
			break
		}
		if !s.online && online.Without(s.cpu).IsEmpty() {
			herr.Failed = append(herr.Failed, &CPUError{CPU: s.cpu, Online: false, Err: fmt.Errorf("%w: cpu%d is the last one online", ErrAllOffline, s.cpu)})
			if rollback {
				break
			}
			continue
		}
		if err := h.writeOnline(s.cpu, s.online); err != nil {
			herr.Failed = append(herr.Failed, &CPUError{CPU: s.cpu, Online: s.online, Err: err})
			if rollback {
				break
			}
			continue
		}
		done = append(done, s)
		if s.online {
			online = online.With(s.cpu)
		} else {
			online = online.Without(s.cpu)
		}
	}
	if len(herr.Failed) == 0 {
		// Verify against the kernel's own list.
		got, err := h.OnlineCPUs()
		if err != nil {
			herr.Failed = append(herr.Failed, &CPUError{CPU: -1, Online: true, Err: err})
		} else {
			expect := online
			for _, id := range got.Difference(expect).IDs() {
				herr.Failed = append(herr.Failed, &CPUError{CPU: id, Online: false,
					Err: fmt.Errorf("%w: cpu%d is still in %s (%s)", ErrNotApplied, id, h.cpuDir("online"), got)})
			}
			for _, id := range expect.Difference(got).IDs() {
				herr.Failed = append(herr.Failed, &CPUError{CPU: id, Online: true,
					Err: fmt.Errorf("%w: cpu%d is missing from %s (%s)", ErrNotApplied, id, h.cpuDir("online"), got)})
			}
		}
	}
	if len(herr.Failed) == 0 {
		return nil
	}
	if rollback {
		herr.RolledBack = true
		// Undo in reverse: offlined CPUs come back before onlined ones
		// leave, so the host never has fewer CPUs than it started with.
		for i := len(done) - 1; i >= 0; i-- {
			s := done[i]
			if err := h.writeOnline(s.cpu, !s.online); err != nil {
				herr.RollbackFailed = append(herr.RollbackFailed, &CPUError{CPU: s.cpu, Online: !s.online, Err: err})
			}
		}
	}
	return herr
}

// writeOnline writes "1" or "0" to cpuN/online.
func (h *Host) writeOnline(id int, online bool) error {
	v := "0"
	if online {
		v = "1"
	}
	return h.root.WriteAttr(h.cpuDir(cpuName(id), "online"), v)
}

// SetOnline brings one CPU online or takes it offline by writing "1" or
// "0" to /sys/devices/system/cpu/cpuN/online, then re-reads
// /sys/devices/system/cpu/online to verify. It needs root. A CPU already
// in the asked state is left alone. The error is a *CPUError; errors.Is
// matches ErrUnknownCPU (negative or not present), ErrNotHotpluggable
// (taking offline a CPU without cpuN/online), ErrAllOffline (the last
// online CPU), ErrNotApplied, os.ErrPermission or the kernel's errno
// (syscall.EBUSY, syscall.EINVAL).
func (h *Host) SetOnline(cpu int, online bool) error {
	fail := func(err error) error { return &CPUError{CPU: cpu, Online: online, Err: err} }
	if cpu < 0 || cpu > cpuset.MaxID {
		return fail(fmt.Errorf("%w: cpu id %d is out of range 0-%d", ErrUnknownCPU, cpu, cpuset.MaxID))
	}
	st, err := h.CPUState()
	if err != nil {
		return fail(err)
	}
	if !st.Present.Contains(cpu) {
		return fail(fmt.Errorf("%w: cpu%d is not present (present: %s)", ErrUnknownCPU, cpu, listOrNone(st.Present)))
	}
	if st.Online.Contains(cpu) == online {
		return nil
	}
	c, ok := st.CPU(cpu)
	if !ok || !c.Hotpluggable {
		return fail(fmt.Errorf("%w: no %s file", ErrNotHotpluggable, h.cpuDir(cpuName(cpu), "online")))
	}
	if !online && st.Online.Without(cpu).IsEmpty() {
		return fail(fmt.Errorf("%w: cpu%d is the last one online", ErrAllOffline, cpu))
	}
	if err := h.writeOnline(cpu, online); err != nil {
		return fail(err)
	}
	got, err := h.OnlineCPUs()
	if err != nil {
		return fail(err)
	}
	if got.Contains(cpu) != online {
		return fail(fmt.Errorf("%w: %s reads %q after the write", ErrNotApplied, h.cpuDir("online"), got.String()))
	}
	return nil
}
