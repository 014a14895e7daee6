//go:build linux

package main

import (
	"fmt"
	"math"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// checkMeasure checks the measurement flags.
func (o options) checkMeasure() error {
	switch {
	case o.capacityRate <= 0 || math.IsInf(o.capacityRate, 0) || math.IsNaN(o.capacityRate):
		return fmt.Errorf("-capacity-rate %g: want requests/s > 0, far above what Tomcat answers", o.capacityRate)
	case o.repeat < 1:
		return fmt.Errorf("-repeat %d: want 1 or more capacity runs per step", o.repeat)
	case o.rate < 0 || math.IsInf(o.rate, 0) || math.IsNaN(o.rate):
		return fmt.Errorf("-rate %g: want requests/s > 0, or 0 for %.0f%% of the baseline's capacity", o.rate, 100*DefaultLatencyShare)
	case o.connections < 1:
		return fmt.Errorf("-connections %d: want 1 or more", o.connections)
	case o.duration <= 0:
		return fmt.Errorf("-duration %s: want > 0", o.duration)
	case o.warmup < 0:
		return fmt.Errorf("-warmup %s: want >= 0 (0: no warm-up)", o.warmup)
	case o.warmupStep <= 0:
		return fmt.Errorf("-warmup-interval %s: want > 0", o.warmupStep)
	}
	return nil
}

// studyJSON is what -json writes.
type studyJSON struct {
	// Steps has the baseline, then every step of the plan in order.
	Steps []stepJSON `json:"steps"`
	// CommonRate is the rate of every latency run (requests/s).
	CommonRate   float64 `json:"common_rate_rps"`
	CapacityRate float64 `json:"capacity_rate_rps"`
	Repeat       int     `json:"repeat"`
	Connections  int     `json:"connections"`
	Duration     float64 `json:"duration_s"`
	// Comparison is the step table in full (histogram-free figures).
	Comparison loadgen.StepComparison `json:"comparison"`
}

// stepJSON is one step: measured (with its figures), skipped or failed.
type stepJSON struct {
	Step   string `json:"step"`
	Status string `json:"status"`
	// Runner is the runner's status ("applied", "reverted", "unchanged",
	// …) and Reason its detail; empty for the baseline.
	Runner string `json:"runner_status,omitempty"`
	Reason string `json:"reason,omitempty"`
	// MeasuredIn is "baseline" for a step of the baseline that changed
	// the host: its figures are the baseline's.
	MeasuredIn string `json:"measured_in,omitempty"`
	*measuredJSON
}

type measuredJSON struct {
	Capacity        float64     `json:"capacity_rps"` // median of the runs
	CapacityMin     float64     `json:"capacity_min_rps"`
	CapacityMax     float64     `json:"capacity_max_rps"`
	CapacityRuns    int         `json:"capacity_runs"`
	CapacityErrors  int64       `json:"capacity_errors"`
	VsBaseline      float64     `json:"vs_baseline_percent"`
	VsBaselineNoise bool        `json:"vs_baseline_noise"`
	VsPrevious      float64     `json:"vs_previous_percent"`
	VsPreviousNoise bool        `json:"vs_previous_noise"`
	Latency         latencyJSON `json:"latency"`
}

type latencyJSON struct {
	Rate   float64 `json:"rate_rps"`
	P50    float64 `json:"p50_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
	Errors int64   `json:"errors"`
	CPU    float64 `json:"jvm_cpu_percent,omitempty"`
}

// Statuses of a step in -json.
const (
	jsonMeasured = "measured"
	jsonSkipped  = "skipped"
	jsonFailed   = "failed"
)

// studyJSONOf builds -json's document: the measured baseline first, then
// each of the runner's results, measured when the comparison has a row
// of that name (or, for a step of the baseline that was applied, when
// the baseline has one), failed when the runner says so or when the step
// was applied but has no measurement, skipped otherwise.
func studyJSONOf(o options, cmp loadgen.StepComparison, results []tuning.StepResult, inBaseline map[string]bool) studyJSON {
	rows := map[string]loadgen.StepRow{}
	for _, r := range cmp.Rows {
		rows[r.Name] = r
	}
	doc := studyJSON{CapacityRate: o.capacityRate, Repeat: o.repeat, Connections: o.connections,
		Duration: o.duration.Seconds(), Comparison: cmp}
	if len(cmp.Rows) > 0 {
		doc.CommonRate = cmp.Rows[0].Latency.Load
	}
	add := func(name string, res *tuning.StepResult) {
		st := stepJSON{Step: name}
		if res != nil {
			st.Runner, st.Reason = string(res.Status), res.Reason
		}
		r, ok := rows[name]
		_, baseOK := rows["baseline"]
		applied := res != nil && (res.Status == tuning.StatusApplied || res.Status == tuning.StatusReverted)
		switch {
		case ok:
			st.Status, st.measuredJSON = jsonMeasured, measuredOf(r)
		case applied && inBaseline[name] && baseOK:
			st.Status, st.MeasuredIn = jsonMeasured, "baseline"
		case res == nil || res.Status == tuning.StatusFailed || applied:
			st.Status = jsonFailed
		default:
			st.Status = jsonSkipped
		}
		doc.Steps = append(doc.Steps, st)
	}
	add("baseline", nil)
	for i := range results {
		add(results[i].Name, &results[i])
	}
	return doc
}

func measuredOf(r loadgen.StepRow) *measuredJSON {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return &measuredJSON{
		Capacity: r.Capacity.Median, CapacityMin: r.Capacity.Min, CapacityMax: r.Capacity.Max,
		CapacityRuns: r.Capacity.N, CapacityErrors: r.CapacityErrors,
		VsBaseline: r.VsBaseline.Percent, VsBaselineNoise: r.VsBaseline.Noise,
		VsPrevious: r.VsPrevious.Percent, VsPreviousNoise: r.VsPrevious.Noise,
		Latency: latencyJSON{Rate: r.Latency.Load, P50: ms(r.Latency.P50), P99: ms(r.Latency.P99),
			Max: ms(r.Latency.Max), Errors: r.Latency.Errors, CPU: r.Latency.CPU},
	}
}
