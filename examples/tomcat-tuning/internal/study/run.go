//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/httpready"
	"github.com/nettune/nettune/internal/lockfile"
	"github.com/nettune/nettune/internal/rlimit"
	"github.com/nettune/nettune/internal/statedir"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// Results are what a run measured and did, as data for the caller to
// print or save.
type Results struct {
	// Steps are the runner's results, one per step (empty in plan mode).
	Steps []tuning.StepResult
	// Measured are the figures of the baseline, then of each measured
	// step, in order.
	Measured []loadgen.StepFigures
	// Baseline marks the steps of the plan that make the baseline.
	Baseline map[string]bool
	// Kept is true when -keep left the changes in place.
	Kept bool
	// LoadBound maps a measured step to why the load generator limited
	// one of its runs (loadgen.LoadBound); absent when none was.
	LoadBound map[string]string
	// Alpha is the significance level the uplifts are judged at.
	Alpha float64
	// Persisted are the persistent files and switches -persist made (the
	// step names of Persistence.Steps); Exported the files -export wrote.
	Persisted, Exported []string
	// Again is the starting configuration measured once more after the
	// last step (the drift guard); nil when it was not.
	Again *loadgen.StepFigures
	// Searches are the searched steps with every candidate's figures and
	// the choice (-search on).
	Searches []Search
	// SharedCPUs, when set, says the load ran on Tomcat's CPUs
	// (Options.LoadSharesCPUs, SharedCPUsText): it marks every figure.
	SharedCPUs string
	// CPUMethod is how Tomcat's CPUs were restricted, and why.
	CPUMethod CPUMethodChoice
	// Costs are where Tomcat's time went in each measured step's capacity
	// runs, and WarmUps each one's warm-up, by step name; a step without
	// a JVM to read has no cost. A step whose warm-up did not settle was
	// warmed up a second time (loadgen.StepOptions.Remeasure): WarmUps
	// holds that second warm-up, and FirstWarmUps the first.
	Costs        map[string]StepCost
	WarmUps      map[string]*loadgen.WarmUpResult
	FirstWarmUps map[string]*loadgen.WarmUpResult
	// Load is the load sizing of the baseline; nil when -connections
	// was given (or nothing was measured).
	Load *LoadSizing
}

// Used returns o as the run used it: Connections the count the load
// sizing chose, when it ran.
func (r Results) Used(o Options) Options {
	if r.Load != nil {
		o.Connections = r.Load.Connections
	}
	return o
}

// Comparison is the step table of the measured figures, every uplift
// judged by a Mann-Whitney U test at Alpha and a Hodges-Lehmann interval.
func (r Results) Comparison() loadgen.StepComparison {
	c, err := loadgen.CompareStepsWith(&stats.UpliftOptions{Alpha: r.Alpha}, r.Measured...)
	if err != nil {
		return loadgen.CompareSteps(r.Measured...)
	}
	return c
}

// Drift is the drift guard: the starting configuration measured again
// against the baseline, and the uplifts it makes untrustworthy.
func (r Results) Drift() (loadgen.Drift, bool) {
	if r.Again == nil || len(r.Measured) == 0 {
		return loadgen.Drift{}, false
	}
	d, err := r.Comparison().Drift(*r.Again)
	return d, err == nil
}

// run is one study in progress: the host found, the options, where it
// prints its progress, and what it has measured so far.
type run struct {
	h        Host
	o        Options
	log      io.Writer
	numa     *numa.Host
	findings *Findings
	// tomcat is the study's hold on the instance (journaled first); its
	// Instance is the one every restart and stop uses.
	tomcat *tomcatconf.RestartChange
	// place is where Tomcat and the load run now.
	place    Placement
	measured []loadgen.StepFigures
	bound    map[string]string
	// costs and warmUps are each measured step's cost and (last)
	// warm-up, by the name it was measured under; firstWarmUps the first
	// warm-up of a step warmed up twice.
	costs        map[string]StepCost
	warmUps      map[string]*loadgen.WarmUpResult
	firstWarmUps map[string]*loadgen.WarmUpResult
	jvmPID       int
	// pinLoad pins this process (the local load generator) to
	// place.Load before each measurement.
	pinLoad bool
	// clients are -load-host's clients, once their workers are in place.
	clients *remoteload.Clients
	// searches are the searches done so far.
	searches []Search
	// sizing is the load sizing of the baseline (-connections 0); nil
	// until done, or when -connections was given.
	sizing *LoadSizing
	// restarter and loader, when set, replace the restart of Tomcat and
	// the running of a load (a test's server, a count of the runs).
	restarter func(context.Context) error
	loader    loadgen.RunFunc
}

func newRun(h Host, o Options, log io.Writer) *run {
	r := &run{h: h, o: o, log: log, numa: numa.NewDefault(), findings: &Findings{}, place: InitialPlacement(h, o), bound: map[string]string{},
		costs: map[string]StepCost{}, warmUps: map[string]*loadgen.WarmUpResult{}, firstWarmUps: map[string]*loadgen.WarmUpResult{}}
	if h.Tomcat.Instance != nil {
		r.tomcat = &tomcatconf.RestartChange{Instance: *h.Tomcat.Instance, ReadyURL: h.NIC.URL}
	}
	return r
}

func (r *run) inst() *tomcatconf.Instance { return &r.tomcat.Instance }

// Plan prints every step's change or skip reason, then measures a
// baseline without changing the host: plan mode.
func Plan(ctx context.Context, h Host, o Options, log io.Writer) (Results, error) {
	rep, err := PlanSteps(ctx, h, o)
	if err != nil {
		return Results{}, err
	}
	WritePlan(log, rep.Steps)
	if !h.Live {
		fmt.Fprintln(log, "fixture root: no baseline measurement")
		return Results{}, nil
	}
	fmt.Fprintln(log, "== Baseline (nothing on the host changes) ==")
	r := newRun(h, o, log)
	if selfAff, err := r.numa.Affinity(os.Getpid()); err == nil {
		defer func() {
			if err := r.numa.RestoreAffinity(selfAff); err != nil {
				fmt.Fprintf(log, "restore this process's CPU affinity: %v\n", err)
			}
		}()
	}
	if o.LoadHost != "" {
		done, err := r.setupClient(ctx, nil)
		if err != nil {
			return Results{}, err
		}
		defer done()
	}
	target, cleanup, err := r.baselineTarget(ctx)
	if err != nil {
		return Results{}, err
	}
	defer cleanup()
	m, err := r.measure(ctx, "baseline", target, 0)
	if err != nil {
		return Results{}, err
	}
	return Results{Measured: []loadgen.StepFigures{m}, LoadBound: r.bound, CPUMethod: h.CPUs.Choice, Load: r.sizing,
		Costs: r.costs, WarmUps: r.warmUps, FirstWarmUps: r.firstWarmUps}, nil
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "   " + strings.ReplaceAll(s, "\n", "\n   ") + "\n"
}

// baselineTarget picks what plan mode measures: -url if it answers,
// else the local Tomcat started from a temporary copy of its
// CATALINA_BASE on a free port, else the built-in HelloWorld server.
func (r *run) baselineTarget(ctx context.Context) (string, func(), error) {
	nop := func() {}
	if r.o.URL != "" {
		fmt.Fprintf(r.log, "measuring %s\n", r.o.URL)
		return r.o.URL, nop, nil
	}
	if r.tomcat != nil && r.h.Tomcat.ConfigErr == nil {
		if ok, _ := httpready.Answers(ctx, r.h.NIC.URL, 2*time.Second); ok {
			fmt.Fprintf(r.log, "measuring the running Tomcat at %s\n", r.h.NIC.URL)
			return r.h.NIC.URL, nop, nil
		}
		u, stop, err := r.tempTomcat(ctx)
		if err == nil {
			fmt.Fprintf(r.log, "measuring a temporary copy of %s at %s\n", r.inst().Base, u)
			return u, stop, nil
		}
		fmt.Fprintf(r.log, "cannot start a temporary copy of the local Tomcat: %v\n", err)
	}
	hw, err := loadgen.StartHelloWorld("127.0.0.1:0")
	if err != nil {
		return "", nop, err
	}
	fmt.Fprintf(r.log, "no local Tomcat to measure: measuring nettune's built-in HelloWorld server at %s instead (not a Tomcat figure)\n", hw.URL)
	return hw.URL, func() { hw.Close() }, nil
}

// tempTomcat copies the instance's conf and webapps into a temporary
// CATALINA_BASE owned by the instance's user, moves its Connector to a
// free port and starts it as that user, the way the instance runs (its
// command and environment): never as root where the instance runs as
// another user.
//
// The copy's JVM dies with this process, even by kill -9
// (StartOptions.DieWithParent); this process holds a lock on the copy's
// folder, and the next run removes folders whose lock is free.
func (r *run) tempTomcat(ctx context.Context) (string, func(), error) {
	removeStaleCopies(r.log)
	top, err := os.MkdirTemp("", tempCopyPrefix)
	if err != nil {
		return "", nil, err
	}
	lock, err := lockCopy(top)
	if err == nil {
		// The copy's user must reach its base inside.
		err = os.Chmod(top, 0o755)
	}
	if err != nil {
		os.RemoveAll(top)
		return "", nil, err
	}
	dir := filepath.Join(top, "base")
	fail := func(err error) (string, func(), error) {
		os.RemoveAll(top)
		lock.Close()
		return "", nil, err
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	in, err := r.inst().CopyTo(ctx, dir, r.h.Tomcat.Query, port)
	if err != nil {
		return fail(err)
	}
	u := fmt.Sprintf("http://127.0.0.1:%d%s", port, loadgen.HelloWorldPath)
	res, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: u, DieWithParent: true})
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(r.log, "started the temporary copy %s: JVM %d as %s\n", dir, res.PID, res.User)
	if err := r.splitPlanCPUs(ctx, res.PID); err != nil {
		in.Stop(context.WithoutCancel(ctx), nil)
		return fail(err)
	}
	return u, func() {
		if _, err := in.Stop(context.Background(), nil); err != nil {
			fmt.Fprintf(r.log, "stop the temporary Tomcat: %v\n", err)
		}
		os.RemoveAll(top)
		lock.Close()
	}, nil
}

// splitPlanCPUs splits the CPUs between plan mode's temporary copy (JVM
// pid) and a load generator on this host, by affinity: the copy on the
// CPUs the study gives Tomcat (all but one when that leaves none), the
// load on the rest, whatever -cpu-method says (plan mode takes no CPU
// offline). It says so, or that one CPU cannot be split.
func (r *run) splitPlanCPUs(ctx context.Context, pid int) error {
	if r.o.LoadHost != "" {
		return nil // the load runs on the client
	}
	on := r.h.CPUs.Online
	tom := r.h.CPUs.Tomcat
	if tom.IsEmpty() || on.Difference(tom).IsEmpty() {
		if on.Len() < 2 {
			fmt.Fprintf(r.log, "note: one online CPU (%s): the temporary copy and the load generator share it, and the baseline measures both\n", on)
			return nil
		}
		tom = on.First(on.Len() - 1)
	}
	load := on.Difference(tom)
	pin, err := r.numa.PlanPin(pid, tom)
	if err == nil {
		err = pin.Apply(ctx)
	}
	if err != nil {
		return fmt.Errorf("pin the temporary copy's JVM %d to CPUs %s: %w", pid, tom, err)
	}
	r.place, r.pinLoad = Placement{Tomcat: tom, Load: load}, true
	fmt.Fprintf(r.log, "CPUs split by affinity: the temporary copy's JVM %d on CPUs %s, the load generator on CPUs %s (plan mode takes no CPU offline)\n",
		pid, tom, load)
	return nil
}

// tempCopyPrefix names the folders of plan mode's temporary copies in the
// temporary directory (the CATALINA_BASE is its base/); copyLock is the
// lock file its owner holds in one.
const (
	tempCopyPrefix = "tomcat-tuning-base-"
	copyLock       = ".nettune-owner.lock"
)

// lockCopy takes the owner's lock of a temporary copy: an flock(2) the
// kernel releases when this process dies.
func lockCopy(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, copyLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// removeStaleCopies removes the temporary copies a killed run left: those
// whose owner's lock is free and where no JVM of the copy runs.
func removeStaleCopies(log io.Writer) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempCopyPrefix+"*"))
	for _, dir := range dirs {
		f, err := os.Open(filepath.Join(dir, copyLock))
		if err != nil {
			continue // not ours, or still being made
		}
		free := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
		if free {
			if jvms, err := (&tomcatconf.Instance{Base: filepath.Join(dir, "base")}).JVMs(); err == nil && len(jvms) == 0 {
				if err := os.RemoveAll(dir); err == nil {
					fmt.Fprintf(log, "removed %s, the temporary copy of a run that did not end\n", dir)
				}
			}
		}
		f.Close()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Apply runs the plan with a journal (o.Journal), restarting Tomcat and
// measuring after each step, and puts Tomcat back at the end (or leaves
// it tuned with o.Keep). It prints its progress to log and returns what it
// measured, also when it fails part-way.
func Apply(ctx context.Context, h Host, o Options, log io.Writer) (Results, error) {
	if err := checkApply(h, o); err != nil {
		return Results{}, err
	}
	r := newRun(h, o, log)
	r.pinLoad = o.Method() == MethodAffinity && o.LoadHost == ""
	steps, err := Steps(h, o, r.findings)
	if err != nil {
		return Results{}, err
	}
	res := Results{Baseline: map[string]bool{}, Alpha: o.Alpha, SharedCPUs: SharedCPUsText(h, o), CPUMethod: h.CPUs.Choice}
	for _, st := range steps {
		res.Baseline[st.Name] = st.Baseline
	}
	// One study per CATALINA_BASE, and one owner of the host's CPU and
	// NIC state: taken before anything is read for the run or changed,
	// released by the kernel if this process dies.
	unlock, err := lockStudy(h, o, steps)
	if err != nil {
		return res, err
	}
	defer unlock()
	if len(o.Targets) > 0 {
		fmt.Fprintf(log, "requests: the %d targets of %s, round-robin on each connection, on %s\n", len(o.Targets), o.TargetsFile, h.NIC.URL)
	}
	fmt.Fprintf(log, "estimated duration: likely about %s, at most about %s\n", Likely(h, o, steps).Round(time.Second), Estimate(h, o, steps).Round(time.Second))
	if res.SharedCPUs != "" {
		fmt.Fprintln(log, res.SharedCPUs)
	}
	// A Tomcat that runs now is restarted as the user it runs as, and
	// started again that way at the end. Checked before the journal is
	// created: a refusal changes nothing.
	if err := r.checkRunning(ctx); err != nil {
		return res, err
	}
	j, err := createJournal(o.Journal)
	if err != nil {
		return res, err
	}
	defer j.Close()
	cpuHost, err := tuning.New(h.Root)
	if err != nil {
		return res, err
	}
	tomcatSeq, err := r.holdTomcat(j)
	if err != nil {
		return res, err
	}
	if o.LoadHost != "" {
		done, err := r.setupClient(ctx, j)
		if err != nil {
			return res, errors.Join(err, r.finishTomcat(context.WithoutCancel(ctx)), j.Reverted(tomcatSeq))
		}
		defer done()
	}
	restore, err := r.keepOwnAffinity(cpuHost)
	if err != nil {
		return res, err
	}
	defer restore()

	prog := NewProgress(Budget(h, o, steps), time.Now)
	runner := &tuning.Runner{Journal: j, Reverters: Reverters(cpuHost), Keep: o.Keep,
		AfterStep: func(ctx context.Context, sr tuning.StepResult) error {
			if err := r.afterStep(ctx, steps, sr); err != nil {
				return err
			}
			prog.Done(sr.Name)
			fmt.Fprintln(log, prog.Line())
			return nil
		}}
	results, runErr := runner.Run(ctx, announce(log, steps))
	res.Steps, res.Measured, res.LoadBound, res.Searches, res.Load = results, r.measured, r.bound, r.searches, r.sizing
	res.Costs, res.WarmUps, res.FirstWarmUps = r.costs, r.warmUps, r.firstWarmUps
	if runErr == nil {
		runErr = r.afterSteps(ctx, j, cpuHost, steps, prog, &res)
	}
	endErr := r.endTomcat(ctx, j, tomcatSeq, runErr, &res)
	return res, errors.Join(runErr, endErr)
}

// afterSteps is -apply's work once every step ran and was reverted (or
// kept): the drift guard, unless -keep, then -persist or -export.
func (r *run) afterSteps(ctx context.Context, j *tuning.Journal, cpuHost *tuning.Host, steps []tuning.Step, prog *Progress, res *Results) error {
	if !r.o.Keep {
		again, err := r.driftGuard(ctx, j, cpuHost, steps)
		res.Again = again
		if again != nil {
			prog.Done(again.Name)
			fmt.Fprintln(r.log, prog.Line())
		}
		if err != nil {
			return err
		}
	}
	if r.o.Persist || r.o.Export != "" {
		return r.persist(ctx, j, cpuHost, res)
	}
	return nil
}

// createJournal creates the run's journal at path, and its directory; a
// journal a run left unreverted is an error that says how to revert it.
func createJournal(path string) (*tuning.Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	j, err := tuning.CreateJournal(path)
	if errors.Is(err, tuning.ErrPendingJournal) {
		return nil, pendingJournalError(path, err)
	}
	return j, err
}

// checkApply refuses an -apply that cannot run on h before anything is
// taken or changed: an instance this user cannot read or none, a target
// that is not the instance, a load that would share Tomcat's CPUs.
func checkApply(h Host, o Options) error {
	if h.Tomcat.ConfigErr != nil {
		return fmt.Errorf("-apply edits the instance's configuration, which this user cannot read (run as root): %w", h.Tomcat.ConfigErr)
	}
	if h.Tomcat.Instance == nil {
		return fmt.Errorf("-apply needs a Tomcat instance (install tomcat10 + tomcat10-examples, or set -catalina-home/-catalina-base): %v", h.Tomcat.Err)
	}
	if err := checkTarget(h); err != nil {
		return err
	}
	return checkLoadCPUs(h, o)
}

// holdTomcat journals the study's hold on Tomcat and returns its record's
// sequence number. The study restarts Tomcat with the tuned files; a run
// that is killed leaves that JVM up. This record lets -revert stop it, and
// start Tomcat again if it ran before, once the files are back.
func (r *run) holdTomcat(j *tuning.Journal) (int, error) {
	undo, err := tuning.NewUndo(r.tomcat.Kind(), r.tomcat)
	if err != nil {
		return 0, err
	}
	seq, err := j.Begin(StepTomcat, []tuning.Undo{undo})
	if err != nil {
		return 0, err
	}
	return seq, j.Applied(seq)
}

// keepOwnAffinity returns the func that puts this process's CPU affinity
// back as it is now (the run pins the load generator) and reports it and
// the online CPUs.
func (r *run) keepOwnAffinity(cpuHost *tuning.Host) (func(), error) {
	selfAff, err := r.numa.Affinity(os.Getpid())
	if err != nil {
		return nil, err
	}
	return func() {
		if err := r.numa.RestoreAffinity(selfAff); err != nil {
			fmt.Fprintf(r.log, "restore this process's CPU affinity: %v\n", err)
		}
		if cpus, err := r.numa.AllowedCPUs(os.Getpid()); err == nil {
			fmt.Fprintf(r.log, "CPU affinity of this process: %s\n", cpus)
		}
		if on, err := cpuHost.OnlineCPUs(); err == nil {
			fmt.Fprintf(r.log, "online CPUs: %s (%s at start)\n", on, r.h.CPUs.Online)
		}
	}, nil
}

// endTomcat ends the hold on Tomcat (tomcatSeq): the JVM was started with
// the tuned files, and with -keep (and no error) it stays up as tuned;
// otherwise Tomcat is put back as found and the hold marked reverted.
func (r *run) endTomcat(ctx context.Context, j *tuning.Journal, tomcatSeq int, runErr error, res *Results) error {
	if r.o.Keep && runErr == nil {
		res.Kept = true
		fmt.Fprintf(r.log, "Tomcat left running as tuned (JVM %d)\n", r.jvmPID)
		return nil
	}
	if err := r.finishTomcat(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	return j.Reverted(tomcatSeq)
}

// afterStep is -apply's work once the runner applied step sr (or the
// baseline's steps): place Tomcat and the load, restart Tomcat and
// measure, and search the step's setting.
func (r *run) afterStep(ctx context.Context, steps []tuning.Step, sr tuning.StepResult) error {
	fmt.Fprintf(r.log, "== measure %s ==\n", sr.Name)
	if sr.Name == "baseline" {
		r.place = baselinePlacement(r.h, r.o, steps)
	} else {
		r.place = PlacementAfter(r.h, r.o, sr.Name, r.place)
	}
	if err := r.measureStep(ctx, sr.Name); err != nil {
		return err
	}
	if s := r.findings.Searches[sr.Name]; s != nil && sr.Status == tuning.StatusApplied {
		return r.search(ctx, s)
	}
	return nil
}

// lockStudy takes the state directory's lock of the instance's
// CATALINA_BASE and, when a step changes CPUs or NIC channels, the lock of
// the host's CPU and NIC state. A lock another study holds is an error
// naming its PID; the returned func releases what was taken.
func lockStudy(h Host, o Options, steps []tuning.Step) (func(), error) {
	name, err := statedir.BaseLock(h.Tomcat.Instance.Base)
	if err != nil {
		return nil, err
	}
	var held []*lockfile.Lock
	release := func() {
		for _, l := range held {
			l.Unlock()
		}
	}
	names := []string{name}
	if o.Method() == MethodHotplug || hostWide(h, o, steps) {
		names = append(names, statedir.HostLock)
	}
	for _, n := range names {
		l, err := statedir.Lock(statedir.Dir(), n)
		if err != nil {
			release()
			what := "Tomcat at " + h.Tomcat.Instance.Base
			if n == statedir.HostLock {
				what = "the host's CPUs and NIC channels"
			}
			var he *lockfile.HeldError
			if errors.As(err, &he) && he.PID > 0 {
				return nil, fmt.Errorf("another study (PID %d) is changing %s: wait for it to end, or stop it (SIGINT reverts its changes): %w", he.PID, what, err)
			}
			return nil, fmt.Errorf("another study is changing %s: %w", what, err)
		}
		held = append(held, l)
	}
	return release, nil
}

// hostWide reports whether one of steps changes host-wide state on h: a
// HostLock step that runs here (its Measures is not 0). A nic-queues step
// on the loopback or numa-local on one node is skipped whatever happens,
// so a study of them does not hold back another study of another Tomcat
// on the same host.
func hostWide(h Host, o Options, steps []tuning.Step) bool {
	for _, s := range steps {
		n := kindOf(s.Name).Needs
		if n.HostLock && (n.Measures == nil || n.Measures(h, o) > 0) {
			return true
		}
	}
	return false
}

// setupClient puts the worker on each of -load-host's clients
// (remoteload.Connect), journaling each directory in j when not nil. It
// returns the function that removes the directories (and marks their
// records reverted) at the end of the run.
func (r *run) setupClient(ctx context.Context, j *tuning.Journal) (func(), error) {
	hosts, err := remoteload.ParseLoadHosts(r.o.LoadHost, r.o.SSHConfig)
	if err != nil {
		return nil, err
	}
	cs, done, err := remoteload.Connect(ctx, hosts, remoteload.SetupOptions{
		Worker: r.o.LoadWorker, Journal: j, JournalPath: r.o.Journal, Log: r.log})
	if err != nil {
		return nil, err
	}
	r.clients = cs
	return done, nil
}

// currentMaxThreads is the pool h's Tomcat runs with now (200, Tomcat's
// default, when it cannot be read).
func currentMaxThreads(h Host) int {
	if h.Tomcat.Usable() {
		if c, err := tomcatconf.Load(h.Tomcat.Instance.ServerXML()); err == nil {
			if n, err := c.MaxThreads(h.Tomcat.Query); err == nil {
				return n
			}
		}
	}
	return 200
}

// persist makes the kept steps persistent (-persist), each write journaled
// through a second Runner that keeps them, or exports them (-export).
func (r *run) persist(ctx context.Context, j *tuning.Journal, cpuHost *tuning.Host, res *Results) error {
	keep := KeepSteps(*res, r.o.PersistSteps)
	fmt.Fprintf(r.log, "== keep: %s ==\n", firstNonEmpty(strings.Join(keep, ", "), "no step gained significantly"))
	p, err := PlanPersist(r.h, r.o, r.findings, keep)
	if err != nil {
		return err
	}
	for _, n := range p.Notes {
		fmt.Fprintf(r.log, "note: %s\n", n)
	}
	if r.o.Export != "" {
		files, err := p.Export(r.h, r.o.Export)
		res.Exported = files
		if err != nil {
			return err
		}
		fmt.Fprintf(r.log, "exported to %s: %s\n", r.o.Export, strings.Join(files, ", "))
	}
	if !r.o.Persist {
		return nil
	}
	steps := p.Steps(r.h)
	if len(steps) == 0 {
		fmt.Fprintln(r.log, "nothing to make persistent")
		return nil
	}
	runner := &tuning.Runner{Journal: j, Reverters: Reverters(cpuHost), Keep: true}
	results, err := runner.Run(ctx, announce(r.log, steps))
	for _, sr := range results {
		if sr.Status == tuning.StatusApplied {
			res.Persisted = append(res.Persisted, sr.Name)
		}
	}
	res.Steps = append(res.Steps, results...)
	return err
}

// driftGuard measures the starting configuration once more, now that the
// runner has reverted every step, so that a drift over the study (a JIT
// still compiling, the host's neighbours) shows against the baseline.
// Under systemd the baseline's unit drop-in (CPUAffinity=, LimitNOFILE=)
// was reverted with the rest: its steps are applied again through a
// Runner on the run's journal, measured, and reverted (againUnderUnit).
// Under hotplug the baseline's CPU set is reverted with the rest and not
// taken offline again: it says so and measures nothing.
func (r *run) driftGuard(ctx context.Context, j *tuning.Journal, cpuHost *tuning.Host, steps []tuning.Step) (*loadgen.StepFigures, error) {
	if len(r.measured) < 2 {
		return nil, nil
	}
	if r.o.Method() != MethodAffinity && anyStep(steps, true, func(n Needs) bool { return n.Hotplug }) {
		fmt.Fprintln(r.log, "drift guard: not measured: under -cpu-method hotplug the baseline's CPUs are reverted with the other steps (use -cpu-method affinity)")
		return nil, nil
	}
	r.place = baselinePlacement(r.h, r.o, steps)
	if r.h.Tomcat.Systemd() && anyStep(steps, true, func(n Needs) bool { return n.UnitDropIn }) {
		return r.againUnderUnit(ctx, j, cpuHost, steps)
	}
	fmt.Fprintln(r.log, "== measure the baseline again (drift guard) ==")
	m, err := r.measureAgain(ctx)
	if err != nil {
		return nil, fmt.Errorf("drift guard: %w", err)
	}
	return m, nil
}

// measureAgain restarts Tomcat and measures the baseline again.
func (r *run) measureAgain(ctx context.Context) (*loadgen.StepFigures, error) {
	if err := r.restart(ctx); err != nil {
		return nil, err
	}
	m, err := r.measure(ctx, "baseline again", r.h.NIC.URL, r.jvmPID)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// checkRunning refuses two JVMs of the base, or a JVM beside the unit, and
// notes whether Tomcat runs now (and as whom).
func (r *run) checkRunning(ctx context.Context) error {
	in := r.inst()
	jvms, err := in.JVMs()
	if err != nil {
		return err
	}
	if len(jvms) > 1 {
		var pids []string
		for _, j := range jvms {
			pids = append(pids, strconv.Itoa(j.PID))
		}
		return fmt.Errorf("%d JVMs run with -Dcatalina.base=%s (PIDs %s): stop all but one before -apply", len(jvms), in.Base, strings.Join(pids, ", "))
	}
	if r.h.Tomcat.Systemd() {
		return r.checkUnit(ctx, jvms)
	}
	if len(jvms) == 1 {
		r.tomcat.WasRunning = true
		j := jvms[0]
		who := firstNonEmpty(j.User, strconv.Itoa(j.UID))
		if in.User != "" && in.User != who {
			fmt.Fprintf(r.log, "note: JVM %d runs as %s, not as %s: the study restarts it as %s, as it found it\n", j.PID, who, in.User, who)
		}
		if in.User != who {
			in.User, in.Group = who, ""
		}
		fmt.Fprintf(r.log, "Tomcat runs: JVM %d as %s; the study restarts it as %s and starts it again at the end\n", j.PID, who, who)
	}
	return nil
}

// checkUnit refuses a JVM of the base beside the unit (it would fight
// the unit for the port) and notes whether the unit runs Tomcat now.
func (r *run) checkUnit(ctx context.Context, jvms []tomcatconf.JVM) error {
	in := r.inst()
	st, err := in.Unit().State(ctx)
	if err != nil {
		return err
	}
	for _, j := range jvms {
		if j.PID != st.MainPID {
			return fmt.Errorf("JVM %d (user %s) runs with -Dcatalina.base=%s beside %s (MainPID %d): stop it before -apply",
				j.PID, j.User, in.Base, in.Service, st.MainPID)
		}
	}
	r.tomcat.WasRunning = st.Active()
	if r.tomcat.WasRunning {
		fmt.Fprintf(r.log, "Tomcat runs under %s (MainPID %d, %s); the study restarts it with systemctl and leaves it active at the end\n",
			in.Service, st.MainPID, st.UnitFileState)
	} else {
		fmt.Fprintf(r.log, "%s is %s (%s); the study starts it with systemctl and stops it at the end\n", in.Service, st.ActiveState, st.UnitFileState)
	}
	return nil
}

// announce wraps each step's Prepare to print the change (or why it is
// skipped) as the Runner reaches it.
func announce(w io.Writer, steps []tuning.Step) []tuning.Step {
	out := make([]tuning.Step, len(steps))
	for i, st := range steps {
		prepare := st.Prepare
		st.Prepare = func(ctx context.Context) (*tuning.Change, error) {
			ch, err := prepare(ctx)
			fmt.Fprintf(w, "== %s: %s ==\n", st.Name, st.Title)
			if err != nil {
				return ch, err
			}
			fmt.Fprint(w, indent(ch.Describe))
			switch {
			case ch.Skip != "":
				fmt.Fprintf(w, "   skipped: %s\n", ch.Skip)
			case ch.Apply == nil:
				fmt.Fprintln(w, "   unchanged")
			}
			if apply, kinds := ch.Apply, undoKinds(ch); apply != nil && kinds[(tomcatconf.DropInChange{}).Kind()] {
				ch.Apply = func(ctx context.Context) error {
					if err := apply(ctx); err != nil {
						return err
					}
					fmt.Fprintln(w, dropInWritten(ch))
					return nil
				}
			}
			return ch, nil
		}
		out[i] = st
	}
	return out
}

func undoKinds(ch *tuning.Change) map[string]bool {
	k := map[string]bool{}
	for _, u := range ch.Undo {
		k[u.Kind] = true
	}
	return k
}

// finishTomcat stops the JVM the study started and, when Tomcat was
// running before, starts it again with the (reverted or kept) files, as
// the user it ran as, and waits until it answers.
func (r *run) finishTomcat(ctx context.Context) error {
	if err := r.tomcat.Undo(ctx); err != nil {
		return err
	}
	if !r.tomcat.WasRunning {
		return nil
	}
	res := r.tomcat.Last
	if r.h.Tomcat.Systemd() {
		fmt.Fprintf(r.log, "Tomcat started again as found, through systemd (%s): MainPID %d is the JVM, as %s, answering %s\n", res.Command, res.PID, res.User, r.h.NIC.URL)
		return nil
	}
	fmt.Fprintf(r.log, "Tomcat started again as found: JVM %d as %s, answering %s\n", res.PID, res.User, r.h.NIC.URL)
	return nil
}

// restart stops and starts Tomcat (through its unit under systemd, with
// the drop-in's limits; else under the raised open-files limit) and, with
// -cpu-method affinity, pins the JVM to the placement's CPUs.
func (r *run) restart(ctx context.Context) error {
	if r.restarter != nil {
		return r.restarter(ctx)
	}
	systemd := r.h.Tomcat.Systemd()
	if systemd {
		r.inst().NoFile = 0 // the open-files step's drop-in sets it, journaled
	} else {
		r.inst().NoFile = rlimit.DefaultNoFile
	}
	if !systemd && r.o.Method() == MethodAffinity {
		// Launched on its CPUs, the JVM sizes its collector and its GC
		// and compiler threads by them: pinned only once started, a
		// baseline launched beside the load's CPUs ran G1 on 2 CPUs, and
		// the steps after it Serial on 1.
		r.inst().CPUs = r.place.Tomcat.IDs()
		defer func() { r.inst().CPUs = nil }()
	}
	if err := r.tomcat.Apply(ctx); err != nil {
		return err
	}
	res := r.tomcat.Last
	r.jvmPID = res.PID
	if systemd {
		fmt.Fprintf(r.log, "restarted Tomcat through systemd (%s): MainPID %d is the JVM, as %s, ready in %s, open files %d, CPUs %s\n",
			res.Command, res.PID, res.User, res.Ready.Round(time.Millisecond), res.NoFile, cpuset.Of(res.CPUs...))
	} else {
		fmt.Fprintf(r.log, "restarted Tomcat: JVM %d as %s, ready in %s, open files %d", res.PID, res.User, res.Ready.Round(time.Millisecond), res.NoFile)
		if res.NoFile < rlimit.DefaultNoFile {
			fmt.Fprintf(r.log, " (asked %d: the hard limit caps it)", rlimit.DefaultNoFile)
		}
		fmt.Fprintln(r.log)
	}
	if r.o.Method() != MethodAffinity {
		return nil
	}
	cpus := r.place.Tomcat
	if systemd && cpuset.Of(res.CPUs...).Equal(cpus) {
		return nil
	}
	pin, err := r.numa.PlanPin(res.PID, cpus)
	if err != nil {
		return err
	}
	if err := pin.Apply(ctx); err != nil {
		return err
	}
	if systemd {
		fmt.Fprintf(r.log, "pinned JVM %d to CPUs %s (no CPUAffinity= in the drop-in)\n", res.PID, cpus)
	} else {
		fmt.Fprintf(r.log, "pinned JVM %d to CPUs %s\n", res.PID, cpus)
	}
	return nil
}

// measureStep restarts Tomcat and measures it. After the baseline it
// takes the thread census the threads step is planned from.
func (r *run) measureStep(ctx context.Context, name string) error {
	if err := r.restart(ctx); err != nil {
		return err
	}
	if arg := kindOf(name).Needs.JVMArg; arg != "" {
		if err := checkJVMArg(r.jvmPID, arg); err != nil {
			return err
		}
		fmt.Fprintf(r.log, "%s: the JVM %d runs with %s\n", name, r.jvmPID, arg)
	}
	m, err := r.measure(ctx, name, r.h.NIC.URL, r.jvmPID)
	if err != nil {
		return err
	}
	r.measured = append(r.measured, m)
	if name == "baseline" && r.needsCensus() {
		rec, err := r.census(ctx)
		if err != nil {
			return err
		}
		r.findings.Census = &rec
	}
	return nil
}

// needsCensus: a step of the plan is planned from the thread census.
func (r *run) needsCensus() bool {
	for _, s := range r.o.Steps {
		if kindOf(s).Needs.Census {
			return true
		}
	}
	return false
}
