package loadgen

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
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

func change(from, to float64) float64 {
	if from == 0 {
		return 0
	}
	return 100 * (to - from) / from
}

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
			vsBase, vsPrev = pct(r.VsBaseline), pct(r.VsPrevious)
			latVs, itrVs = pct(r.LatencyVsBaseline), pct(r.ITRVsBaseline)
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
	return table(rows)
}

// cell formats a latency for a table, "-" when it was not measured.
func cell(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return FormatDuration(d)
}

func pct(v float64) string {
	if math.Abs(v) < 0.005 {
		return "0.00%"
	}
	return fmt.Sprintf("%+.2f%%", v)
}

// table aligns rows: the first column left, the others right.
func table(rows [][]string) string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i == 0 {
				fmt.Fprintf(&b, "%-*s", widths[i], c)
			} else {
				fmt.Fprintf(&b, "  %*s", widths[i], c)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FormatDuration formats a latency compactly with three significant
// digits in the largest fitting unit: "850us", "1.20ms", "16.76s". Zero is
// "0".
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return sig3(float64(d)/float64(time.Microsecond)) + "us"
	case d < time.Second:
		return sig3(float64(d)/float64(time.Millisecond)) + "ms"
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.2fm", d.Minutes())
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// StepFigures are one configuration's measurements in a step-by-step
// tuning study: its capacity over repeated saturating runs, and its
// latency at a rate common to every configuration, so that latencies
// compare like for like.
type StepFigures struct {
	Name string `json:"name"`
	// Capacity is the achieved rate of the saturating runs, in
	// requests/s (Capacity.Rate of MeasureCapacity).
	Capacity Spread `json:"capacity_rps"`
	// CapacityErrors counts the saturating runs' failed requests.
	CapacityErrors int64 `json:"capacity_errors"`
	// Latency are the figures of the run at the common rate (Latency.Load
	// is that rate); zero when none ran.
	Latency Figures `json:"latency"`
}

// StepRow is one configuration of a StepComparison with its changes.
type StepRow struct {
	StepFigures
	// VsBaseline and VsPrevious are the change of the capacity's median
	// against the first row and against the row before, marked as noise
	// when inside the repeats' spread (zero for the first row).
	VsBaseline Uplift `json:"vs_baseline"`
	VsPrevious Uplift `json:"vs_previous"`
	// P99VsBaseline is the % change of p99 latency at the common rate
	// against the first row (0 when either was not measured).
	P99VsBaseline float64 `json:"p99_vs_baseline_percent"`
}

// StepComparison puts the steps of a tuning study side by side against
// the first, the baseline: capacity with its spread and uplifts, and
// latency at the common rate.
type StepComparison struct {
	Rows []StepRow `json:"rows"`
}

// CompareSteps compares steps against the first one and each against the
// one before, marking an uplift inside the repeats' spread as noise
// (UpliftOf).
func CompareSteps(steps ...StepFigures) StepComparison {
	var c StepComparison
	for i, s := range steps {
		r := StepRow{StepFigures: s}
		if i > 0 {
			r.VsBaseline = UpliftOf(steps[0].Capacity, s.Capacity)
			r.VsPrevious = UpliftOf(steps[i-1].Capacity, s.Capacity)
			if s.Latency.P99 > 0 {
				r.P99VsBaseline = change(float64(steps[0].Latency.P99), float64(s.Latency.P99))
			}
		}
		c.Rows = append(c.Rows, r)
	}
	return c
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
// against the baseline and the previous step — "(noise)" when inside the
// spread — then, at the common rate, p50, p99 and max latency with p99's
// change, and errors; the JVM's CPU at the common rate when sampled.
func (c StepComparison) Text() string {
	withCPU := false
	for _, r := range c.Rows {
		withCPU = withCPU || r.Latency.CPU > 0
	}
	header := []string{"step", "capacity", "min-max", "runs", "vs base", "vs prev", "at req/s", "p50", "p99", "vs base", "max", "errors"}
	if withCPU {
		header = append(header, "CPU%")
	}
	rows := [][]string{header}
	for i, r := range c.Rows {
		vsBase, vsPrev, p99Vs := "", "", ""
		if i > 0 {
			vsBase, vsPrev = upliftCell(r.VsBaseline), upliftCell(r.VsPrevious)
			if r.Latency.P99 > 0 && c.Rows[0].Latency.P99 > 0 {
				p99Vs = pct(r.P99VsBaseline)
			}
		}
		at := "-"
		if r.Latency.Load > 0 {
			at = fmt.Sprintf("%.0f", r.Latency.Load)
		}
		row := []string{r.Name, fmt.Sprintf("%.0f", r.Capacity.Median),
			fmt.Sprintf("%.0f-%.0f", r.Capacity.Min, r.Capacity.Max), fmt.Sprint(r.Capacity.N),
			vsBase, vsPrev, at, cell(r.Latency.P50), cell(r.Latency.P99), p99Vs, cell(r.Latency.Max),
			fmt.Sprint(r.CapacityErrors + r.Latency.Errors)}
		if withCPU {
			cpu := ""
			if r.Latency.CPU > 0 {
				cpu = fmt.Sprintf("%.1f", r.Latency.CPU)
			}
			row = append(row, cpu)
		}
		rows = append(rows, row)
	}
	return table(rows)
}

// upliftCell formats an uplift, "(noise)" after one inside the spread.
func upliftCell(u Uplift) string {
	if u.Noise {
		return pct(u.Percent) + " (noise)"
	}
	return pct(u.Percent)
}
