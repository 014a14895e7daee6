//go:build linux

package study

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// FormatResults renders step results as an aligned text table, a long
// detail wrapped to TableWidth columns under its own column.
func FormatResults(results []tuning.StepResult) string {
	var b strings.Builder
	w := len("step")
	for _, r := range results {
		w = max(w, len(r.Name))
	}
	fmt.Fprintf(&b, "%-*s  %-9s  %s\n", w, "step", "status", "detail")
	pad := strings.Repeat(" ", w+2+9+2)
	for _, r := range results {
		detail := Wrap(pad+r.Reason, TableWidth-2)
		detail = strings.ReplaceAll(strings.TrimPrefix(detail, pad), "\n"+pad+"  ", "\n"+pad)
		fmt.Fprintf(&b, "%s\n", strings.TrimRight(fmt.Sprintf("%-*s  %-9s  %s", w, r.Name, r.Status, detail), " "))
	}
	return b.String()
}

// Document is what -json writes: the measured baseline, then every step
// of the plan with its status and, when measured, its figures, each once.
type Document struct {
	// Steps has the baseline, then every step of the plan in order.
	Steps []StepJSON `json:"steps"`
	// CommonRate is the rate of every latency run (requests/s).
	CommonRate   float64 `json:"common_rate_rps"`
	CapacityRate float64 `json:"capacity_rate_rps"`
	Repeat       int     `json:"repeat"`
	Connections  int     `json:"connections"`
	Duration     float64 `json:"duration_s"`
	// Alpha is the significance level of the uplifts' test.
	Alpha float64 `json:"alpha"`
	// Drift is the starting configuration measured again after the last
	// step, against the baseline; absent when it was not.
	Drift *loadgen.Drift `json:"drift,omitempty"`
	// Searches are the searched steps: every candidate's value, reason
	// and figures, and which was kept and why.
	Searches []Search `json:"searches,omitempty"`
	// SharedCPUs, when set, says the load ran on Tomcat's CPUs
	// (-load-shares-cpus): no figure is Tomcat's alone.
	SharedCPUs string `json:"load_shares_cpus,omitempty"`
	// CPUMethod is how Tomcat's CPUs were restricted and why (-cpu-method
	// auto's choice).
	CPUMethod *CPUMethodChoice `json:"cpu_method,omitempty"`
	// Load is the load sizing of the baseline: the count used, whether
	// the server saturated, every count tried; absent with -connections.
	Load *LoadSizing `json:"load,omitempty"`
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
	*MeasuredJSON
}

// MeasuredJSON are a measured step's figures.
type MeasuredJSON struct {
	// Setting is what a searched step kept, e.g. "maxThreads=4 (measured
	// best; the guide's rule 1: −27 %)"; empty for other steps.
	Setting         string  `json:"setting,omitempty"`
	Capacity        float64 `json:"capacity_rps"` // median of the runs
	CapacityMin     float64 `json:"capacity_min_rps"`
	CapacityMax     float64 `json:"capacity_max_rps"`
	CapacityRuns    int     `json:"capacity_runs"`
	CapacityErrors  int64   `json:"capacity_errors"`
	VsBaseline      float64 `json:"vs_baseline_percent"`
	VsBaselineNoise bool    `json:"vs_baseline_noise"`
	VsPrevious      float64 `json:"vs_previous_percent"`
	VsPreviousNoise bool    `json:"vs_previous_noise"`
	// The uplifts judged as benchstat does: verdict ("gain", "loss", "no
	// significant change", "too few runs", "unsettled"), the Mann-Whitney
	// U p-value and the 95 % Hodges-Lehmann interval of the change.
	VsBaselineVerdict string     `json:"vs_baseline_verdict,omitempty"`
	VsBaselineP       float64    `json:"vs_baseline_p,omitempty"`
	VsBaselineCI      [2]float64 `json:"vs_baseline_ci_percent"`
	VsPreviousVerdict string     `json:"vs_previous_verdict,omitempty"`
	VsPreviousP       float64    `json:"vs_previous_p,omitempty"`
	VsPreviousCI      [2]float64 `json:"vs_previous_ci_percent"`
	// GuideVsPrevious is the Arm guide's own change for this step against
	// the one before (its wrk2 runs); absent for steps it does not report.
	GuideVsPrevious *float64 `json:"guide_vs_previous_percent,omitempty"`
	// Unsettled: the warm-up ended before the JVM settled.
	Unsettled   bool        `json:"unsettled,omitempty"`
	CapacityAll []float64   `json:"capacity_all_rps,omitempty"`
	Latency     LatencyJSON `json:"latency"`
}

// LatencyJSON are the figures of the run at the common rate, in ms.
type LatencyJSON struct {
	Rate     float64 `json:"rate_rps"`
	Requests int64   `json:"requests"`
	Mean     float64 `json:"mean_ms"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	Max      float64 `json:"max_ms"`
	// P99VsBaseline is the % change of p99 against the baseline's.
	P99VsBaseline float64 `json:"p99_vs_baseline_percent"`
	Errors        int64   `json:"errors"`
	CPU           float64 `json:"jvm_cpu_percent,omitempty"`
}

// Statuses of a step in -json.
const (
	StatusMeasured  = "measured"
	StatusUnchanged = "unchanged"
	StatusSkipped   = "skipped"
	StatusFailed    = "failed"
	// StatusPersisted is a -persist write, kept across reboots.
	StatusPersisted = "persisted"
)

// LoadBoundText lists the measured steps whose figures the load
// generator limited, one line each, for under the step table, after the
// mark of a load on Tomcat's CPUs (SharedCPUs) and of a load sizing that
// did not saturate the server; "" when none.
func (r Results) LoadBoundText() string {
	var b strings.Builder
	if r.SharedCPUs != "" {
		fmt.Fprintf(&b, "every step: %s\n", r.SharedCPUs)
	}
	if r.Load != nil && !r.Load.Saturated {
		fmt.Fprintf(&b, "every step: load sized to %s\n", r.Load.Text())
	}
	for _, m := range r.Measured {
		if why := r.LoadBound[m.Name]; why != "" {
			fmt.Fprintf(&b, "%s: %s: the figure is the load generator's, not Tomcat's\n", m.Name, why)
		}
	}
	return b.String()
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
	doc := Document{CapacityRate: o.CapacityRate, Repeat: o.Repeat, Connections: o.Connections, Duration: o.Duration.Seconds(),
		Alpha: cmp.Options.Alpha, Searches: res.Searches, SharedCPUs: res.SharedCPUs, Load: res.Load}
	if res.CPUMethod.Chosen != "" {
		doc.CPUMethod = &res.CPUMethod
	}
	if d, ok := res.Drift(); ok {
		doc.Drift = &d
	}
	if len(cmp.Rows) > 0 {
		doc.CommonRate = cmp.Rows[0].Latency.Load
	}
	add := func(name string, sr *tuning.StepResult) {
		st := StepJSON{Step: name}
		if sr != nil {
			st.Runner, st.Reason = string(sr.Status), sr.Reason
		}
		r, ok := rows[name]
		_, baseOK := rows["baseline"]
		applied := sr != nil && (sr.Status == tuning.StatusApplied || sr.Status == tuning.StatusReverted)
		switch {
		case ok:
			st.Status, st.MeasuredJSON, st.LoadBound = StatusMeasured, measuredOf(r), res.LoadBound[name]
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

func measuredOf(r loadgen.StepRow) *MeasuredJSON {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	l := r.Latency
	m := &MeasuredJSON{
		Setting:  r.Setting,
		Capacity: r.Capacity.Median, CapacityMin: r.Capacity.Min, CapacityMax: r.Capacity.Max,
		CapacityRuns: r.Capacity.N, CapacityErrors: r.CapacityErrors,
		VsBaseline: r.VsBaseline.Percent, VsBaselineNoise: r.VsBaseline.Noise,
		VsPrevious: r.VsPrevious.Percent, VsPreviousNoise: r.VsPrevious.Noise,
		Latency: LatencyJSON{Rate: l.Load, Requests: l.Requests, Mean: ms(l.Mean), P50: ms(l.P50), P90: ms(l.P90), P99: ms(l.P99),
			P999: ms(l.P999), Max: ms(l.Max), P99VsBaseline: r.P99VsBaseline, Errors: l.Errors, CPU: l.CPU},
		VsBaselineVerdict: string(r.VsBaseline.Verdict), VsBaselineP: r.VsBaseline.P,
		VsBaselineCI:      [2]float64{r.VsBaseline.Low, r.VsBaseline.High},
		VsPreviousVerdict: string(r.VsPrevious.Verdict), VsPreviousP: r.VsPrevious.P,
		VsPreviousCI: [2]float64{r.VsPrevious.Low, r.VsPrevious.High},
		Unsettled:    r.Unsettled, CapacityAll: r.CapacityRuns,
	}
	if r.Reference != nil {
		g := r.Reference.VsPrevious
		m.GuideVsPrevious = &g
	}
	return m
}

// WriteOutputs writes -json (DocumentOf) and -plot (capacity bars).
func WriteOutputs(o Options, res Results) error {
	if o.JSONFile != "" {
		b, err := json.MarshalIndent(DocumentOf(o, res), "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.JSONFile, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if o.PlotFile != "" {
		var buf bytes.Buffer
		if err := loadgen.PlotCapacity(&buf, "Tomcat tuning steps: capacity", res.Comparison()); err != nil {
			return err
		}
		if err := os.WriteFile(o.PlotFile, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
