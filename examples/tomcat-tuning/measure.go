//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/httpready"
	"github.com/nettune/nettune/internal/rlimit"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// planOnly prints every step's change or skip reason, then measures a
// baseline without changing the host.
func planOnly(ctx context.Context, w io.Writer, s *study, steps []tuning.Step) error {
	fmt.Fprintln(w, "== Plan (nothing is changed without -apply) ==")
	for i, st := range steps {
		ch, err := st.Prepare(ctx)
		fmt.Fprintf(w, "%d. %s: %s\n", i+1, st.Name, st.Title)
		switch {
		case err != nil:
			fmt.Fprintf(w, "   cannot plan: %v\n", err)
		case ch.Skip != "":
			if ch.Describe != "" {
				fmt.Fprint(w, indent(ch.Describe))
			}
			fmt.Fprintf(w, "   skipped: %s\n", ch.Skip)
		case ch.Apply == nil:
			fmt.Fprintf(w, "   unchanged: %s\n", firstNonEmpty(strings.TrimSpace(ch.Describe), "nothing to do"))
		default:
			fmt.Fprint(w, indent(ch.Describe))
		}
	}
	if !s.live {
		fmt.Fprintln(w, "fixture root: no baseline measurement")
		return nil
	}
	fmt.Fprintln(w, "== Baseline (nothing on the host changes) ==")
	target, cleanup, err := s.baselineTarget(ctx)
	if err != nil {
		return err
	}
	defer cleanup()
	m, err := s.load(ctx, "baseline", target, 0)
	if err != nil {
		return err
	}
	fmt.Fprint(w, loadgen.CompareSteps(m).Text())
	fmt.Fprint(w, s.legend(m))
	fmt.Fprintln(w, "-apply runs the plan, measuring after each step")
	return nil
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
func (s *study) baselineTarget(ctx context.Context) (string, func(), error) {
	nop := func() {}
	if s.o.url != "" {
		fmt.Fprintf(s.w, "measuring %s\n", s.o.url)
		return s.o.url, nop, nil
	}
	if s.inst != nil {
		if ok, _ := httpready.Answers(ctx, s.url, 2*time.Second); ok {
			fmt.Fprintf(s.w, "measuring the running Tomcat at %s\n", s.url)
			return s.url, nop, nil
		}
		u, stop, err := s.tempTomcat(ctx)
		if err == nil {
			fmt.Fprintf(s.w, "measuring a temporary copy of %s at %s\n", s.inst.Base, u)
			return u, stop, nil
		}
		fmt.Fprintf(s.w, "cannot start a temporary copy of the local Tomcat: %v\n", err)
	}
	hw, err := loadgen.StartHelloWorld("127.0.0.1:0")
	if err != nil {
		return "", nop, err
	}
	fmt.Fprintf(s.w, "no local Tomcat to measure: measuring nettune's built-in HelloWorld server at %s instead (not a Tomcat figure)\n", hw.URL)
	return hw.URL, func() { hw.Close() }, nil
}

// tempTomcat copies the instance's conf and webapps into a temporary
// CATALINA_BASE owned by the instance's user, moves its Connector to a
// free port and starts it as that user, the way the instance runs (its
// command and environment): never as root where the instance runs as
// another user.
func (s *study) tempTomcat(ctx context.Context) (string, func(), error) {
	dir, err := os.MkdirTemp("", "tomcat-tuning-base-")
	if err != nil {
		return "", nil, err
	}
	fail := func(err error) (string, func(), error) {
		os.RemoveAll(dir)
		return "", nil, err
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	in, err := s.inst.CopyTo(ctx, dir, s.connQuery, port)
	if err != nil {
		return fail(err)
	}
	u := fmt.Sprintf("http://127.0.0.1:%d%s", port, loadgen.HelloWorldPath)
	res, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: u})
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(s.w, "started the temporary copy %s: JVM %d as %s\n", dir, res.PID, res.User)
	return u, func() {
		if _, err := in.Stop(context.Background(), nil); err != nil {
			fmt.Fprintf(s.w, "stop the temporary Tomcat: %v\n", err)
		}
		os.RemoveAll(dir)
	}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// applySteps runs the plan with a journal, measuring after each step,
// then prints the step table.
func applySteps(ctx context.Context, w io.Writer, s *study, steps []tuning.Step) error {
	if s.inst == nil {
		return fmt.Errorf("-apply needs a Tomcat instance (install tomcat10 + tomcat10-examples, or set -catalina-home/-catalina-base): %v", s.instErr)
	}
	// A Tomcat that runs now is restarted as the user it runs as, and
	// started again that way at the end. Checked before the journal is
	// created: a refusal changes nothing.
	jvms, err := s.inst.JVMs()
	if err != nil {
		return err
	}
	if len(jvms) > 1 {
		var pids []string
		for _, j := range jvms {
			pids = append(pids, strconv.Itoa(j.PID))
		}
		return fmt.Errorf("%d JVMs run with -Dcatalina.base=%s (PIDs %s): stop all but one before -apply", len(jvms), s.inst.Base, strings.Join(pids, ", "))
	}
	if s.systemd() {
		if err := s.checkUnit(ctx, jvms); err != nil {
			return err
		}
	} else if len(jvms) == 1 {
		s.wasRunning = true
		j := jvms[0]
		who := firstNonEmpty(j.User, strconv.Itoa(j.UID))
		if s.inst.User != "" && s.inst.User != who {
			s.note("JVM %d runs as %s, not as %s: the study restarts it as %s, as it found it", j.PID, who, s.inst.User, who)
		}
		if s.inst.User != who {
			s.inst.User, s.inst.Group = who, ""
		}
		fmt.Fprintf(w, "Tomcat runs: JVM %d as %s; the study restarts it as %s and starts it again at the end\n", j.PID, who, who)
	}
	if err := os.MkdirAll(filepath.Dir(s.o.journal), 0o755); err != nil {
		return err
	}
	j, err := tuning.CreateJournal(s.o.journal)
	if errors.Is(err, tuning.ErrPendingJournal) {
		return fmt.Errorf("%w: a previous run was interrupted; run with -revert -journal %s first", err, s.o.journal)
	}
	if err != nil {
		return err
	}
	defer j.Close()
	rev, closeNIC := reverters(s.cpuHost)
	defer closeNIC()
	// The study restarts Tomcat with the tuned files; a run that is killed
	// leaves that JVM up. This record lets -revert stop it, and start
	// Tomcat again if it ran before, once the files are back.
	undo, err := tuning.NewUndo(undoTomcat, newTomcatUndo(s.inst, s.wasRunning, s.url))
	if err != nil {
		return err
	}
	tomcatSeq, err := j.Begin(stepTomcat, []tuning.Undo{undo})
	if err != nil {
		return err
	}
	if err := j.Applied(tomcatSeq); err != nil {
		return err
	}
	selfAff, err := s.numaHost.Affinity(os.Getpid())
	if err != nil {
		return err
	}
	defer func() {
		if err := s.numaHost.RestoreAffinity(selfAff); err != nil {
			fmt.Fprintf(w, "restore this process's CPU affinity: %v\n", err)
		}
		if cpus, err := s.numaHost.AllowedCPUs(os.Getpid()); err == nil {
			fmt.Fprintf(w, "CPU affinity of this process: %s\n", cpus)
		}
		if on, err := s.cpuHost.OnlineCPUs(); err == nil {
			fmt.Fprintf(w, "online CPUs: %s (%s at start)\n", on, s.online)
		}
	}()

	r := &tuning.Runner{Journal: j, Reverters: rev, Keep: s.o.keep,
		AfterStep: func(ctx context.Context, res tuning.StepResult) error {
			fmt.Fprintf(w, "== measure %s ==\n", res.Name)
			return s.measureStep(ctx, res.Name)
		}}
	results, runErr := r.Run(ctx, announce(w, steps))
	// The JVM was started with the tuned files: with -keep it stays up
	// as tuned; otherwise Tomcat is put back as found.
	var stopErr error
	if s.o.keep && runErr == nil {
		fmt.Fprintf(w, "Tomcat left running as tuned (JVM %d)\n", s.jvmPID)
	} else {
		stopErr = s.finishTomcat(context.WithoutCancel(ctx))
		if stopErr == nil {
			stopErr = j.Reverted(tomcatSeq)
		}
	}
	fmt.Fprintln(w, "== Steps ==")
	fmt.Fprint(w, formatResults(results))
	if len(s.measured) > 0 {
		fmt.Fprintln(w, "== Step table ==")
		cmp := loadgen.CompareSteps(s.measured...)
		fmt.Fprint(w, cmp.Text())
		fmt.Fprint(w, s.legend(s.measured[0]))
		if err := writeOutputs(s.o, cmp, results, steps); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	if s.o.keep && runErr == nil {
		fmt.Fprintf(w, "changes kept; undo them with -revert -journal %s\n", s.o.journal)
	} else {
		fmt.Fprintln(w, "every change reverted")
	}
	return errors.Join(runErr, stopErr)
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
			return ch, nil
		}
		out[i] = st
	}
	return out
}

// writeOutputs writes -json (the steps with their status from the
// runner's results, capacity and latency at the common rate) and -plot
// (capacity bars).
func writeOutputs(o options, cmp loadgen.StepComparison, results []tuning.StepResult, steps []tuning.Step) error {
	if o.jsonFile != "" {
		inBaseline := map[string]bool{}
		for _, st := range steps {
			inBaseline[st.Name] = st.Baseline
		}
		b, err := json.MarshalIndent(studyJSONOf(o, cmp, results, inBaseline), "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonFile, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if o.plotFile != "" {
		var buf bytes.Buffer
		if err := loadgen.PlotCapacity(&buf, "Tomcat tuning steps: capacity", cmp); err != nil {
			return err
		}
		if err := os.WriteFile(o.plotFile, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// finishTomcat stops the JVM the study started and, when Tomcat was
// running before, starts it again with the (reverted or kept) files, as
// the user it ran as, and waits until it answers.
func (s *study) finishTomcat(ctx context.Context) error {
	if err := stopAllJVMs(ctx, s.inst); err != nil {
		return err
	}
	if !s.wasRunning {
		return nil
	}
	if s.systemd() {
		s.inst.NoFile = 0 // no drop-in: the unit's own limit, as found
	}
	res, err := s.inst.Start(ctx, &tomcatconf.StartOptions{ReadyURL: s.url})
	if err != nil {
		return err
	}
	if s.systemd() {
		fmt.Fprintf(s.w, "Tomcat started again as found, through systemd (%s): MainPID %d is the JVM, as %s, answering %s\n", res.Command, res.PID, res.User, s.url)
		return nil
	}
	fmt.Fprintf(s.w, "Tomcat started again as found: JVM %d as %s, answering %s\n", res.PID, res.User, s.url)
	return nil
}

// restart stops and starts Tomcat under the raised open-files limit and,
// with -cpu-method affinity, pins the JVM.
func (s *study) restart(ctx context.Context) error {
	if s.systemd() {
		return s.restartUnit(ctx)
	}
	if _, err := s.inst.Stop(ctx, nil); err != nil && !errors.Is(err, tomcatconf.ErrNotRunning) {
		return err
	}
	s.inst.NoFile = rlimit.DefaultNoFile
	res, err := s.inst.Start(ctx, &tomcatconf.StartOptions{ReadyURL: s.url})
	if err != nil {
		return err
	}
	s.jvmPID = res.PID
	fmt.Fprintf(s.w, "restarted Tomcat: JVM %d as %s, ready in %s, open files %d", res.PID, res.User, res.Ready.Round(time.Millisecond), res.NoFile)
	if res.NoFile < rlimit.DefaultNoFile {
		fmt.Fprintf(s.w, " (asked %d: the hard limit caps it)", rlimit.DefaultNoFile)
	}
	fmt.Fprintln(s.w)
	if s.o.cpuMethod == methodAffinity {
		s.mu.Lock()
		cpus := s.tomcatCPUs
		s.mu.Unlock()
		if _, err := s.numaHost.Pin(res.PID, cpus); err != nil {
			return err
		}
		fmt.Fprintf(s.w, "pinned JVM %d to CPUs %s\n", res.PID, cpus)
	}
	return nil
}

// measureStep restarts Tomcat and measures it (or, with -remote-load,
// waits while the client measures).
func (s *study) measureStep(ctx context.Context, name string) error {
	if err := s.restart(ctx); err != nil {
		return err
	}
	if s.o.remote {
		fmt.Fprintf(s.w, "%s: run the load from the client now, for example (wrk2's command line):\n"+
			"  go run ./examples/loadgen -t2 -c%d -R%.0f -d%s --latency %s\n"+
			"(its Requests/sec is the capacity: run it %d times; then once with -R at a rate common to every step for latency)\n"+
			"press Enter when done\n",
			name, s.o.connections, s.o.capacityRate, fmt.Sprintf("%gs", s.o.duration.Seconds()), s.url, s.o.repeat)
		if s.stdin == nil {
			s.stdin = bufio.NewReader(os.Stdin)
		}
		if _, err := s.stdin.ReadString('\n'); err != nil {
			return fmt.Errorf("waiting for Enter on standard input: %w", err)
		}
		return nil
	}
	m, err := s.load(ctx, name, s.url, s.jvmPID)
	if err != nil {
		return err
	}
	s.measured = append(s.measured, m)
	return nil
}

// load measures target as one step: warm-up until the rate stops
// climbing, -repeat saturating runs (the capacity), then one run at the
// common rate (the latency), sampling the JVM's CPU during it when
// pid > 0. With -cpu-method affinity the load generator is pinned to the
// load CPUs.
func (s *study) load(ctx context.Context, name, target string, pid int) (loadgen.StepFigures, error) {
	if s.o.cpuMethod == methodAffinity && s.o.apply {
		s.mu.Lock()
		cpus := s.loadCPUs
		s.mu.Unlock()
		if !cpus.IsEmpty() {
			if _, err := s.numaHost.Pin(os.Getpid(), cpus); err != nil {
				return loadgen.StepFigures{}, fmt.Errorf("pin the load generator: %w", err)
			}
		}
	}
	if s.o.warmup > 0 {
		// Closed-loop runs: as hard on the JVM as a saturating open-model
		// run, without a backlog to send.
		wu, err := loadgen.WarmUp(ctx, loadgen.Config{URL: target, Connections: s.o.connections},
			&loadgen.WarmUpOptions{Interval: s.o.warmupStep, Max: s.o.warmup, Runs: warmupRuns, Run: s.runLoad})
		if err != nil {
			return loadgen.StepFigures{}, fmt.Errorf("warm-up: %w", err)
		}
		verdict := fmt.Sprintf("the last %d within %g%%", warmupRuns, loadgen.DefaultWarmUpTolerance)
		if !wu.Stable {
			verdict = fmt.Sprintf("still changing by more than %g%% at the -warmup limit", loadgen.DefaultWarmUpTolerance)
		}
		fmt.Fprintf(s.w, "%s: warm-up %s, closed loop on %d connections: %s req/s, %s\n",
			name, wu.Loaded, s.o.connections, joinRates(wu.Rates), verdict)
	}
	c, err := loadgen.MeasureCapacity(ctx, loadgen.Config{URL: target, Connections: s.o.connections, Duration: s.o.duration},
		&loadgen.CapacityOptions{Rate: s.o.capacityRate, Repeat: s.o.repeat, Run: s.runLoad})
	if err != nil {
		return loadgen.StepFigures{}, err
	}
	runs := make([]float64, len(c.Runs))
	for i, r := range c.Runs {
		runs[i] = r.AchievedRate
	}
	fmt.Fprintf(s.w, "%s: capacity runs at %.0f req/s offered: %s req/s\n", name, s.o.capacityRate, joinRates(runs))
	if !c.Saturated {
		fmt.Fprintf(s.w, "warning: a capacity run kept up with -capacity-rate %.0f: the capacity is at least that; raise -capacity-rate\n", s.o.capacityRate)
	}

	rate := s.commonRate()
	if rate == 0 {
		rate = math.Round(DefaultLatencyShare * c.Rate.Median)
	}
	cfg := loadgen.Config{URL: target, Rate: rate, Connections: s.o.connections, Duration: s.o.duration}
	var before loadgen.CPUTimes
	root := "/" // the running host, where the JVM runs
	if pid > 0 {
		before, _ = loadgen.ProcessCPU(root, pid)
	}
	res, err := s.runLoad(ctx, cfg)
	if err != nil {
		return loadgen.StepFigures{}, fmt.Errorf("latency at %.0f req/s: %w", rate, err)
	}
	if res.Missed > 0 {
		fmt.Fprintf(s.w, "warning: %d requests due were never sent (all %d connections busy): the server fell behind the common rate %.0f\n",
			res.Missed, res.Connections, rate)
	}
	f := loadgen.FiguresOf(name, res)
	f.Load = rate
	if pid > 0 && !before.At.IsZero() {
		if after, err := loadgen.ProcessCPU(root, pid); err == nil {
			s.mu.Lock()
			n := s.tomcatCPUs.Len()
			s.mu.Unlock()
			if s.o.cpuMethod == methodHotplug {
				n = s.online.Len()
				if on, err := s.cpuHost.OnlineCPUs(); err == nil {
					n = on.Len()
				}
			}
			f.CPU = loadgen.Use(before, after, n).Percent
		}
	}
	m := loadgen.StepFigures{Name: name, Capacity: c.Rate, CapacityErrors: c.Errors, Latency: f}
	fd := loadgen.FormatDuration
	fmt.Fprintf(s.w, "%s: %.0f requests/s capacity (median of %d, %.0f-%.0f), %d errors; at %.0f req/s: latency p50 %s p99 %s max %s, %d errors",
		name, c.Rate.Median, c.Rate.N, c.Rate.Min, c.Rate.Max, c.Errors, rate, fd(f.P50), fd(f.P99), fd(f.Max), f.Errors)
	if f.CPU > 0 {
		fmt.Fprintf(s.w, ", JVM CPU %.0f%%", f.CPU)
	}
	fmt.Fprintln(s.w)
	return m, nil
}

// warmupRuns is how many successive warm-up runs must agree: a JIT
// compiles in tiers, and two runs can agree on a plateau (here a
// baseline's warm-up settled at 20.5k req/s after 16 s, and its capacity
// runs then read 31.3k, 31.4k and 44.7k).
const warmupRuns = 3

// commonRate is the rate of every step's latency run: -rate, or the one
// the baseline's run used; 0 before the baseline is measured.
func (s *study) commonRate() float64 {
	if s.o.rate > 0 {
		return s.o.rate
	}
	if len(s.measured) > 0 {
		return s.measured[0].Latency.Load
	}
	return 0
}

// legend says what the step table's columns are.
func (s *study) legend(base loadgen.StepFigures) string {
	from := "-rate"
	if s.o.rate == 0 {
		from = fmt.Sprintf("%.0f%% of the baseline's capacity", 100*DefaultLatencyShare)
	}
	return fmt.Sprintf("capacity: requests/s completed by each of %d open-model runs of %s at %.0f req/s offered (far above\n"+
		"  what Tomcat answers) on %d connections, over the time they took: median and min-max;\n"+
		"  \"(noise)\": the change lies inside the runs' spread, not a gain.\n"+
		"latency: one %s run at %.0f req/s for every step (%s), corrected for coordinated omission.\n",
		s.o.repeat, s.o.duration, s.o.capacityRate, s.o.connections, s.o.duration, base.Latency.Load, from)
}

func joinRates(rates []float64) string {
	parts := make([]string, len(rates))
	for i, r := range rates {
		parts[i] = fmt.Sprintf("%.0f", r)
	}
	return strings.Join(parts, " ")
}

// census loads the running JVM for half a measurement and counts its
// threads meanwhile, as the Arm guide does with top -H.
func (s *study) census(ctx context.Context) (tomcatconf.Recommendation, error) {
	pid := s.jvmPID
	if pid == 0 {
		var err error
		if pid, err = s.inst.PID(); err != nil {
			return tomcatconf.Recommendation{}, fmt.Errorf("thread census: %w", err)
		}
	}
	interval := max(time.Second, s.o.duration/2)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	loadDone := make(chan error, 1)
	go func() {
		// At the common rate, as the latency runs (a closed loop before
		// the baseline fixed it).
		_, err := s.runLoad(lctx, loadgen.Config{URL: s.url, Rate: s.commonRate(), Connections: s.o.connections,
			Duration: interval + 2*time.Second})
		loadDone <- err
	}()
	opts := &tomcatconf.CensusOptions{}
	nctx, ncancel := context.WithTimeout(ctx, 10*time.Second)
	if names, err := tomcatconf.JavaThreadNames(nctx, nil, "", pid); err == nil {
		opts.Names = names
	}
	ncancel()
	// Let the load reach the JVM before counting.
	select {
	case <-time.After(500 * time.Millisecond):
	case <-ctx.Done():
		return tomcatconf.Recommendation{}, ctx.Err()
	}
	c, err := tomcatconf.TakeCensus(ctx, pid, interval, opts)
	cancel()
	<-loadDone
	if err != nil {
		return tomcatconf.Recommendation{}, err
	}
	fmt.Fprintf(s.w, "thread census of JVM %d over %s under load (CPUs %s):\n", pid, interval, cpuset.Of(c.CPUs...))
	fmt.Fprintf(s.w, "   %-28s %-10s %7s %6s\n", "pool", "kind", "threads", "load")
	for _, p := range c.Pools {
		fmt.Fprintf(s.w, "   %-28s %-10s %7d %6.2f\n", p.Pool, p.Kind, p.Threads, p.Load)
	}
	rec := c.Recommend(0)
	fmt.Fprintf(s.w, "recommended maxThreads=%d: %s\n", rec.MaxThreads, rec.Reason)
	return rec, nil
}
