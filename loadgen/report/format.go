package report

import (
	"time"

	"github.com/nettune/nettune/loadgen/internal/format"
)

// FormatDuration formats a latency compactly with three significant
// digits in the largest fitting unit, as loadgen's comparison tables do:
// "850us", "1.20ms", "16.76s". Zero is "0".
func FormatDuration(d time.Duration) string { return format.Duration(d) }

// Percent formats a percent change as every step table and uplift does:
// its sign, one decimal, a space and "%" ("+10.4 %", "-2.1 %", "0.0 %").
func Percent(v float64) string { return format.Percent(v) }
