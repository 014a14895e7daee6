// Value parsers shared by the command line and the sweep levels: wrk's
// metric and time units.

package loadgen

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// ErrUsage is wrapped by the argument parsers' errors.
var ErrUsage = errors.New("loadgen: usage")

// ParseMetric parses a count with wrk's SI suffixes: "1280", "500k",
// "1M", "2G" (case-insensitive).
func ParseMetric(s string) (int64, error) {
	num, mult := s, int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			num, mult = s[:n-1], 1000
		case 'm', 'M':
			num, mult = s[:n-1], 1000*1000
		case 'g', 'G':
			num, mult = s[:n-1], 1000*1000*1000
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > math.MaxInt64/mult {
		return 0, fmt.Errorf("%w: %q: want a count such as 1280, 500k or 1M", ErrUsage, s)
	}
	return v * mult, nil
}

// ParseTime parses a duration as wrk does, a bare number being seconds:
// "60", "30s", "1m", "2h"; Go forms such as "1m30s" or "500ms" also work.
func ParseTime(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v*float64(time.Second) < math.MaxInt64 {
		return time.Duration(v * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%w: %q: want a duration such as 60 (seconds), 30s, 1m or 2h", ErrUsage, s)
}
