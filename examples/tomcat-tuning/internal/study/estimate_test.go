//go:build linux

package study

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// runCounter counts the loads a run makes by kind, and what each took
// beyond its duration.
type runCounter struct {
	mu                          sync.Mutex
	capacityRate                float64
	restarts                    int
	closed, capacity, fixedRate int
	over                        []time.Duration
}

func (c *runCounter) run(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	start := time.Now()
	res, err := loadgen.Run(ctx, cfg)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.over = append(c.over, time.Since(start)-cfg.Duration)
	switch {
	case cfg.Rate == 0:
		c.closed++ // a warm-up run
	case cfg.Rate == c.capacityRate:
		c.capacity++
	default:
		c.fixedRate++ // a latency run
	}
	return res, err
}

// TestEstimatePaced runs what -apply runs after each step (afterStep:
// the baseline with the load sizing, two measured steps, the drift
// guard) against a paced server of known capacity (12 workers of 10 ms),
// with short runs and no Tomcat (restarts counted, not made), and checks
// Estimate's Budget against the runs made: the measurements, restarts,
// capacity and latency runs exactly (the capacity runs of the
// measurements re-measured after a second warm-up within their bound);
// the warm-up runs and the sizing's runs within their bounds (a warm-up
// stops once 3 runs agree, the sizing once a doubling no longer helps). The real time against the estimate
// (without its restarts) is logged: no wall-clock assertion.
func TestEstimatePaced(t *testing.T) {
	testutil.StableCPUs(t)
	srv := startSlow(t, 12, 10*time.Millisecond)
	o := DefaultOptions()
	o.CPUMethod, o.Search = MethodAffinity, SearchOff
	o.Repeat, o.Duration, o.WarmUp, o.WarmUpStep = 4, 400*time.Millisecond, 800*time.Millisecond, 200*time.Millisecond
	h := Host{CPUs: CPUs{N: 1, Tomcat: cpuset.Of(0)}, NIC: NIC{Name: "lo", Virtual: true, Node: -1, URL: srv.URL}}
	o.Steps = []string{StepAccessLog, StepOpenFiles} // no threads: no census of a JVM
	steps := []tuning.Step{{Name: StepAccessLog}, {Name: StepOpenFiles}}
	budget := Budget(h, o, steps)
	require.Len(t, budget, 4, "the baseline, two steps, the drift guard")
	var want StepBudget
	for _, b := range budget {
		want.add(b)
		want.Measurements += b.Measurements
		want.Restarts += b.Restarts
	}

	var log strings.Builder
	r := newRun(h, o, &log)
	c := &runCounter{capacityRate: o.CapacityRate}
	r.loader = c.run
	r.restarter = func(context.Context) error { c.restarts++; return nil }
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	require.NoError(t, r.afterStep(ctx, steps, tuning.StepResult{Name: "baseline", Status: tuning.StatusNoChange}))
	for _, s := range steps {
		require.NoError(t, r.afterStep(ctx, steps, tuning.StepResult{Name: s.Name, Status: tuning.StatusApplied}))
	}
	again, err := r.driftGuard(ctx, nil, nil, steps)
	require.NoError(t, err)
	require.NotNil(t, again, "the drift guard measured")
	elapsed := time.Since(start)
	t.Logf("%s", log.String())

	require.NotNil(t, r.sizing)
	sizing := len(r.sizing.Tried) * sizingRuns(o.Repeat, o.Alpha)
	measurements := len(r.measured) + 1 // and the drift guard's
	assert.Equal(t, want.Measurements, measurements)
	assert.Equal(t, want.Restarts, c.restarts)
	remeasured := 0
	for _, m := range append([]loadgen.StepFigures{*again}, r.measured...) {
		if m.Remeasured {
			remeasured++
		}
	}
	assert.Equal(t, want.Runs.Capacity+remeasured*o.Repeat, c.capacity-sizing, "the measurements' capacity runs, %d re-measured", remeasured)
	assert.LessOrEqual(t, remeasured*o.Repeat, want.Runs.Remeasure, "the re-measurements' capacity runs")
	assert.Equal(t, want.Runs.Latency, c.fixedRate)
	assert.LessOrEqual(t, sizing, want.Runs.Sizing, "the sizing's capacity runs")
	assert.LessOrEqual(t, c.closed, want.Runs.WarmUp)
	assert.GreaterOrEqual(t, c.closed, (measurements+1)*warmupRuns, "each warm-up (the sizing's too) runs until %d agree", warmupRuns)

	restarts := time.Duration(c.restarts) * restartAllowance
	est, likely := Estimate(h, o, steps)-restarts, Likely(h, o, steps)-restarts
	var worst, sum time.Duration
	for _, d := range c.over {
		worst, sum = max(worst, d), sum+d
	}
	t.Logf("real %s; without restarts, at most %s (real/estimate %.2f), likely %s (real/likely %.2f); %d runs (%d warm-up, %d capacity of which %d sizing at %d counts, %d latency), "+
		"beyond their duration %s on average, %s at most (budgeted %s)",
		elapsed.Round(time.Millisecond), est, elapsed.Seconds()/est.Seconds(), likely, elapsed.Seconds()/likely.Seconds(), len(c.over), c.closed, c.capacity, sizing, len(r.sizing.Tried),
		c.fixedRate, (sum / time.Duration(len(c.over))).Round(time.Millisecond), worst.Round(time.Millisecond), runAllowance)
}
