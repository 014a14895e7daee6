package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nettune/nettune/internal/cliflag"
)

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
		return 0, cliflag.Usagef("%q: want a count such as 1280, 500k or 1M", s)
	}
	return v * mult, nil
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
			return nil, cliflag.Usagef("levels %q: %d: want levels > 0", s, v)
		}
		if len(out) > 0 && v <= out[len(out)-1] {
			return nil, cliflag.Usagef("levels %q: want increasing levels", s)
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
