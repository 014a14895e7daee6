//go:build linux

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTimeAndMetric(t *testing.T) {
	for in, want := range map[string]time.Duration{"60": time.Minute, "30s": 30 * time.Second, "1m": time.Minute, "2h": 2 * time.Hour, "1.5": 1500 * time.Millisecond, "500ms": 500 * time.Millisecond} {
		got, err := parseTime(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, want := range map[string]int64{"1280": 1280, "500k": 500000, "1M": 1000000, "2g": 2000000000} {
		got, err := parseMetric(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := parseMetric("-1")
	assert.ErrorIs(t, err, errUsage)
	// Past int64 once multiplied: refused, not wrapped to a negative.
	for _, in := range []string{"9223372036854775807k", "9300000000G"} {
		_, err = parseMetric(in)
		assert.ErrorIs(t, err, errUsage, in)
	}
	// Beyond a time.Duration's 292 years, or not finite: refused.
	for _, in := range []string{"1e300", "+Inf", "NaN", "9300000000"} {
		_, err = parseTime(in)
		assert.ErrorIs(t, err, errUsage, in)
	}
}
