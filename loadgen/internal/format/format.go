// Package format holds the number formats that loadgen, loadgen/stats and
// loadgen/report share, so that a table, an uplift and a report print a
// duration or a change the same way. report exports them to importers
// (report.FormatDuration, report.Percent).
package format

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Duration formats a latency compactly with three significant digits in
// the largest fitting unit: "850us", "1.20ms", "16.76s". Zero is "0".
func Duration(d time.Duration) string {
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

// Percent formats a percent change as every step table and uplift does:
// its sign, one decimal, a space and "%" ("+10.4 %", "-2.1 %", "0.0 %").
func Percent(v float64) string { return Signed1(v) + " %" }

// Signed1 formats a number with its sign and one decimal: "+7.9", "-2.1".
func Signed1(v float64) string {
	if math.Abs(v) < 0.05 {
		return "0.0"
	}
	return fmt.Sprintf("%+.1f", v)
}

// Change is the change from from to to in percent of from; 0 when from is
// 0.
func Change(from, to float64) float64 {
	if from == 0 {
		return 0
	}
	return 100 * (to - from) / from
}

// Pct formats a percent change with its sign and two decimals, as
// Comparison.Text does: "+3.25%", "-0.40%", "0.00%".
func Pct(v float64) string {
	if math.Abs(v) < 0.005 {
		return "0.00%"
	}
	return fmt.Sprintf("%+.2f%%", v)
}

// Micros converts microseconds, the unit of the histograms, to a
// Duration, saturating at the largest one (a histogram read from a file
// may hold anything).
func Micros(us float64) time.Duration {
	ns := us * float64(time.Microsecond)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// Seconds converts seconds to a Duration rounded up, never before the
// exact time, saturating at the largest one.
func Seconds(s float64) time.Duration {
	if s >= float64(math.MaxInt64)/1e9 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Ceil(s*1e9 - 1e-6))
}

// Table aligns rows: the first column left, the others right.
func Table(rows [][]string) string {
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
