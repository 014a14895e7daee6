//go:build linux

package study

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/nettune/nettune/loadgen/report"
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

// WhyText is the reason line of each measured step with a cost against
// the one measured before it ("why access-log: system CPU −21 % per
// request (…)"); "" when none has one.
func (r Results) WhyText() string {
	var b strings.Builder
	for _, m := range r.Measured {
		if why := r.Why(m.Name); why != "" {
			fmt.Fprintf(&b, "why %s: %s\n", m.Name, why)
		}
	}
	return b.String()
}

// CostBars is -plot's second chart: a bar per measured step of the CPU
// time of Tomcat's CPUs per request, stacked by where it went (the JVM's
// user and system time, other processes', interrupts', stolen). A step
// without a cost reading has an empty bar; no bars at all when none has
// one.
func (r Results) CostBars() report.StackedBars {
	bars := report.StackedBars{Axis: "CPU µs per request, on Tomcat's CPUs",
		Parts: []string{"JVM user", "JVM system", "other processes", "interrupts", "stolen"}}
	read := false
	for _, m := range r.Measured {
		b := report.StackedBar{Name: m.Name}
		if c, ok := r.Costs[m.Name]; ok && c.Requests > 0 && c.CPU.Total() > 0 {
			b.Values = []float64{c.perRequest(c.User), c.perRequest(c.System), c.perRequest(c.others()),
				c.perRequest(c.CPU.IRQ + c.CPU.SoftIRQ), c.perRequest(c.CPU.Steal)}
			read = true
		}
		bars.Bars = append(bars.Bars, b)
	}
	if !read {
		bars.Bars = nil
	}
	return bars
}

// WriteOutputs writes -json (DocumentOf) and -plot (capacity bars, and
// beside them CostBars when the steps' costs were read).
func WriteOutputs(o Options, res Results) error {
	if o.JSONFile != "" {
		if err := WriteJSON(o.JSONFile, DocumentOf(o, res)); err != nil {
			return err
		}
	}
	if o.PlotFile != "" {
		var buf bytes.Buffer
		if err := report.PlotSteps(&buf, "Tomcat tuning steps: capacity and CPU per request", res.Comparison(), res.CostBars()); err != nil {
			return err
		}
		if err := os.WriteFile(o.PlotFile, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
