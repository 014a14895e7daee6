//go:build linux

package study

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
	"github.com/nettune/nettune/loadgen/stats"
)

// TableWidth is the widest line the step table and the lines under it
// print without -wide, in runes.
const TableWidth = 100

// StepTable renders the measured steps for a person: the table, what
// marks its figures (a searched step's kept setting, an unsettled
// warm-up, a load-bound figure, a load on Tomcat's CPUs, a load sizing
// that did not saturate), the legend and the drift guard's line. Without
// wide every line fits TableWidth: one row per step with the capacity
// (median and range), its change against the baseline and the previous
// step with the verdict, the Arm guide's change, p99 at the common rate
// and errors. With wide, the table has every column of
// loadgen.StepComparison.Text (each uplift's interval and p, p50, max,
// p99's change, the JVM's CPU), and the lines under it are not wrapped.
func StepTable(o Options, res Results, wide bool) string {
	cmp := res.Comparison()
	var b strings.Builder
	if wide {
		b.WriteString(cmp.Text())
		b.WriteString(res.LoadBoundText())
		b.WriteString(res.WhyText())
		b.WriteString(Legend(res.Used(o), cmp))
		if d, ok := res.Drift(); ok {
			b.WriteString(d.Text())
		}
		return b.String()
	}
	b.WriteString(compactTable(cmp))
	b.WriteString(Wrap(stepNotes(cmp)+res.LoadBoundText()+res.WhyText(), TableWidth))
	// The legend's continuation lines ("\n  ") joined, then wrapped anew.
	legend := strings.ReplaceAll(Legend(res.Used(o), cmp), "\n  ", " ")
	b.WriteString(Wrap(compactLegend+legend, TableWidth))
	if d, ok := res.Drift(); ok {
		b.WriteString(Wrap(d.Text(), TableWidth))
	}
	return b.String()
}

// compactLegend says what the compact table's uplift cells mean.
const compactLegend = "vs baseline, vs previous: the change of the median capacity and its verdict (gain, loss, " +
	"n.s.: no significant change, few runs, unsettled); -wide and -json add its interval and p.\n"

// compactTable is the step table in at most TableWidth columns (see
// StepTable).
func compactTable(c loadgen.StepComparison) string {
	guide := ""
	for _, r := range c.Rows {
		if r.Reference != nil && guide == "" {
			guide = firstNonEmpty(r.Reference.Source, "reference")
		}
	}
	header := []string{"step", "capacity", "min-max", "vs baseline", "vs previous"}
	if guide != "" {
		header = append(header, guide)
	}
	rows := [][]string{append(header, "p99", "errors")}
	cells := stepCells(c)
	for i, r := range c.Rows {
		vsBase, vsPrev := "", ""
		if i > 0 {
			vsBase, vsPrev = upliftCell(r.VsBaseline), upliftCell(r.VsPrevious)
		}
		row := []string{cells[i], fmt.Sprintf("%.0f", r.Capacity.Median), rangeCell(r.Capacity), vsBase, vsPrev}
		if guide != "" {
			ref := ""
			if r.Reference != nil {
				ref = report.Percent(r.Reference.VsPrevious)
			}
			row = append(row, ref)
		}
		p99 := "-"
		if r.Latency.P99 > 0 {
			p99 = report.FormatDuration(r.Latency.P99)
		}
		rows = append(rows, append(row, p99, fmt.Sprint(r.CapacityErrors+r.Latency.Errors)))
	}
	return alignRows(rows)
}

// maxStepCell is the widest step name the compact table shows whole (the
// guide's longest, access-log and numa-local, are 10).
const maxStepCell = 12

// stepCells are the steps' names in the compact table's first column: a
// user's step longer than maxStepCell
// (sysctl:net.ipv4.tcp_rmem=4096 87380 6291456) is its kind and its
// number among that kind's steps ("sysctl 1"), named in full under the
// table (stepNotes).
func stepCells(c loadgen.StepComparison) []string {
	cells := make([]string, len(c.Rows))
	count := map[string]int{}
	for i, r := range c.Rows {
		cells[i] = r.Name
		if kind, _, ok := strings.Cut(r.Name, ":"); ok && utf8.RuneCountInString(r.Name) > maxStepCell {
			count[kind]++
			cells[i] = fmt.Sprintf("%s %d", kind, count[kind])
		}
	}
	return cells
}

// upliftCell is an uplift in a compact cell: its percent and verdict,
// "+10.4 % gain", "+0.4 % n.s.", "+26.1 % few runs"; without a verdict
// (runs not kept) " noise" marks a change inside the spread.
func upliftCell(u stats.Uplift) string {
	word := map[stats.Verdict]string{stats.VerdictGain: "gain", stats.VerdictLoss: "loss",
		stats.VerdictNoChange: "n.s.", stats.VerdictTooFewRuns: "few runs", stats.VerdictUnsettled: "unsettled"}[u.Verdict]
	if u.Verdict == "" && u.Noise {
		word = "noise"
	}
	return strings.TrimSpace(report.Percent(u.Percent) + " " + firstNonEmpty(word, string(u.Verdict)))
}

// rangeCell is a capacity's min-max: whole requests/s, or thousands with
// one decimal from 100000 on ("370.1-388.5k"), so a 6-digit capacity
// still fits.
func rangeCell(s stats.Spread) string {
	if s.Max >= 100000 {
		return fmt.Sprintf("%.1f-%.1fk", s.Min/1000, s.Max/1000)
	}
	return fmt.Sprintf("%.0f-%.0f", s.Min, s.Max)
}

// stepNotes are the lines under the compact table for what its rows do
// not show: a searched step's kept setting, an unsettled warm-up.
func stepNotes(c loadgen.StepComparison) string {
	var b strings.Builder
	var unsettled []string
	cells := stepCells(c)
	for i, r := range c.Rows {
		if cells[i] != r.Name {
			fmt.Fprintf(&b, "%s is %s\n", cells[i], r.Name)
		}
		if r.Setting != "" {
			fmt.Fprintf(&b, "%s %s\n", r.Name, r.Setting)
		}
		if r.Unsettled {
			unsettled = append(unsettled, r.Name)
		}
	}
	if len(unsettled) > 0 {
		fmt.Fprintf(&b, "unsettled: %s (the warm-up ended before the JVM settled; no change to or from it is significant)\n",
			strings.Join(unsettled, ", "))
	}
	return b.String()
}

// alignRows aligns rows: the first column left, the others right, two
// spaces apart, counting runes.
func alignRows(rows [][]string) string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				line.WriteString(c + pad)
			} else {
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// Wrap breaks each line of s longer than width runes at spaces, the
// continuation lines indented by two spaces (a line already indented
// keeps its indent); a word longer than width stays whole.
func Wrap(s string, width int) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		nl := strings.HasSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if nl {
				b.WriteString("\n")
			}
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		cur := indent
		fresh := true
		for _, w := range strings.Fields(line) {
			switch {
			case fresh:
				cur += w
			case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) > width:
				b.WriteString(cur + "\n")
				cur = indent + "  " + w
			default:
				cur += " " + w
			}
			fresh = false
		}
		b.WriteString(cur)
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}
