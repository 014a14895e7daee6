//go:build linux

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cliflag"
)

// TestParseMetric: wrk's counts with SI suffixes (durations are
// cliflag.ParseDuration's, tested there).
func TestParseMetric(t *testing.T) {
	for in, want := range map[string]int64{"1280": 1280, "500k": 500000, "1M": 1000000, "2g": 2000000000} {
		got, err := parseMetric(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := parseMetric("-1")
	assert.ErrorIs(t, err, cliflag.ErrUsage)
	// Past int64 once multiplied: refused, not wrapped to a negative.
	for _, in := range []string{"9223372036854775807k", "9300000000G"} {
		_, err = parseMetric(in)
		assert.ErrorIs(t, err, cliflag.ErrUsage, in)
	}
}
