//go:build linux

package study

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// warmupRuns is how many successive warm-up runs must agree: a JIT
// compiles in tiers, and two runs can agree on a plateau (here a
// baseline's warm-up settled at 20.5k req/s after 16 s, and its capacity
// runs then read 31.3k, 31.4k and 44.7k).
const warmupRuns = 3

// measure measures target as one step with loadgen.MeasureStep, every
// load derived from the one Config of the options (LoadConfig), sampling
// the JVM's CPU when pid > 0. A load on this host (in this process or a
// -load-netns worker, its child) is pinned to the placement's load CPUs
// when the run split them (pinLoad: -cpu-method affinity under -apply,
// plan mode's temporary copy).
func (r *run) measure(ctx context.Context, name, target string, pid int) (loadgen.StepFigures, error) {
	if r.pinLoad && !r.place.Load.IsEmpty() {
		pin, err := r.numa.PlanPin(os.Getpid(), r.place.Load)
		if err == nil {
			err = pin.Apply(ctx)
		}
		if err != nil {
			return loadgen.StepFigures{}, fmt.Errorf("pin the load generator: %w", err)
		}
	}
	if name == "baseline" && r.o.Connections == 0 {
		if err := r.sizeLoad(ctx, target, pid); err != nil {
			return loadgen.StepFigures{}, err
		}
	}
	wo, reportWarmUp := r.warmUpOptions(pid)
	probe := r.costProbe(pid)
	var start serverReading
	if probe != nil && r.o.WarmUp == 0 {
		start = probe.read() // else when the warm-up ends (OnWarmUp)
	}
	// A warm-up that ends unsettled is followed by a second one after its
	// capacity runs, which warm the JVM further; the step is measured
	// again if that one settles.
	var warmUps []*loadgen.WarmUpResult
	opts := &loadgen.StepOptions{
		Name:        name,
		SkipWarmUp:  r.o.WarmUp == 0,
		WarmUp:      wo,
		Remeasure:   r.o.WarmUp != 0,
		Capacity:    &loadgen.CapacityOptions{Rate: r.o.CapacityRate, Repeat: r.o.Repeat},
		LatencyRate: r.commonRate(),
		PID:         pid,
		CPUs:        r.place.Tomcat.Len(),
		Run:         r.runLoad,
		OnWarmUp: func(wu *loadgen.WarmUpResult) {
			warmUps = append(warmUps, wu)
			which := "warm-up"
			if len(warmUps) == 1 {
				delete(r.firstWarmUps, name)
			} else {
				which = "second warm-up"
				r.firstWarmUps[name] = warmUps[0]
				if wu.Settled {
					delete(r.bound, name) // the first capacity runs no longer count
				}
			}
			reportWarmUp(name, which, wu)
			r.warmUps[name] = wu
			if probe != nil {
				start = probe.read()
			}
		},
		OnCapacity: func(c *loadgen.Capacity) {
			if probe != nil {
				r.costs[name] = costOf(start, probe.read(), c, probe.cpus)
			}
			after := ""
			if len(warmUps) == 2 {
				after = " after the second warm-up"
			}
			runs := make([]float64, len(c.Runs))
			for i, res := range c.Runs {
				runs[i] = res.AchievedRate
				r.noteBound(name, fmt.Sprintf("capacity run %d%s", i+1, after), res)
			}
			fmt.Fprintf(r.log, "%s: capacity runs at %.0f req/s offered: %s req/s\n", name, r.o.CapacityRate, joinRates(runs))
			if !c.Saturated {
				fmt.Fprintf(r.log, "warning: a capacity run kept up with -capacity-rate %.0f: the capacity is at least that; raise -capacity-rate\n", r.o.CapacityRate)
			}
			if len(warmUps) == 1 && !warmUps[0].Settled {
				fmt.Fprintf(r.log, "%s: warm-up unsettled; its capacity runs warmed it further: warming up again to re-measure it\n", name)
			}
		},
		OnLatency: func(res *loadgen.Result) {
			r.noteBound(name, "latency run", res)
			if res.Missed > 0 {
				fmt.Fprintf(r.log, "warning: %d requests due were never sent (all %d connections busy): the server fell behind the common rate %.0f\n",
					res.Missed, res.Connections, res.OfferedRate)
			}
		},
	}
	m, err := loadgen.MeasureStep(ctx, r.o.LoadConfig(target), opts)
	if err != nil {
		return m, err
	}
	switch {
	case m.Remeasured:
		fmt.Fprintf(r.log, "%s: re-measured after a second warm-up that settled\n", name)
	case len(warmUps) == 2 && m.Unsettled:
		fmt.Fprintf(r.log, "%s: the second warm-up did not settle either: the step stays unsettled, "+
			"its uplifts are not called significant (a longer -warmup lets it settle)\n", name)
	}
	if g, ok := GuideUplift[name]; ok {
		m.Reference = &loadgen.Reference{Source: "Arm guide", VsPrevious: g}
	}
	r.logMeasured(name, m)
	return m, nil
}

// logMeasured prints a step's figures, whether the load generator bound
// them, and where the server's time went.
func (r *run) logMeasured(name string, m loadgen.StepFigures) {
	f, c := m.Latency, m.Capacity
	fd := report.FormatDuration
	fmt.Fprintf(r.log, "%s: %.0f requests/s capacity (median of %d, %.0f-%.0f), %d errors; at %.0f req/s: latency p50 %s p99 %s max %s, %d errors",
		name, c.Median, c.N, c.Min, c.Max, m.CapacityErrors, f.Load, fd(f.P50), fd(f.P99), fd(f.Max), f.Errors)
	if f.CPU > 0 {
		fmt.Fprintf(r.log, ", JVM CPU %.0f%%", f.CPU)
	}
	fmt.Fprintln(r.log)
	if why := r.bound[name]; why != "" {
		fmt.Fprintf(r.log, "%s: %s: the load generator, not Tomcat, limited this step's figure\n", name, why)
	}
	if c, ok := r.costs[name]; ok {
		fmt.Fprintf(r.log, "%s: %s\n", name, c.Text())
	}
}

// costProbe is how a step's cost is read around its capacity runs: the
// JVM pid on Tomcat's CPUs, with its NIC's queue interrupts when the NIC
// has a device; nil without a JVM.
func (r *run) costProbe(pid int) *costProbe {
	if pid <= 0 {
		return nil
	}
	p := &costProbe{numa: r.numa, pid: pid, cpus: r.place.Tomcat}
	if n := r.h.NIC; n.Name != "" && !n.Virtual {
		if c, err := nic.New(&nic.Options{Root: n.Root}); err == nil {
			p.nic, p.iface = c, n.Name
		}
	}
	return p
}

// warmUpOptions are the warm-up options of a measurement of the JVM pid
// (0: none to watch), with the function that prints a warm-up's outcome
// (which is "warm-up" or "second warm-up").
func (r *run) warmUpOptions(pid int) (*loadgen.WarmUpOptions, func(name, which string, wu *loadgen.WarmUpResult)) {
	wo := &loadgen.WarmUpOptions{Interval: r.o.WarmUpStep, Max: r.o.WarmUp, Runs: warmupRuns}
	if pid > 0 {
		// A JVM pinned to one CPU compiles on that CPU: the warm-up is
		// settled only once its JIT compilers are quiet too.
		if meter, err := tomcatconf.NewJITMeter(pid, nil); err == nil {
			wo.CompilerShare = meter.CompilerShare
		}
	}
	var lastShare float64
	var jit bool
	wo.OnRun = func(run loadgen.WarmUpRun) { lastShare, jit = run.CompilerShare, run.JIT }
	return wo, func(name, which string, wu *loadgen.WarmUpResult) {
		verdict := fmt.Sprintf("the last %d within %g%%", warmupRuns, loadgen.DefaultWarmUpTolerance)
		if !wu.Stable {
			verdict = fmt.Sprintf("still changing by more than %g%% at the -warmup bound of %s", loadgen.DefaultWarmUpTolerance, r.o.WarmUp)
		}
		if jit {
			verdict += fmt.Sprintf("; JIT compilers %.1f%% of the JVM's CPU in the last run", 100*lastShare)
			if wu.Stable && !wu.Settled {
				verdict += fmt.Sprintf(" (above %g%%: still compiling)", 100*loadgen.DefaultMaxCompilerShare)
			}
		}
		if !wu.Settled {
			verdict += ": unsettled (a longer -warmup lets it settle)"
		}
		fmt.Fprintf(r.log, "%s: %s %s, closed loop on %d connections: %s req/s, %s\n",
			name, which, wu.Loaded, r.o.Connections, joinRates(wu.Rates), verdict)
	}
}

// noteBound keeps the first reason the generator limited one of step's
// runs (loadgen.LoadBound) or sent its requests late by its own doing
// (loadgen.LateSends: own send lag p99 above 1 ms), and prints the generator's CPU use of each.
func (r *run) noteBound(step, which string, res *loadgen.Result) {
	if g := res.Generator; g.CPUs > 0 {
		fmt.Fprintf(r.log, "%s: %s: load generator CPU %.0f %% of %d cores\n", step, which, g.Percent(), g.CPUs)
	}
	why := loadgen.LoadBound(res)
	if why == "" {
		// The generator kept up but sent late by its own doing: its
		// delay is in the step's corrected latency.
		why = loadgen.LateSends(res)
	}
	if why != "" && r.bound[step] == "" {
		r.bound[step] = why + " (" + which + ")"
	}
}

// commonRate is the rate of every step's latency run: -latency-rate, or the one
// the baseline's run used; 0 before the baseline is measured (a share of
// its capacity).
func (r *run) commonRate() float64 {
	if r.o.Rate > 0 {
		return r.o.Rate
	}
	if len(r.measured) > 0 {
		return r.measured[0].Latency.Load
	}
	return 0
}

// GuideUplift is the Arm guide's own change of throughput per step,
// against the step before, from its wrk2 runs: 244k -> 272k (access log
// off) -> 358k (threads) -> 379k (NIC queues) -> 364k (NUMA local) req/s.
// Each kind declares its own (Needs.GuideUplift).
var GuideUplift = guideUplifts()

// Legend says what the step table's columns are and how its uplifts are
// judged.
func Legend(o Options, c loadgen.StepComparison) string {
	rate := 0.0
	if len(c.Rows) > 0 {
		rate = c.Rows[0].Latency.Load
	}
	from := "-latency-rate"
	if o.Rate == 0 {
		from = fmt.Sprintf("%.0f %% of the baseline's capacity", 100*DefaultLatencyShare)
	}
	return fmt.Sprintf("capacity: requests/s completed by each of %d open-model runs of %s at %.0f req/s offered (far above\n"+
		"  what Tomcat answers) on %d connections, over the time they took: median and min-max.\n"+
		"%s"+
		"latency: one %s run at %.0f req/s for every step (%s), corrected for coordinated omission.\n",
		o.Repeat, o.Duration, o.CapacityRate, o.Connections, c.Legend(), o.Duration, rate, from)
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
func (r *run) census(ctx context.Context) (tomcatconf.Recommendation, error) {
	pid := r.jvmPID
	if pid == 0 {
		var err error
		if pid, err = r.inst().PID(); err != nil {
			return tomcatconf.Recommendation{}, fmt.Errorf("thread census: %w", err)
		}
	}
	interval := max(time.Second, r.o.Duration/2)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	loadDone := make(chan error, 1)
	go func() {
		// At the common rate, as the latency runs.
		cfg := r.o.LoadConfig(r.h.NIC.URL)
		cfg.Rate, cfg.Duration = r.commonRate(), interval+2*time.Second
		_, err := r.runLoad(lctx, cfg)
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
	fmt.Fprintf(r.log, "thread census of JVM %d over %s under load (CPUs %s):\n", pid, interval, cpuset.Of(c.CPUs...))
	fmt.Fprintf(r.log, "   %-28s %-10s %7s %6s\n", "pool", "kind", "threads", "load")
	for _, p := range c.Pools {
		fmt.Fprintf(r.log, "   %-28s %-10s %7d %6.2f\n", p.Pool, p.Kind, p.Threads, p.Load)
	}
	rec := c.Recommend(0)
	fmt.Fprintf(r.log, "recommended maxThreads=%d: %s\n", rec.MaxThreads, rec.Reason)
	return rec, nil
}

// runLoad runs one load: here, in a worker inside -load-netns's network
// namespace, so the load reaches Tomcat through the namespace's
// interface, or on -load-host's client machines over ssh, as the guide's
// wrk2 does (several: one shard each, merged).
func (r *run) runLoad(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	if r.loader != nil {
		return r.loader(ctx, cfg)
	}
	if r.clients != nil {
		return r.clients.Run(ctx, cfg)
	}
	if r.o.LoadNetNS != "" {
		return remoteload.NetNSLoad{NetNS: r.o.LoadNetNS}.Run(ctx, cfg)
	}
	return loadgen.Run(ctx, cfg)
}

// dropInWritten is the line printed once a step wrote the unit's drop-in.
func dropInWritten(ch *tuning.Change) string {
	for _, u := range ch.Undo {
		if u.Kind != (tomcatconf.DropInChange{}).Kind() {
			continue
		}
		var c tomcatconf.DropInChange
		if err := json.Unmarshal(u.Data, &c); err != nil {
			return "drop-in written; daemon-reload done"
		}
		s := fmt.Sprintf("drop-in %s written (%s)", c.Path, c.Written())
		if c.Capped() {
			s += fmt.Sprintf("; LimitNOFILE=%d capped to %d, the manager's hard limit", c.Next.LimitNOFILE, c.ManagerNoFile)
		}
		return s + "; daemon-reload done"
	}
	return ""
}
