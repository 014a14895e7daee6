package report

import (
	"fmt"
	"strings"
)

// unitScale is one of wrk's unit ladders: a value is divided by scale and
// moves to the next unit while it is at least 0.85 × scale, but never onto
// the ladder's last unit (wrk's quirk: microseconds stop at "ms").
type unitScale struct {
	scale float64
	base  string
	units []string
}

var (
	unitsTimeUS = unitScale{1000, "us", []string{"ms", "s"}}
	unitsTimeS  = unitScale{60, "s", []string{"m", "h"}}
	unitsBinary = unitScale{1024, "", []string{"K", "M", "G", "T", "P"}}
	unitsMetric = unitScale{1000, "", []string{"k", "M", "G", "T", "P"}}
)

func (u unitScale) format(n float64, prec int) string {
	amt, unit := n, u.base
	limit := u.scale * 0.85
	for i := 0; i+1 < len(u.units) && amt >= limit; i++ {
		amt /= u.scale
		unit = u.units[i]
	}
	return fmt.Sprintf("%.*f%s", prec, amt, unit)
}

// formatBinary formats a byte count as wrk does: 1024-based, two decimals,
// "K", "M", "G" (7.62G).
func formatBinary(n float64) string { return unitsBinary.format(n, 2) }

// formatMetric formats a count as wrk does: 1000-based, two decimals, "k",
// "M" (1.97k).
func formatMetric(n float64) string { return unitsMetric.format(n, 2) }

// FormatTimeUS formats microseconds as wrk does: "us" and "ms" below one
// second, then "s" and "m" (16.76s, 1.00m).
func FormatTimeUS(us float64) string {
	if us >= 1e6 {
		return unitsTimeS.format(us/1e6, 2)
	}
	return unitsTimeUS.format(us, 2)
}

// formatTimeS formats whole seconds as wrk's test header does ("10s",
// "1m").
func formatTimeS(s float64) string { return unitsTimeS.format(s, 0) }

// padUnits right-aligns a formatted value in width as wrk's print_units
// does: the column is two characters wider for unitless numbers, so units
// line up, and an over-long value is cut to the width.
func padUnits(msg string, width int) string {
	pad := 2
	if n := len(msg); n > 0 && isAlpha(msg[n-1]) {
		pad--
	}
	if n := len(msg); n > 1 && isAlpha(msg[n-2]) {
		pad--
	}
	width -= pad
	if len(msg) > width {
		msg = msg[:width]
	}
	return strings.Repeat(" ", width-len(msg)) + msg + "  "[:pad]
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
