//go:build linux

package loadgen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
)

// falling is a service time that falls linearly from `from` to `to` over
// the server's first `over`, then stays at `to`: a JIT-like climb of the
// capacity.
func falling(from, to, over time.Duration) func(time.Duration) time.Duration {
	return func(since time.Duration) time.Duration {
		if since >= over {
			return to
		}
		left := float64(over-since) / float64(over)
		return to + time.Duration(left*float64(from-to))
	}
}

// remeasured is what one MeasureStep of TestIntegrationRemeasure saw.
type remeasured struct {
	step       loadgen.StepFigures
	warmUps    []*loadgen.WarmUpResult
	capacities []*loadgen.Capacity
}

// measureRemeasured measures a server on 127.0.0.1 with 8 connections
// and runs of 200 ms: a warm-up bounded at 2 s, whose last 3 runs must
// agree, and 3 capacity runs.
func measureRemeasured(t *testing.T, url string, remeasure bool) remeasured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got remeasured
	var err error
	got.step, err = loadgen.MeasureStep(ctx,
		loadgen.Config{URL: url, Connections: 8, Threads: 1, Duration: 200 * time.Millisecond, Timeout: 300 * time.Millisecond},
		&loadgen.StepOptions{
			Name:       "climbing",
			WarmUp:     &loadgen.WarmUpOptions{Interval: 200 * time.Millisecond, Runs: 3, Max: 2 * time.Second},
			Capacity:   &loadgen.CapacityOptions{Repeat: 3},
			Remeasure:  remeasure,
			OnWarmUp:   func(w *loadgen.WarmUpResult) { got.warmUps = append(got.warmUps, w) },
			OnCapacity: func(c *loadgen.Capacity) { got.capacities = append(got.capacities, c) },
		})
	require.NoError(t, err)
	for i, w := range got.warmUps {
		t.Logf("warm-up %d: rates %.0f, settled %v after %s", i+1, w.Rates, w.Settled, w.Loaded)
	}
	for i, c := range got.capacities {
		t.Logf("capacity %d: %.0f", i+1, c.Rates())
	}
	return got
}

// reacted asserts what MeasureStep did after the warm-ups it saw: that
// holds on every run, while whether a warm-up settles depends on the
// host (on a loaded one, a flat server's 200 ms rates vary tenfold, and a
// slow one carries the first warm-up past the climb).
func (got remeasured) reacted(t *testing.T, remeasure bool) {
	t.Helper()
	require.NotEmpty(t, got.warmUps)
	first := got.warmUps[0]
	switch {
	case first.Settled || !remeasure:
		assert.Len(t, got.warmUps, 1, "one warm-up")
		assert.Len(t, got.capacities, 1, "one set of capacity runs")
		assert.Equal(t, !first.Settled, got.step.Unsettled)
		assert.False(t, got.step.Remeasured)
	case got.warmUps[1].Settled:
		assert.Len(t, got.warmUps, 2, "a second warm-up")
		assert.Len(t, got.capacities, 2, "capacity runs after each warm-up")
		assert.False(t, got.step.Unsettled)
		assert.True(t, got.step.Remeasured)
	default:
		assert.Len(t, got.warmUps, 2, "a second warm-up")
		assert.Len(t, got.capacities, 1, "no capacity runs after an unsettled second warm-up")
		assert.True(t, got.step.Unsettled)
		assert.False(t, got.step.Remeasured)
	}
	require.NotEmpty(t, got.capacities)
	used := got.capacities[0]
	if got.step.Remeasured {
		used = got.capacities[len(got.capacities)-1]
	}
	assert.Equal(t, used.Rate, got.step.Capacity, "the step's capacity")
	assert.Equal(t, used.Rates(), got.step.CapacityRuns)
}

// path names the warm-ups' outcomes, in order: "unsettled settled".
func (got remeasured) path() string {
	var s []string
	for _, w := range got.warmUps {
		if w.Settled {
			s = append(s, "settled")
		} else {
			s = append(s, "unsettled")
		}
	}
	return strings.Join(s, " ")
}

// TestIntegrationRemeasure: a server whose per-request time falls from
// 10 ms to 2 ms over its first 3 s is still climbing when a 2 s warm-up
// ends; with Remeasure, its capacity runs and a second warm-up carry it
// past the climb, and the step keeps the capacity measured after that.
// A flat server settles in its first warm-up and is measured once. What
// MeasureStep does after each warm-up is asserted; a host that made a
// warm-up end otherwise than the servers would have it is logged.
func TestIntegrationRemeasure(t *testing.T) {
	testutil.StableCPUs(t)
	const ramp = 3 * time.Second
	tests := []struct {
		name      string
		service   func(time.Duration) time.Duration
		remeasure bool
		path      string
	}{
		{"climbing", falling(10*time.Millisecond, 2*time.Millisecond, ramp), true, "unsettled settled"},
		{"climbing without Remeasure", falling(10*time.Millisecond, 2*time.Millisecond, ramp), false, "unsettled"},
		{"flat", fixed(2 * time.Millisecond), true, "settled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startPaced(t, 8, tt.service)
			got := measureRemeasured(t, srv.URL, tt.remeasure)
			got.reacted(t, tt.remeasure)
			if p := got.path(); p != tt.path {
				t.Logf("warm-ups %s, not %s as the server would have them: the host's timing changed them", p, tt.path)
			}
		})
	}
}
