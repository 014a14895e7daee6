//go:build linux

package study

import (
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
	"github.com/nettune/nettune/tuning"
)

// SchemaVersion is the version of -json's document (Document), its
// schema_version: docs/json-schema.md and docs/tomcat-tuning.schema.json
// describe it. A change that renames, removes or retypes a field raises
// it.
const SchemaVersion = 1

// Document is what -json writes: the measured baseline, then every step
// of the plan with its status and, when measured, its figures, each once.
// Its units are one convention: a duration in ms (a name ending _ms), a
// rate in requests/s (_rps), a change in percent (_percent or percent);
// a capacity is a CapacityJSON, a latency a LatencyJSON and a change an
// UpliftJSON wherever they appear.
type Document struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Steps has the baseline, then every step of the plan in order; empty
	// in -plan's document.
	Steps []StepJSON `json:"steps"`
	// CommonRate is the rate of every latency run (requests/s; 0 when
	// nothing was measured).
	CommonRate float64 `json:"common_rate_rps"`
	// CapacityRate is the rate each capacity run offers (-capacity-rate).
	CapacityRate float64 `json:"capacity_rate_rps"`
	Repeat       int     `json:"repeat"`
	// Connections is the count every load used (the sizing's, or
	// -connections; 0 in -plan's document without -connections).
	Connections int `json:"connections"`
	// Duration is each run's length (-duration), in ms.
	Duration int64 `json:"duration_ms"`
	// Alpha is the significance level of the uplifts' test.
	Alpha float64 `json:"alpha"`
	// Drift is the starting configuration measured again after the last
	// step, against the baseline; absent when it was not.
	Drift *DriftJSON `json:"drift,omitempty"`
	// Searches are the searched steps: every candidate's value, reason
	// and figures, and which was kept and why.
	Searches []SearchJSON `json:"searches,omitempty"`
	// SharedCPUs, when set, says the load ran on Tomcat's CPUs
	// (-load-shares-cpus): no figure is Tomcat's alone.
	SharedCPUs string `json:"load_shares_cpus,omitempty"`
	// CPUMethod is how Tomcat's CPUs were restricted and why (-cpu-method
	// auto's choice).
	CPUMethod *CPUMethodChoice `json:"cpu_method,omitempty"`
	// Load is the load sizing of the baseline: the count used, whether
	// the server saturated, every count tried; absent with -connections.
	Load *LoadJSON `json:"load,omitempty"`
	// Plan is -plan's: the host and every step's change, unmeasured;
	// absent from a run's document.
	Plan *PlanJSON `json:"plan,omitempty"`
}

// StepJSON is one step: measured (with its figures), unchanged, skipped
// or failed.
type StepJSON struct {
	Step   string `json:"step"`
	Status string `json:"status"`
	// Runner is the runner's status ("applied", "reverted", "unchanged",
	// …) and Reason its detail; empty for the baseline.
	Runner string `json:"runner_status,omitempty"`
	Reason string `json:"reason,omitempty"`
	// MeasuredIn is "baseline" for a step of the baseline that changed
	// the host: its figures are the baseline's.
	MeasuredIn string `json:"measured_in,omitempty"`
	// LoadBound, when set, says the load generator limited a figure of
	// the step (loadgen.LoadBound), e.g. "load-bound: client CPU 97 % of
	// 2 cores, lag p99 12ms (capacity run 2)": that figure is the
	// generator's, not Tomcat's.
	LoadBound string `json:"load_bound,omitempty"`
	// Setting is what a searched step kept, e.g. "maxThreads=4 (measured
	// best; the guide's rule 1: −27 %)"; empty for other steps.
	Setting string `json:"setting,omitempty"`
	// Unsettled: the warm-up ended before the JVM settled, and so did a
	// second one after its capacity runs.
	Unsettled bool `json:"unsettled,omitempty"`
	// Remeasured: the first warm-up ended before the JVM settled, a
	// second one after its capacity runs settled, and the step's
	// figures are those measured after it (loadgen.StepFigures.Remeasured).
	Remeasured bool `json:"remeasured,omitempty"`
	// Capacity and Latency are the step's figures; absent unless the
	// step was measured itself.
	Capacity *CapacityJSON `json:"capacity,omitempty"`
	Latency  *LatencyJSON  `json:"latency,omitempty"`
	// VsBaseline and VsPrevious are the capacity's change against the
	// baseline and the step before; absent for the baseline.
	VsBaseline *UpliftJSON `json:"vs_baseline,omitempty"`
	VsPrevious *UpliftJSON `json:"vs_previous,omitempty"`
	// P99VsBaseline is the % change of p99 at the common rate against
	// the baseline's; absent for the baseline.
	P99VsBaseline *float64 `json:"p99_vs_baseline_percent,omitempty"`
	// GuideVsPrevious is the Arm guide's own change for this step against
	// the one before (its wrk2 runs); absent for steps it does not report.
	GuideVsPrevious *float64 `json:"guide_vs_previous_percent,omitempty"`
	// WarmUp is the step's warm-up (the second when it had two); absent
	// without one.
	WarmUp *WarmUpJSON `json:"warm_up,omitempty"`
	// WarmUpFirst is the first warm-up of a step warmed up twice, which
	// ended unsettled; absent otherwise.
	WarmUpFirst *WarmUpJSON `json:"warm_up_first,omitempty"`
	// Cost is where Tomcat's time went in the step's capacity runs;
	// absent without a JVM to read.
	Cost *CostJSON `json:"cost,omitempty"`
	// Why is the figure of Cost that moved most against the step before
	// (whyOf); absent for the first measured step.
	Why string `json:"why,omitempty"`
}

// WarmUpJSON is a step's warm-up: each run's rate and JIT compiler share,
// and whether it settled.
type WarmUpJSON struct {
	Runs []WarmUpRunJSON `json:"runs"`
	// Loaded is the warm-up's load in all, in ms.
	Loaded int64 `json:"loaded_ms"`
	// Stable: the rate stopped climbing; Settled: and the JIT compilers
	// were quiet.
	Stable  bool `json:"stable"`
	Settled bool `json:"settled"`
}

// WarmUpRunJSON is one warm-up run.
type WarmUpRunJSON struct {
	Duration int64   `json:"duration_ms"`
	Rate     float64 `json:"rate_rps"`
	// CompilerShare is the JIT compilers' share of the JVM's CPU over the
	// run, in percent; absent when not measured.
	CompilerShare *float64 `json:"compiler_share_percent,omitempty"`
}

// CostJSON is a StepCost: per request in ms, shares in percent.
type CostJSON struct {
	Requests uint64 `json:"requests"`
	Interval int64  `json:"interval_ms"`
	// UserPerRequest and SystemPerRequest are the JVM's own CPU time
	// per request.
	UserPerRequest   float64 `json:"jvm_user_per_request_ms"`
	SystemPerRequest float64 `json:"jvm_system_per_request_ms"`
	// CPUs is how many CPUs Tomcat had and CPU their time's split.
	CPUs int           `json:"tomcat_cpus"`
	CPU  *CPUSplitJSON `json:"cpu_percent,omitempty"`
	// ITR is requests per busy CPU-second of Tomcat's CPUs.
	ITR float64 `json:"itr_rps"`
	// Voluntary and Involuntary are the JVM threads' context switches.
	Voluntary   int64      `json:"voluntary_switches"`
	Involuntary int64      `json:"involuntary_switches"`
	Pools       []PoolJSON `json:"pools"`
	// JVM is from the JVM's own counters; absent without them.
	JVM *JVMJSON `json:"jvm,omitempty"`
	// QueueInterrupts counts each NIC queue's interrupts, by name.
	QueueInterrupts map[string]uint64 `json:"queue_interrupts,omitempty"`
	// GeneratorCPU is the load generator's CPU, in percent of
	// GeneratorCores.
	GeneratorCPU   float64 `json:"generator_cpu_percent"`
	GeneratorCores float64 `json:"generator_cores"`
	// Missing names what could not be read.
	Missing []string `json:"missing,omitempty"`
}

// CPUSplitJSON is each state's share of Tomcat's CPUs' time, in percent.
type CPUSplitJSON struct {
	User    float64 `json:"user"`
	System  float64 `json:"system"`
	IRQ     float64 `json:"irq"`
	SoftIRQ float64 `json:"softirq"`
	Steal   float64 `json:"steal"`
	Idle    float64 `json:"idle"`
}

// PoolJSON is a thread pool's CPU and switches.
type PoolJSON struct {
	Pool        string  `json:"pool"`
	Kind        string  `json:"kind"`
	Threads     int     `json:"threads"`
	CPU         float64 `json:"cpu_ms"`
	Voluntary   int64   `json:"voluntary_switches"`
	Involuntary int64   `json:"involuntary_switches"`
}

// JVMJSON is the JVM's collections, compilation and safepoints.
type JVMJSON struct {
	Collectors    []CollectorJSON `json:"collectors"`
	Collections   int64           `json:"gc_collections"`
	Pause         float64         `json:"gc_pause_ms"`
	Compile       float64         `json:"compile_ms"`
	Safepoints    int64           `json:"safepoints"`
	SafepointTime float64         `json:"safepoint_ms"`
}

// CollectorJSON is one collector's collections and pause time.
type CollectorJSON struct {
	Name        string  `json:"name"`
	Collections int64   `json:"collections"`
	Pause       float64 `json:"pause_ms"`
}

// CapacityJSON is a capacity: the achieved rate of repeated saturating
// runs, in requests/s.
type CapacityJSON struct {
	Median float64 `json:"median_rps"`
	Min    float64 `json:"min_rps"`
	Max    float64 `json:"max_rps"`
	// Runs is how many runs; RunsRPS each one's rate, in order (empty
	// when they were not kept).
	Runs    int       `json:"runs"`
	RunsRPS []float64 `json:"runs_rps"`
	// Errors counts the runs' failed requests; absent where they are not
	// counted (the load sizing's).
	Errors *int64 `json:"errors,omitempty"`
}

// LatencyJSON is a latency run at one offered rate, corrected for
// coordinated omission: durations in ms.
type LatencyJSON struct {
	Rate     float64 `json:"rate_rps"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Mean     float64 `json:"mean_ms"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	Max      float64 `json:"max_ms"`
	// CPU is the JVM's CPU over the run, in percent of one CPU; absent
	// when not sampled.
	CPU float64 `json:"jvm_cpu_percent,omitempty"`
}

// UpliftJSON is the change of a capacity from one configuration to
// another (stats.Uplift).
type UpliftJSON struct {
	// Percent is the change of the median.
	Percent float64 `json:"percent"`
	// Verdict is "gain", "loss", "no significant change", "too few
	// runs" or "unsettled"; absent when only the ranges were compared
	// (runs not kept), and then P and CI are absent too.
	Verdict string `json:"verdict,omitempty"`
	// P is the Mann-Whitney U test's two-sided p-value.
	P float64 `json:"p,omitempty"`
	// CI is the 95 % Hodges-Lehmann interval of the change, in percent:
	// [low, high].
	CI []float64 `json:"ci_percent,omitempty"`
	// Noise: the change lies inside the runs' spread (the deprecated
	// range rule).
	Noise bool `json:"noise"`
}

// SearchJSON is a searched step (Search): every candidate with its
// figures, and the choice.
type SearchJSON struct {
	Step string `json:"step"`
	// Setting names the values: "maxThreads", "queues".
	Setting    string          `json:"setting"`
	Candidates []CandidateJSON `json:"candidates"`
	// Rule is the index of the guide's rule among Candidates.
	Rule int `json:"rule"`
	// Choice is absent until every candidate is measured (and in -plan's
	// document).
	Choice *ChoiceJSON `json:"choice,omitempty"`
}

// CandidateJSON is one value a searched step measures.
type CandidateJSON struct {
	Value int    `json:"value"`
	Why   string `json:"why"`
	// Previous marks the value before the step: its figures are the
	// step before's.
	Previous  bool `json:"previous,omitempty"`
	Unsettled bool `json:"unsettled,omitempty"`
	// Remeasured: as StepJSON's.
	Remeasured bool          `json:"remeasured,omitempty"`
	Capacity   *CapacityJSON `json:"capacity,omitempty"`
	Latency    *LatencyJSON  `json:"latency,omitempty"`
}

// ChoiceJSON is which candidate a search kept (loadgen.Choice): indexes
// into its candidates.
type ChoiceJSON struct {
	Best int   `json:"best"`
	Top  int   `json:"top"`
	Tied []int `json:"tied"`
	// VsBest is each candidate's capacity against Best's.
	VsBest []UpliftJSON `json:"vs_best"`
	Why    string       `json:"why"`
}

// DriftJSON is the drift guard: the starting configuration measured again
// after the last step.
type DriftJSON struct {
	Capacity CapacityJSON `json:"capacity"`
	Latency  *LatencyJSON `json:"latency,omitempty"`
	// VsBaseline is its change against the first measurement.
	VsBaseline UpliftJSON `json:"vs_baseline"`
	// Untrusted are the uplifts called significant that are no larger
	// than the drift, smallest first.
	Untrusted []UntrustedJSON `json:"untrusted"`
}

// UntrustedJSON is an uplift of the step table the drift makes
// untrustworthy.
type UntrustedJSON struct {
	Step string `json:"step"`
	// Against is "baseline" or "previous".
	Against string     `json:"against"`
	Uplift  UpliftJSON `json:"uplift"`
}

// LoadJSON is the load sizing (LoadSizing).
type LoadJSON struct {
	Connections int    `json:"connections"`
	Saturated   bool   `json:"saturated"`
	Why         string `json:"why"`
	// Start and Bound are the first and the largest count allowed.
	Start int           `json:"start"`
	Bound int           `json:"bound"`
	Tried []SizeTryJSON `json:"tried"`
}

// SizeTryJSON is one connection count the sizing measured.
type SizeTryJSON struct {
	Connections int          `json:"connections"`
	Capacity    CapacityJSON `json:"capacity"`
	// Growth is the change against the count before; absent for the
	// first.
	Growth    *UpliftJSON `json:"growth,omitempty"`
	KeptUp    bool        `json:"kept_up,omitempty"`
	LoadBound string      `json:"load_bound,omitempty"`
}

// DocumentOf builds -json's document: the measured baseline first, then
// each of the runner's results, measured when the comparison has a row of
// that name (or, for a step of the baseline that was applied, when the
// baseline has one), failed when the runner says so or when the step was
// applied but has no measurement, unchanged or skipped as the runner said.
func DocumentOf(o Options, res Results) Document {
	cmp := res.Comparison()
	o = res.Used(o)
	rows := map[string]loadgen.StepRow{}
	for _, r := range cmp.Rows {
		rows[r.Name] = r
	}
	doc := Document{SchemaVersion: SchemaVersion, CapacityRate: o.CapacityRate, Repeat: o.Repeat, Connections: o.Connections,
		Duration: o.Duration.Milliseconds(), Alpha: cmp.Options.Alpha, SharedCPUs: res.SharedCPUs, Load: loadJSONOf(res.Load)}
	for i := range res.Searches {
		doc.Searches = append(doc.Searches, searchJSONOf(&res.Searches[i]))
	}
	if res.CPUMethod.Chosen != "" {
		doc.CPUMethod = &res.CPUMethod
	}
	if d, ok := res.Drift(); ok {
		doc.Drift = driftJSONOf(*res.Again, d)
	}
	if len(cmp.Rows) > 0 {
		doc.CommonRate = cmp.Rows[0].Latency.Load
	}
	_, baseOK := rows["baseline"]
	add := func(name string, sr *tuning.StepResult) {
		st := StepJSON{Step: name}
		if sr != nil {
			st.Runner, st.Reason = string(sr.Status), sr.Reason
		}
		r, ok := rows[name]
		applied := sr != nil && (sr.Status == tuning.StatusApplied || sr.Status == tuning.StatusReverted)
		switch {
		case ok:
			st.Status, st.LoadBound = StatusMeasured, res.LoadBound[name]
			measuredOf(&st, r, name != cmp.Rows[0].Name)
			st.WarmUp, st.WarmUpFirst = warmUpJSONOf(res.WarmUps[name]), warmUpJSONOf(res.FirstWarmUps[name])
			st.Cost, st.Why = costJSONOf(res.Costs, name), res.Why(name)
		case applied && res.Baseline[name] && baseOK:
			st.Status, st.MeasuredIn = StatusMeasured, "baseline"
		case sr == nil || sr.Status == tuning.StatusFailed || applied:
			st.Status = StatusFailed
		case sr.Status == tuning.StatusNoChange:
			st.Status = StatusUnchanged
		default:
			st.Status = StatusSkipped
		}
		doc.Steps = append(doc.Steps, st)
	}
	add("baseline", nil)
	for i := range res.Steps {
		add(res.Steps[i].Name, &res.Steps[i])
	}
	return doc
}

// ms is d in milliseconds, to the nanosecond.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func warmUpJSONOf(wu *loadgen.WarmUpResult) *WarmUpJSON {
	if wu == nil {
		return nil
	}
	j := &WarmUpJSON{Loaded: wu.Loaded.Milliseconds(), Stable: wu.Stable, Settled: wu.Settled, Runs: []WarmUpRunJSON{}}
	for _, r := range wu.Runs {
		rj := WarmUpRunJSON{Duration: r.Duration.Milliseconds(), Rate: r.Rate}
		if r.JIT {
			share := 100 * r.CompilerShare
			rj.CompilerShare = &share
		}
		j.Runs = append(j.Runs, rj)
	}
	return j
}

func costJSONOf(costs map[string]StepCost, name string) *CostJSON {
	s, ok := costs[name]
	if !ok {
		return nil
	}
	j := &CostJSON{Requests: s.Requests, Interval: s.Interval.Milliseconds(), UserPerRequest: s.perRequest(s.User) / 1000,
		SystemPerRequest: s.perRequest(s.System) / 1000, CPUs: s.CPU.CPUs, ITR: s.ITR(), Voluntary: s.Voluntary,
		Involuntary: s.Involuntary, Pools: []PoolJSON{}, QueueInterrupts: s.QueueIRQs, GeneratorCPU: s.Generator.Percent(),
		GeneratorCores: s.Generator.Cores(), Missing: dedupe(s.Missing)}
	if c := s.CPU; c.Total() > 0 {
		pct := func(d time.Duration) float64 { return 100 * c.Share(d) }
		j.CPU = &CPUSplitJSON{User: pct(c.User), System: pct(c.System), IRQ: pct(c.IRQ), SoftIRQ: pct(c.SoftIRQ), Steal: pct(c.Steal), Idle: pct(c.Idle)}
	}
	for _, p := range s.Pools {
		j.Pools = append(j.Pools, PoolJSON{Pool: p.Pool, Kind: p.Kind, Threads: p.Threads, CPU: ms(p.CPU), Voluntary: p.VoluntarySwitches, Involuntary: p.InvoluntarySwitches})
	}
	if f := s.JVM; f != nil {
		n, pause := f.GC()
		jj := &JVMJSON{Collections: n, Pause: ms(pause), Compile: ms(f.Compile), Safepoints: f.Safepoints, SafepointTime: ms(f.SafepointTime), Collectors: []CollectorJSON{}}
		for _, c := range f.Collectors {
			jj.Collectors = append(jj.Collectors, CollectorJSON{Name: c.Name, Collections: c.Collections, Pause: ms(c.Time)})
		}
		j.JVM = jj
	}
	return j
}

// measuredOf fills a measured step's figures from its row; compared is
// false for the first row, which has no change.
func measuredOf(st *StepJSON, r loadgen.StepRow, compared bool) {
	st.Setting, st.Unsettled, st.Remeasured = r.Setting, r.Unsettled, r.Remeasured
	st.Capacity, st.Latency = figuresJSONOf(r.StepFigures)
	if compared {
		b, p, p99 := upliftJSONOf(r.VsBaseline), upliftJSONOf(r.VsPrevious), r.P99VsBaseline
		st.VsBaseline, st.VsPrevious, st.P99VsBaseline = &b, &p, &p99
	}
	if r.Reference != nil {
		g := r.Reference.VsPrevious
		st.GuideVsPrevious = &g
	}
}

// figuresJSONOf are a measurement's capacity and latency; the latency is
// nil when no run at the common rate was made.
func figuresJSONOf(f loadgen.StepFigures) (*CapacityJSON, *LatencyJSON) {
	errs := f.CapacityErrors
	c := capacityJSONOf(f.Capacity, f.CapacityRuns)
	c.Errors = &errs
	return &c, latencyJSONOf(f.Latency)
}

// capacityJSONOf is a capacity from its spread and runs (the spread of
// the runs when it is empty).
func capacityJSONOf(s stats.Spread, runs []float64) CapacityJSON {
	if s.N == 0 && len(runs) > 0 {
		s = stats.SpreadOf(runs)
	}
	return CapacityJSON{Median: s.Median, Min: s.Min, Max: s.Max, Runs: s.N, RunsRPS: append([]float64{}, runs...)}
}

func latencyJSONOf(l loadgen.Figures) *LatencyJSON {
	if l.Load == 0 && l.Requests == 0 {
		return nil
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return &LatencyJSON{Rate: l.Load, Requests: l.Requests, Errors: l.Errors, Mean: ms(l.Mean), P50: ms(l.P50), P90: ms(l.P90),
		P99: ms(l.P99), P999: ms(l.P999), Max: ms(l.Max), CPU: l.CPU}
}

func upliftJSONOf(u stats.Uplift) UpliftJSON {
	j := UpliftJSON{Percent: u.Percent, Verdict: string(u.Verdict), Noise: u.Noise}
	if u.Verdict != "" {
		j.P, j.CI = u.P, []float64{u.Low, u.High}
	}
	return j
}

func searchJSONOf(s *Search) SearchJSON {
	j := SearchJSON{Step: s.Step, Setting: s.Setting, Rule: s.Rule, Candidates: []CandidateJSON{}}
	for _, c := range s.Candidates {
		cj := CandidateJSON{Value: c.Value, Why: c.Why, Previous: c.Previous}
		if c.Figures != nil {
			cj.Unsettled, cj.Remeasured = c.Figures.Unsettled, c.Figures.Remeasured
			cj.Capacity, cj.Latency = figuresJSONOf(*c.Figures)
		}
		j.Candidates = append(j.Candidates, cj)
	}
	if ch := s.Choice; ch != nil {
		cj := ChoiceJSON{Best: ch.Best, Top: ch.Top, Tied: append([]int{}, ch.Tied...), VsBest: []UpliftJSON{}, Why: ch.Why}
		for _, u := range ch.VsBest {
			cj.VsBest = append(cj.VsBest, upliftJSONOf(u))
		}
		j.Choice = &cj
	}
	return j
}

func driftJSONOf(again loadgen.StepFigures, d loadgen.Drift) *DriftJSON {
	c, l := figuresJSONOf(again)
	j := &DriftJSON{Capacity: *c, Latency: l, VsBaseline: upliftJSONOf(d.Uplift), Untrusted: []UntrustedJSON{}}
	for _, u := range d.Untrusted {
		j.Untrusted = append(j.Untrusted, UntrustedJSON{Step: u.Step, Against: u.Against, Uplift: upliftJSONOf(u.Uplift)})
	}
	return j
}

func loadJSONOf(s *LoadSizing) *LoadJSON {
	if s == nil {
		return nil
	}
	j := &LoadJSON{Connections: s.Connections, Saturated: s.Saturated, Why: s.Why, Start: s.Start, Bound: s.Bound, Tried: []SizeTryJSON{}}
	for _, t := range s.Tried {
		sp := stats.SpreadOf(t.Runs)
		if sp.N == 0 {
			sp = stats.Spread{Median: t.Capacity, Min: t.Capacity, Max: t.Capacity}
		}
		tj := SizeTryJSON{Connections: t.Connections, Capacity: capacityJSONOf(sp, t.Runs), KeptUp: t.KeptUp, LoadBound: t.LoadBound}
		if t.Growth != nil {
			g := upliftJSONOf(*t.Growth)
			tj.Growth = &g
		}
		j.Tried = append(j.Tried, tj)
	}
	return j
}
