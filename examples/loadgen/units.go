package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// errUsage is wrapped by the argument parsers' errors.
var errUsage = errors.New("usage")

// parseMetric parses a count with wrk's SI suffixes: "1280", "500k",
// "1M", "2G" (case-insensitive).
func parseMetric(s string) (int64, error) {
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
		return 0, fmt.Errorf("%w: %q: want a count such as 1280, 500k or 1M", errUsage, s)
	}
	return v * mult, nil
}

// parseTime parses a duration as wrk does, a bare number being seconds:
// "60", "30s", "1m", "2h"; Go forms such as "1m30s" or "500ms" also work.
func parseTime(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v*float64(time.Second) < math.MaxInt64 {
		return time.Duration(v * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%w: %q: want a duration such as 60 (seconds), 30s, 1m or 2h", errUsage, s)
}

// parseLevels parses a comma-separated list of load levels with wrk's SI
// suffixes, e.g. "8,16,32,64" or "1k,2k,4k", in increasing order.
func parseLevels(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		v, err := parseMetric(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("levels %q: %w", s, err)
		}
		if v <= 0 {
			return nil, fmt.Errorf("%w: levels %q: %d: want levels > 0", errUsage, s, v)
		}
		if len(out) > 0 && v <= out[len(out)-1] {
			return nil, fmt.Errorf("%w: levels %q: want increasing levels", errUsage, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// abProgress returns the request counts at which ab prints "Completed N
// requests": every tenth of the total (at least 100) when the total is
// over 150, else none.
func abProgress(total int64) int64 {
	if total <= 150 {
		return 0
	}
	step := total / 10
	if step < 100 {
		step = 100
	}
	return step
}
