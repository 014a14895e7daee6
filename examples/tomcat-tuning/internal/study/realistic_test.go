//go:build linux

package study

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tomcatconf/hsperf"
	"github.com/nettune/nettune/tuning"
)

// runsAt are six capacity runs spread ±2 % around median.
func runsAt(median float64) []float64 {
	out := make([]float64, 6)
	for i := range out {
		out[i] = median * (0.98 + 0.008*float64(i))
	}
	return out
}

// figuresAt are a step's figures as the study measures them: six runs
// around capacity, latency at the common rate 150000 req/s.
func figuresAt(name string, capacity float64, p99 time.Duration) loadgen.StepFigures {
	f := loadgen.StepFigures{Name: name, CapacityRuns: runsAt(capacity), Capacity: stats.SpreadOf(runsAt(capacity)),
		Latency: loadgen.Figures{Name: name, Load: 150000, Requests: 750000, Mean: p99 / 4, P50: p99 / 5, P90: p99 / 2,
			P99: p99, P999: 2 * p99, Max: 3 * p99, CPU: 97.5}}
	if g, ok := GuideUplift[name]; ok {
		f.Reference = &loadgen.Reference{Source: "Arm guide", VsPrevious: g}
	}
	return f
}

// realisticResults are a whole study of the guide's host, as -apply
// returns them: all seven steps (iommu skipped, numa-local failed, with
// the long reasons the study gives), the guide's 6-digit capacities
// (244k → 272k → 358k → 379k), the threads step searched (its setting in
// the row), a load-bound nic-queues re-measured after a second warm-up
// (as one of the threads candidates), an unsettled baseline (both its
// warm-ups), a load sizing that did not saturate, errors, and the drift
// guard.
// realisticCosts are the costs of the baseline and the access-log step
// on 8 CPUs: the access log's writes are system CPU.
func realisticCosts() map[string]StepCost {
	cost := func(requests uint64, user, sys time.Duration, gc int64) StepCost {
		return StepCost{Requests: requests, Interval: 8 * time.Second, User: user, System: sys, Voluntary: 900000, Involuntary: 4000,
			CPU:   numa.CPUSplit{CPUs: 8, Interval: 8 * time.Second, User: user, System: sys, SoftIRQ: 3 * time.Second, Idle: 64*time.Second - user - sys - 3*time.Second},
			Pools: []tomcatconf.Pool{{Pool: "http-nio-8080", Kind: "exec", Threads: 7, CPU: user + sys, VoluntarySwitches: 890000, InvoluntarySwitches: 3900}},
			JVM: &hsperf.Figures{Collectors: []hsperf.Collector{{Name: "G1 young collection pauses", Collections: gc, Time: time.Duration(gc) * 3 * time.Millisecond}},
				Compile: 40 * time.Millisecond, Safepoints: gc + 2, SafepointTime: time.Duration(gc) * 3 * time.Millisecond, Threads: 41},
			QueueIRQs: map[string]uint64{"eth0-TxRx-0": 410000, "eth0-TxRx-1": 398000},
			Generator: loadgen.GeneratorUse{CPU: 6 * time.Second, Wall: 8 * time.Second, CPUs: 8}}
	}
	return map[string]StepCost{"baseline": cost(1952000, 31*time.Second, 22*time.Second, 40), StepAccessLog: cost(2176000, 33*time.Second, 15*time.Second, 44)}
}

func realisticResults(t *testing.T) Results {
	t.Helper()
	base := figuresAt("baseline", 244000, 12*time.Millisecond)
	base.Unsettled = true
	al := figuresAt(StepAccessLog, 272000, 9*time.Millisecond)
	al.CapacityErrors = 12
	cands := []loadgen.StepFigures{figuresAt("maxThreads=7", 358000, 4*time.Millisecond), figuresAt("maxThreads=16", 351000, 5*time.Millisecond),
		figuresAt("maxThreads=200", 272000, 9*time.Millisecond)}
	cands[1].Remeasured = true
	choice, err := loadgen.PickBest(cands, nil)
	require.NoError(t, err)
	th := figuresAt(StepThreads, 358000, 4*time.Millisecond)
	th.Setting = "maxThreads=7 (the guide's rule, measured best of 3)"
	nq := figuresAt(StepNICQueues, 379000, 3500*time.Microsecond)
	nq.Setting = "queues=8 (the guide's rule, measured best of 4)"
	nq.Remeasured = true
	again := figuresAt("baseline again", 246000, 12*time.Millisecond)
	search := Search{Step: StepThreads, Setting: "maxThreads", Rule: 0, Choice: &choice, Candidates: []Candidate{
		{Value: 7, Why: "the guide's rule: CPUs − 1", Figures: &cands[0]},
		{Value: 16, Why: "2 × CPUs", Figures: &cands[1]},
		{Value: 200, Why: "the pool before the step", Previous: true, Figures: &cands[2]},
	}}
	growth := stats.Uplift{Percent: 48.2, Low: 40.1, High: 55.0, Confidence: 0.971, P: 0.029, Alpha: 0.05, NoiseBand: 1, N1: 4, N2: 4, Verdict: stats.VerdictGain}
	return Results{
		Measured: []loadgen.StepFigures{base, al, th, nq},
		Steps: []tuning.StepResult{
			{Name: StepIOMMU, Status: tuning.StatusSkipped, Reason: "reboot required: iommu.strict=1 iommu.passthrough=0 in GRUB_CMDLINE_LINUX of /etc/default/grub takes effect at the next boot only, and the study never edits the boot configuration"},
			{Name: StepCPUs, Status: tuning.StatusReverted},
			{Name: StepOpenFiles, Status: tuning.StatusReverted},
			{Name: StepAccessLog, Status: tuning.StatusReverted},
			{Name: StepThreads, Status: tuning.StatusReverted},
			{Name: StepNICQueues, Status: tuning.StatusReverted},
			{Name: StepNUMALocal, Status: tuning.StatusFailed, Reason: "restart Tomcat: JVM 4312 did not answer http://10.0.0.1:8080/examples/servlets/servlet/HelloWorldExample within 60s: connection refused"},
		},
		Baseline:  map[string]bool{StepIOMMU: true, StepCPUs: true, StepOpenFiles: true},
		LoadBound: map[string]string{StepNICQueues: "load-bound: client CPU 97 % of 2 cores, lag p99 12ms, 50580 due never sent (capacity run 2)"},
		Alpha:     0.05,
		Costs:     realisticCosts(),
		WarmUps: map[string]*loadgen.WarmUpResult{"baseline": {Rates: []float64{150000, 230000, 241000}, Loaded: 6 * time.Second, Runs: []loadgen.WarmUpRun{
			{Index: 1, Duration: 2 * time.Second, Rate: 150000, CompilerShare: 0.31, JIT: true},
			{Index: 2, Duration: 2 * time.Second, Rate: 230000, CompilerShare: 0.08, JIT: true},
			{Index: 3, Duration: 2 * time.Second, Rate: 241000, CompilerShare: 0.04, JIT: true}}},
			StepNICQueues: warmUpAt(true, 378000, 379000, 378500)},
		FirstWarmUps: map[string]*loadgen.WarmUpResult{"baseline": warmUpAt(false, 60000, 110000, 140000),
			StepNICQueues: warmUpAt(false, 300000, 340000, 365000)},
		Again:     &again,
		Searches:  []Search{search},
		CPUMethod: CPUMethodChoice{Requested: MethodAuto, Chosen: MethodHotplug, Why: "the load runs on -load-host's clients, as the guide's wrk2 does"},
		Load: &LoadSizing{Connections: 1728, Saturated: false, Why: "the bound 1728 (32 × the start) reached, the capacity still growing",
			Start: 54, Bound: 1728, Tried: []SizeTry{
				{Connections: 54, Capacity: 160000, Runs: runsAt(160000)[:4]},
				{Connections: 108, Capacity: 237000, Runs: runsAt(237000)[:4], Growth: &growth},
			}},
	}
}

// warmUpAt is a warm-up of 2 s runs at rates, with the JIT compilers'
// share falling, settled or not.
func warmUpAt(settled bool, rates ...float64) *loadgen.WarmUpResult {
	w := &loadgen.WarmUpResult{Rates: rates, Stable: settled, Settled: settled}
	for i, r := range rates {
		w.Runs = append(w.Runs, loadgen.WarmUpRun{Index: i + 1, Duration: 2 * time.Second, Rate: r, CompilerShare: 0.1 / float64(i+1), JIT: true})
		w.Loaded += 2 * time.Second
	}
	return w
}
