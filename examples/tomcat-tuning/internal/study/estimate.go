//go:build linux

package study

import (
	"strings"
	"time"

	"github.com/nettune/nettune/tuning"
)

// restartAllowance is what a restart of Tomcat takes, as budgeted by
// Estimate (8 s here for Debian's tomcat10 on 2 CPUs).
const restartAllowance = 10 * time.Second

// runAllowance is what one load run takes beyond its duration, as
// budgeted by Estimate: opening the connections, the requests still out
// at the end, closing; runLikely is what Likely expects (on the paced
// test server, 12-56 connections, 28 ms on average and 84 ms at most).
const (
	runAllowance = 250 * time.Millisecond
	runLikely    = 50 * time.Millisecond
)

// likelySizingCounts is the counts a load sizing likely tries: the start,
// its double that raises the capacity, and one more that does not (the
// fewest that confirm a saturation past the start).
const likelySizingCounts = 3

// Runs counts the load runs of a budget by kind.
type Runs struct {
	// WarmUp is the closed-loop warm-up runs, at most: a warm-up stops
	// once its last runs agree, or at -warmup, and a measurement whose
	// warm-up did not settle warms up a second time.
	WarmUp int
	// Capacity is the capacity runs of the measurements (-repeat each).
	Capacity int
	// Remeasure is the capacity runs of the re-measurements, at most:
	// -repeat more for each measurement whose first warm-up does not
	// settle and whose second one does (loadgen.StepOptions.Remeasure).
	Remeasure int
	// Latency is the latency runs, one a measurement.
	Latency int
	// Census is the load under the thread census (after the baseline).
	Census int
	// Sizing is the load sizing's capacity runs, at most: the sizing
	// stops once doubling no longer raises the capacity.
	Sizing int
}

func (r Runs) add(o Runs) Runs {
	return Runs{r.WarmUp + o.WarmUp, r.Capacity + o.Capacity, r.Remeasure + o.Remeasure, r.Latency + o.Latency, r.Census + o.Census, r.Sizing + o.Sizing}
}

// StepBudget is what -apply does after one step, as Estimate expects it:
// the baseline (with the load sizing and the thread census), a measured
// step with its search's candidates, or the drift guard ("baseline
// again").
type StepBudget struct {
	Name string
	// Measurements are the measurements made: the step's own and each
	// candidate of its search; Restarts the Tomcat restarts, one before
	// each measurement (and one more when -keep keeps a search's best).
	Measurements, Restarts int
	Runs                   Runs
	// Time bounds the budget's duration; Likely is what it takes when
	// each warm-up settles at its first chance (warmupRuns runs) and the
	// sizing confirms a saturation at its third count.
	Time, Likely time.Duration
}

// Budget is what Estimate adds up: for the baseline, every other step
// the host lets run (nic-queues needs a NIC with queues to set,
// numa-local a NIC on one of several nodes), each candidate a search
// measures besides the rule and the step before's (with one more for the
// census's recommendation), and the drift guard, a restart, the longest
// warm-up and -repeat capacity runs twice (a measurement whose warm-up
// does not settle is warmed up again and re-measured) and the latency
// run, each run with runAllowance beyond its duration; the census after the baseline; and
// the load sizing's warm-up and every count it may try (-connections 0).
// A step the runner finds unchanged is not measured: Budget counts it.
func Budget(h Host, o Options, steps []tuning.Step) []StepBudget {
	out := []StepBudget{o.measurements("baseline", 1)}
	base := &out[0]
	if o.Connections == 0 {
		// Sized for Tomcat's CPUs at the baseline (measureStep's placement).
		cpus := baselinePlacement(h, o, steps).Tomcat.Len()
		if cpus == 0 {
			cpus = h.CPUs.N
		}
		base.add(o.sizingBudget(cpus))
	}
	if anyStep(steps, false, func(n Needs) bool { return n.Census }) {
		base.Runs.Census++
		census := max(time.Second, o.Duration/2) + 3*time.Second
		base.Time, base.Likely = base.Time+census, base.Likely+census
	}
	for _, s := range steps {
		if s.Baseline {
			continue
		}
		n := 1
		if m := kindOf(s.Name).Needs.Measures; m != nil {
			n = m(h, o)
		}
		if n == 0 {
			continue // the host lets the step not run
		}
		b := o.measurements(s.Name, n)
		if n > 1 && o.Keep {
			b.Restarts++ // at most: when the best is not the last tried
			b.Time += restartAllowance
		}
		out = append(out, b)
	}
	// The drift guard (driftGuard): after two measurements or more,
	// unless -keep, or hotplug reverted the baseline's CPUs.
	if len(out) > 1 && !o.Keep && (o.Method() == MethodAffinity || !anyStep(steps, true, func(n Needs) bool { return n.Hotplug })) {
		out = append(out, o.measurements("baseline again", 1))
	}
	return out
}

// Estimate bounds a -apply run's duration on h before it starts: the sum
// of its Budget.
func Estimate(h Host, o Options, steps []tuning.Step) time.Duration {
	var total time.Duration
	for _, b := range Budget(h, o, steps) {
		total += b.Time
	}
	return total
}

// Likely is the -apply run's likely duration: the sum of its Budget's
// Likely, the warm-ups settled at their first chance and the sizing
// done at its third count.
func Likely(h Host, o Options, steps []tuning.Step) time.Duration {
	var total time.Duration
	for _, b := range Budget(h, o, steps) {
		total += b.Likely
	}
	return total
}

// measurements is the budget of n measurements (loadgen.MeasureStep
// after a restart): each a warm-up, -repeat capacity runs and the
// latency run, and at most one more warm-up and -repeat capacity runs
// (loadgen.StepOptions.Remeasure: a warm-up that does not settle is
// followed by a second one after the capacity runs, and by the capacity
// runs again if that one settles). Likely has one warm-up, settled.
func (o Options) measurements(name string, n int) StepBudget {
	wu, wuTime, wuLikely := o.warmUpBudget()
	again := 0 // re-measurements, at most
	if wu > 0 {
		again = 1
	}
	runs := time.Duration((1+again)*o.Repeat + 1)
	per := restartAllowance + time.Duration(1+again)*wuTime + runs*(o.Duration+runAllowance)
	likely := restartAllowance + wuLikely + time.Duration(o.Repeat+1)*(o.Duration+runLikely)
	return StepBudget{Name: name, Measurements: n, Restarts: n, Time: time.Duration(n) * per, Likely: time.Duration(n) * likely,
		Runs: Runs{WarmUp: n * (1 + again) * wu, Capacity: n * o.Repeat, Remeasure: n * again * o.Repeat, Latency: n}}
}

// warmUpBudget is a warm-up's runs at most (-warmup in runs of
// -warmup-step, the last one shorter), their time, and the time of a
// warm-up that settles at its first chance (warmupRuns runs).
func (o Options) warmUpBudget() (runs int, bound, likely time.Duration) {
	if o.WarmUp <= 0 {
		return 0, 0, 0
	}
	step := o.WarmUpStep
	if step <= 0 {
		step = DefaultWarmUpStep
	}
	runs = int((o.WarmUp + step - 1) / step)
	first := min(o.WarmUp, warmupRuns*step)
	return runs, o.WarmUp + time.Duration(runs)*runAllowance, first + time.Duration(min(runs, warmupRuns))*runLikely
}

// sizingBudget is the load sizing's at most (sizeLoad): a warm-up, then
// sizingRuns capacity runs at every count from StartConnections of cpus,
// doubled, to ConnectionsBound.
func (o Options) sizingBudget(cpus int) StepBudget {
	clients := 1
	if o.LoadHost != "" {
		clients = len(strings.Split(o.LoadHost, ","))
	}
	start := StartConnections(cpus, clients)
	bound := ConnectionsBound(start)
	counts := 1
	for c := start; c < bound; c = min(2*c, bound) {
		counts++
	}
	each := sizingRuns(o.Repeat, o.Alpha)
	runs, likely := counts*each, min(counts, likelySizingCounts)*each
	wu, wuTime, wuLikely := o.warmUpBudget()
	return StepBudget{Runs: Runs{WarmUp: wu, Sizing: runs}, Time: wuTime + time.Duration(runs)*(o.Duration+runAllowance),
		Likely: wuLikely + time.Duration(likely)*(o.Duration+runLikely)}
}

// add adds o's runs and times to b.
func (b *StepBudget) add(o StepBudget) {
	b.Runs = b.Runs.add(o.Runs)
	b.Time += o.Time
	b.Likely += o.Likely
}

// measuredCandidates counts the candidates a search measures besides the
// rule (the step's own measurement) and the step before's.
func measuredCandidates(cs []Candidate) int {
	n := 0
	for i, c := range cs {
		if i > 0 && !c.Previous {
			n++
		}
	}
	return n
}
