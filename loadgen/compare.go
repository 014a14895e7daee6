package loadgen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nettune/nettune/loadgen/internal/format"
	"github.com/nettune/nettune/loadgen/stats"
)

// Figures are the headline numbers of one measured run: a tuning step, a
// variation, or one level of a sweep. They are what comparisons, sweep
// analysis and bar charts work on.
type Figures struct {
	// Name labels the run: "baseline", "access-log", "60 users".
	Name string `json:"name"`
	// Load is the offered load: connections (users) in a closed model,
	// requests/s in an open one. Zero when not a sweep level.
	Load float64 `json:"load,omitempty"`
	// Requests is the number of completed requests.
	Requests int64 `json:"requests"`
	// Errors counts failed requests (socket errors, timeouts, non-2xx/3xx).
	Errors int64 `json:"errors"`
	// Throughput is completed requests per second (wrk's Requests/sec,
	// the IBM tuning-variations study's ETR, external throughput rate).
	Throughput float64 `json:"requests_per_sec"`
	// Latency figures, corrected for coordinated omission in an open model.
	Mean time.Duration `json:"latency_mean_ns"`
	P50  time.Duration `json:"latency_p50_ns"`
	P90  time.Duration `json:"latency_p90_ns"`
	P99  time.Duration `json:"latency_p99_ns"`
	P999 time.Duration `json:"latency_p999_ns"`
	Max  time.Duration `json:"latency_max_ns"`
	// CPU is the server's CPU utilisation while measured, in percent of
	// the CPUs available to it (the IBM study's %CPU); 0 when not
	// sampled.
	CPU float64 `json:"cpu_percent,omitempty"`
	// OwnLagP99 is the p99 of the generator's own send lag in an open
	// model (Histograms.OwnLag); above 1 ms, LateSends says the generator
	// sent late. 0 in a closed model.
	OwnLagP99 time.Duration `json:"own_lag_p99_ns,omitempty"`
}

// ITR is the internal throughput rate: throughput per unit of CPU
// utilisation (requests/s at 100% CPU), as the IBM tuning-variations study
// compares its variations.
// It is 0 when CPU was not sampled.
func (f Figures) ITR() float64 {
	if f.CPU <= 0 {
		return 0
	}
	return f.Throughput / (f.CPU / 100)
}

// CompareRow is one run of a comparison with its changes.
type CompareRow struct {
	Figures
	// Relative is throughput as a percentage of the baseline's (the IBM
	// study's %ETR: the baseline is 100).
	Relative float64 `json:"relative_percent"`
	// VsBaseline and VsPrevious are the % change of throughput against
	// the baseline and against the row before (0 for the baseline).
	VsBaseline float64 `json:"vs_baseline_percent"`
	VsPrevious float64 `json:"vs_previous_percent"`
	// LatencyVsBaseline is the % change of the mean latency.
	LatencyVsBaseline float64 `json:"latency_vs_baseline_percent"`
	// P99VsBaseline is the % change of p99 latency.
	P99VsBaseline float64 `json:"p99_vs_baseline_percent"`
	// ITR is Figures.ITR, and ITRVsBaseline its % change (0 without CPU).
	ITR           float64 `json:"itr,omitempty"`
	ITRVsBaseline float64 `json:"itr_vs_baseline_percent,omitempty"`
}

// Comparison puts runs side by side against the first, the baseline.
type Comparison struct {
	Rows []CompareRow `json:"rows"`
}

// Compare compares runs against the first one. Changes against a zero
// value are reported as 0.
func Compare(runs ...Figures) Comparison {
	var c Comparison
	for i, f := range runs {
		r := CompareRow{Figures: f, ITR: f.ITR()}
		if i > 0 {
			base, prev := runs[0], runs[i-1]
			r.VsBaseline = change(base.Throughput, f.Throughput)
			r.VsPrevious = change(prev.Throughput, f.Throughput)
			r.LatencyVsBaseline = change(float64(base.Mean), float64(f.Mean))
			r.P99VsBaseline = change(float64(base.P99), float64(f.P99))
			r.ITRVsBaseline = change(base.ITR(), f.ITR())
		}
		if runs[0].Throughput > 0 {
			r.Relative = 100 * f.Throughput / runs[0].Throughput
		}
		c.Rows = append(c.Rows, r)
	}
	return c
}

func change(from, to float64) float64 { return format.Change(from, to) }

// JSON returns the comparison as indented JSON.
func (c Comparison) JSON() ([]byte, error) { return json.MarshalIndent(c, "", "  ") }

// Text renders the comparison as an aligned table: one row per run with
// requests/s, throughput relative to the baseline (=100) and the change
// against the baseline and the previous row, mean, p50, p99 and max
// latency with the mean's change, errors, and CPU and ITR when sampled.
func (c Comparison) Text() string {
	withCPU := false
	for _, r := range c.Rows {
		withCPU = withCPU || r.CPU > 0
	}
	header := []string{"run", "req/s", "rel", "vs base", "vs prev", "lat mean", "vs base", "p50", "p99", "max", "errors"}
	if withCPU {
		header = append(header, "CPU%", "ITR", "ITR vs base")
	}
	rows := [][]string{header}
	for i, r := range c.Rows {
		vsBase, vsPrev, latVs, itrVs := "", "", "", ""
		if i > 0 {
			vsBase, vsPrev = format.Pct(r.VsBaseline), format.Pct(r.VsPrevious)
			latVs, itrVs = format.Pct(r.LatencyVsBaseline), format.Pct(r.ITRVsBaseline)
		}
		row := []string{r.Name, fmt.Sprintf("%.2f", r.Throughput), fmt.Sprintf("%.1f", r.Relative), vsBase, vsPrev,
			cell(r.Mean), latVs, cell(r.P50), cell(r.P99), cell(r.Max), fmt.Sprint(r.Errors)}
		if withCPU {
			cpu, itr := "", ""
			if r.CPU > 0 {
				cpu, itr = fmt.Sprintf("%.2f", r.CPU), fmt.Sprintf("%.0f", r.ITR)
			}
			row = append(row, cpu, itr, itrVs)
		}
		rows = append(rows, row)
	}
	return format.Table(rows)
}

// cell formats a latency for a table, "-" when it was not measured.
func cell(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return format.Duration(d)
}

// StepFigures are one configuration's measurements in a step-by-step
// tuning study: its capacity over repeated saturating runs, and its
// latency at a rate common to every configuration, so that latencies
// compare like for like.
type StepFigures struct {
	Name string `json:"name"`
	// Setting, when not empty, is what the step chose among candidates
	// measured in its place (PickBest), shown after Name in Text, e.g.
	// "maxThreads=4 (measured best; the guide's rule 1: -27 %)".
	Setting string `json:"setting,omitempty"`
	// Capacity is the achieved rate of the saturating runs, in
	// requests/s (Capacity.Rate of MeasureCapacity).
	Capacity stats.Spread `json:"capacity_rps"`
	// CapacityRuns are the saturating runs' achieved rates, in order
	// (Capacity.Rates): what CompareSteps tests. Without them a step
	// compares by Capacity's range only (UpliftOf).
	CapacityRuns []float64 `json:"capacity_runs_rps,omitempty"`
	// CapacityErrors counts the saturating runs' failed requests.
	CapacityErrors int64 `json:"capacity_errors"`
	// Latency are the figures of the run at the common rate (Latency.Load
	// is that rate); zero when none ran.
	Latency Figures `json:"latency"`
	// Unsettled marks a step measured although its warm-up ended at its
	// limit before the server settled (WarmUpResult.Settled false): no
	// change to or from it is called significant.
	Unsettled bool `json:"unsettled,omitempty"`
	// Remeasured marks a step whose first warm-up ended unsettled and
	// that was measured again after a second warm-up that settled
	// (StepOptions.Remeasure): Capacity and CapacityRuns are the second
	// capacity runs', and the step is not Unsettled. False when the
	// second warm-up did not settle either (the step is then Unsettled,
	// with the first capacity runs) or when none was needed.
	Remeasured bool `json:"remeasured,omitempty"`
	// Reference is a published figure for the same step, shown beside
	// the measured one; nil when there is none.
	Reference *Reference `json:"reference,omitempty"`
}

// Reference is a published uplift of a tuning step, to set beside the
// measured one: the Arm Neoverse Tomcat guide's access log +11.1 %
// against the step before.
type Reference struct {
	// Source names where the figure comes from ("Arm guide"); it heads
	// the reference column of StepComparison.Text.
	Source string `json:"source"`
	// VsPrevious is the published change of throughput against the step
	// before, in percent.
	VsPrevious float64 `json:"vs_previous_percent"`
}

// StepRow is one configuration of a StepComparison with its changes.
type StepRow struct {
	StepFigures
	// VsBaseline and VsPrevious are the change of the capacity against
	// the first row and against the row before, with their interval, p
	// and verdict (UpliftOfRuns) when both rows carry CapacityRuns, by
	// the ranges only (UpliftOf) otherwise; zero for the first row.
	VsBaseline stats.Uplift `json:"vs_baseline"`
	VsPrevious stats.Uplift `json:"vs_previous"`
	// P99VsBaseline is the % change of p99 latency at the common rate
	// against the first row (0 when either was not measured).
	P99VsBaseline float64 `json:"p99_vs_baseline_percent"`
}

// StepComparison puts the steps of a tuning study side by side against
// the first, the baseline: capacity with its spread and uplifts, and
// latency at the common rate.
type StepComparison struct {
	Rows []StepRow `json:"rows"`
	// Options are the thresholds the uplifts were judged by (defaults
	// filled in).
	Options stats.UpliftOptions `json:"options"`
}

// CompareSteps is CompareStepsWith with the default thresholds: α =
// 0.05, a 95 % interval, a ±1 % noise band.
func CompareSteps(steps ...StepFigures) StepComparison {
	c, _ := CompareStepsWith(nil, steps...) // the defaults are valid
	return c
}

// CompareStepsWith compares steps against the first one and each against
// the one before: the change of the capacity's median, and, when both
// steps carry CapacityRuns, its interval, p and verdict (UpliftOfRuns
// with opts: nil means the defaults). A change to or from an Unsettled
// step that would be a gain, a loss or no change reads VerdictUnsettled.
// A step with CapacityRuns and a zero Capacity gets SpreadOf(CapacityRuns)
// in its row. It returns an error for options out of range or runs that
// are not positive.
func CompareStepsWith(opts *stats.UpliftOptions, steps ...StepFigures) (StepComparison, error) {
	o, err := opts.WithDefaults()
	if err != nil {
		return StepComparison{}, err
	}
	c := StepComparison{Options: o}
	for i, s := range steps {
		if s.Capacity.N == 0 && len(s.CapacityRuns) > 0 {
			s.Capacity = stats.SpreadOf(s.CapacityRuns)
		}
		r := StepRow{StepFigures: s}
		if i > 0 {
			if r.VsBaseline, err = stepUplift(steps[0], s, &o); err != nil {
				return StepComparison{}, fmt.Errorf("%s against %s: %w", s.Name, steps[0].Name, err)
			}
			if r.VsPrevious, err = stepUplift(steps[i-1], s, &o); err != nil {
				return StepComparison{}, fmt.Errorf("%s against %s: %w", s.Name, steps[i-1].Name, err)
			}
			if s.Latency.P99 > 0 {
				r.P99VsBaseline = change(float64(steps[0].Latency.P99), float64(s.Latency.P99))
			}
		}
		c.Rows = append(c.Rows, r)
	}
	return c, nil
}

// stepUplift compares step to against from.
func stepUplift(from, to StepFigures, o *stats.UpliftOptions) (stats.Uplift, error) {
	if len(from.CapacityRuns) == 0 || len(to.CapacityRuns) == 0 {
		return stats.UpliftOf(from.Capacity, to.Capacity), nil
	}
	u, err := stats.UpliftOfRuns(from.CapacityRuns, to.CapacityRuns, o)
	if err != nil {
		return u, err
	}
	if (from.Unsettled || to.Unsettled) && u.Verdict != stats.VerdictTooFewRuns {
		u.Verdict = stats.VerdictUnsettled
	}
	return u, nil
}

// JSON returns the comparison as indented JSON.
func (c StepComparison) JSON() ([]byte, error) { return json.MarshalIndent(c, "", "  ") }

// Throughput returns the comparison as a Comparison of the capacities'
// medians (Figures.Throughput), for PlotThroughput.
func (c StepComparison) Throughput() Comparison {
	runs := make([]Figures, len(c.Rows))
	for i, r := range c.Rows {
		runs[i] = Figures{Name: r.Name, Throughput: r.Capacity.Median, Errors: r.CapacityErrors}
	}
	return Compare(runs...)
}

// Text renders the comparison as an aligned table: one row per step with
// the capacity (the median, req/s), its range over the runs, the change
// against the baseline and the previous step (Uplift.String: "+10.4 %
// [+7.9, +12.6] p=0.008", "no significant change (…)"; by the ranges,
// "(noise)" when inside the spread, for steps without their runs), the
// reference's change beside it when a step has one, then, at the common
// rate, p50, p99 and max latency with p99's change, and errors; the JVM's
// CPU at the common rate when sampled. A step's Setting follows its name,
// then, for an unsettled step, " (unsettled)".
func (c StepComparison) Text() string {
	withCPU := false
	refSource := ""
	for _, r := range c.Rows {
		withCPU = withCPU || r.Latency.CPU > 0
		if r.Reference != nil && refSource == "" {
			refSource = r.Reference.Source
			if refSource == "" {
				refSource = "reference"
			}
		}
	}
	header := []string{"step", "capacity", "min-max", "runs", "vs base", "vs prev"}
	if refSource != "" {
		header = append(header, refSource+" vs prev")
	}
	header = append(header, "at req/s", "p50", "p99", "vs base", "max", "errors")
	if withCPU {
		header = append(header, "CPU%")
	}
	rows := [][]string{header}
	for i, r := range c.Rows {
		vsBase, vsPrev, p99Vs := "", "", ""
		if i > 0 {
			vsBase, vsPrev = r.VsBaseline.String(), r.VsPrevious.String()
			if r.Latency.P99 > 0 && c.Rows[0].Latency.P99 > 0 {
				p99Vs = format.Percent(r.P99VsBaseline)
			}
		}
		at := "-"
		if r.Latency.Load > 0 {
			at = fmt.Sprintf("%.0f", r.Latency.Load)
		}
		name := r.Name
		if r.Setting != "" {
			name += " " + r.Setting
		}
		if r.Unsettled {
			name += " (unsettled)"
		}
		row := []string{name, fmt.Sprintf("%.0f", r.Capacity.Median),
			fmt.Sprintf("%.0f-%.0f", r.Capacity.Min, r.Capacity.Max), fmt.Sprint(r.Capacity.N), vsBase, vsPrev}
		if refSource != "" {
			ref := ""
			if r.Reference != nil {
				ref = format.Percent(r.Reference.VsPrevious)
			}
			row = append(row, ref)
		}
		row = append(row, at, cell(r.Latency.P50), cell(r.Latency.P99), p99Vs, cell(r.Latency.Max),
			fmt.Sprint(r.CapacityErrors+r.Latency.Errors))
		if withCPU {
			cpu := ""
			if r.Latency.CPU > 0 {
				cpu = fmt.Sprintf("%.1f", r.Latency.CPU)
			}
			row = append(row, cpu)
		}
		rows = append(rows, row)
	}
	return format.Table(rows)
}

// Legend says how Text's uplifts were judged, for a line under the table:
// the test, the interval, α and the noise band.
func (c StepComparison) Legend() string {
	o := c.Options
	return fmt.Sprintf("uplifts: change of the median capacity [%.0f %% interval of the ratio, exact Hodges-Lehmann] "+
		"p = two-sided Mann-Whitney U test of the runs;\n"+
		"  a gain or a loss needs p < %g and the whole interval outside ±%g %%; below %d runs a side nothing can be significant.\n",
		100*o.Confidence, o.Alpha, o.NoiseBand, stats.MinRuns(o.Alpha))
}

// UpliftRef names one uplift of a StepComparison.
type UpliftRef struct {
	// Step is the row's name.
	Step string `json:"step"`
	// Against is "baseline" (StepRow.VsBaseline) or "previous"
	// (StepRow.VsPrevious).
	Against string       `json:"against"`
	Uplift  stats.Uplift `json:"uplift"`
}

// Significant returns every uplift called a gain or a loss, smallest
// change (absolute Percent) first; ties keep the rows' order, baseline
// before previous.
func (c StepComparison) Significant() []UpliftRef {
	var out []UpliftRef
	for i, r := range c.Rows {
		if i == 0 {
			continue
		}
		if r.VsBaseline.Verdict.Significant() {
			out = append(out, UpliftRef{Step: r.Name, Against: "baseline", Uplift: r.VsBaseline})
		}
		if r.VsPrevious.Verdict.Significant() {
			out = append(out, UpliftRef{Step: r.Name, Against: "previous", Uplift: r.VsPrevious})
		}
	}
	slices.SortStableFunc(out, func(a, b UpliftRef) int {
		return cmp.Compare(math.Abs(a.Uplift.Percent), math.Abs(b.Uplift.Percent))
	})
	return out
}

// Drift is the starting configuration measured again after the last
// step, against its first measurement (the comparison's first row).
type Drift struct {
	// Uplift is the repeat's change against the first baseline
	// (UpliftOfRuns, or UpliftOf without runs).
	Uplift stats.Uplift `json:"drift"`
	// Untrusted are the significant uplifts (Significant) no larger than
	// the drift (absolute Percent): the host changed by as much over the
	// study, so they cannot be told from the drift. Smallest first.
	Untrusted []UpliftRef `json:"untrusted,omitempty"`
}

// Drift compares again, the first configuration measured again after the
// last step, against the first row, with the comparison's thresholds,
// and lists the significant uplifts it is at least as large as: a drift
// larger than the smallest uplift called significant means that uplift
// cannot be trusted. The drift's size is its Percent, significant or not.
func (c StepComparison) Drift(again StepFigures) (Drift, error) {
	if len(c.Rows) == 0 {
		return Drift{}, fmt.Errorf("loadgen: drift of %s: the comparison has no baseline", again.Name)
	}
	u, err := stepUplift(c.Rows[0].StepFigures, again, &c.Options)
	if err != nil {
		return Drift{}, fmt.Errorf("loadgen: drift of %s: %w", again.Name, err)
	}
	d := Drift{Uplift: u}
	for _, s := range c.Significant() {
		if math.Abs(s.Uplift.Percent) <= math.Abs(u.Percent) {
			d.Untrusted = append(d.Untrusted, s)
		}
	}
	return d, nil
}

// Text says the drift in a line: "drift: measured again, -5.2 % [-6.1,
// -4.0] p=0.008 against the first measurement; these uplifts are no
// larger and cannot be trusted: threads +4.3 % [+1.5, +6.9] p=0.006
// against the previous step", or "...; smaller than every uplift called
// significant".
func (d Drift) Text() string {
	s := "drift: measured again, " + d.Uplift.String() + " against the first measurement"
	if len(d.Untrusted) == 0 {
		return s + "; smaller than every uplift called significant\n"
	}
	parts := make([]string, len(d.Untrusted))
	for i, r := range d.Untrusted {
		against := "the previous step"
		if r.Against == "baseline" {
			against = "the baseline"
		}
		parts[i] = fmt.Sprintf("%s %s against %s", r.Step, r.Uplift, against)
	}
	return fmt.Sprintf("%s; these uplifts are no larger and cannot be trusted: %s\n", s, strings.Join(parts, "; "))
}
