package loadgen_test

import (
	"context"
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
)

// TestMeasureStep runs the whole method through its RunFunc seam: the
// warm-up's closed-loop runs until two agree, the saturating runs, then
// the latency run at a share of the capacity, every load derived from the
// one base Config.
func TestMeasureStep(t *testing.T) {
	f := &fakeRuns{rates: []float64{9000, 14000, 14200, 20000, 21000, 19000, 12000}}
	base := loadgen.Config{URL: "http://127.0.0.1:1/", Connections: 64, Duration: 5 * time.Second, Rate: 777}
	var phases []string
	m, err := loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{
		Name:       "access-log",
		WarmUp:     &loadgen.WarmUpOptions{Interval: time.Second},
		Capacity:   &loadgen.CapacityOptions{Rate: 300000, Repeat: 3},
		Run:        f.run,
		OnWarmUp:   func(w *loadgen.WarmUpResult) { phases = append(phases, "warm-up"); assert.True(t, w.Stable) },
		OnCapacity: func(c *loadgen.Capacity) { phases = append(phases, "capacity"); assert.Len(t, c.Runs, 3) },
		OnLatency:  func(r *loadgen.Result) { phases = append(phases, "latency") },
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"warm-up", "capacity", "latency"}, phases)
	assert.Equal(t, "access-log", m.Name)
	assert.Equal(t, stats.Spread{N: 3, Median: 20000, Min: 19000, Max: 21000}, m.Capacity)
	assert.Equal(t, []float64{20000, 21000, 19000}, m.CapacityRuns, "every run, for the test")
	assert.False(t, m.Unsettled, "the warm-up settled")
	assert.Equal(t, int64(3), m.CapacityErrors)
	assert.Equal(t, 12000.0, m.Latency.Load, "latency at 60%% of the median capacity")
	require.Len(t, f.configs, 7)
	for i, cfg := range f.configs {
		assert.Equal(t, base.URL, cfg.URL)
		assert.Equal(t, 64, cfg.Connections, "run %d", i)
		switch {
		case i < 3:
			assert.Zero(t, cfg.Rate, "warm-up run %d is a closed loop", i)
			assert.Equal(t, time.Second, cfg.Duration)
		case i < 6:
			assert.Equal(t, 300000.0, cfg.Rate, "capacity run %d", i)
			assert.Equal(t, 5*time.Second, cfg.Duration)
		default:
			assert.Equal(t, 12000.0, cfg.Rate, "latency run")
			assert.Equal(t, 5*time.Second, cfg.Duration)
		}
	}

	// A common rate, no warm-up, and this process's CPU sampled: the
	// latency run burns 50 ms of this thread's CPU, so the server's CPU
	// (this process's) is above 0 and at most the one CPU it may use.
	f = &fakeRuns{rates: []float64{5000, 500}}
	burn := func(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
		if cfg.Rate == 500 {
			burnThreadCPU(t, 50*time.Millisecond)
		}
		return f.run(ctx, cfg)
	}
	m, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{SkipWarmUp: true, LatencyRate: 500,
		PID: os.Getpid(), CPUs: 1, Run: burn})
	require.NoError(t, err)
	require.Len(t, f.configs, 2)
	assert.Equal(t, 500.0, f.configs[1].Rate)
	assert.Equal(t, 500.0, m.Latency.Load)
	if !testutil.UserEmulated() { // qemu-user's /proc/self/stat has no CPU times
		assert.Greater(t, m.Latency.CPU, 0.0, "50 ms of CPU burnt during the latency run")
		assert.LessOrEqual(t, m.Latency.CPU, 100.0, "one CPU is 100 %")
	}

	// A warm-up that ends at its limit still climbing: unsettled.
	f = &fakeRuns{rates: []float64{1000, 2000, 5000, 5000, 600}}
	m, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{
		WarmUp: &loadgen.WarmUpOptions{Interval: time.Second, Max: 2 * time.Second}, Capacity: &loadgen.CapacityOptions{Repeat: 2}, Run: f.run})
	require.NoError(t, err)
	assert.True(t, m.Unsettled)
}

// TestMeasureStepRemeasure runs Remeasure through the RunFunc seam: an
// unsettled warm-up, its capacity runs, a second warm-up, and, only when
// that one settles, the capacity runs again, whose figures the step keeps.
func TestMeasureStepRemeasure(t *testing.T) {
	base := loadgen.Config{URL: "http://127.0.0.1:1/", Connections: 8, Duration: time.Second}
	tests := []struct {
		name       string
		rates      []float64
		phases     []string
		capacity   stats.Spread
		unsettled  bool
		remeasured bool
	}{{
		name:       "settles the second time",
		rates:      []float64{1000, 2000, 5000, 5200, 6000, 6100, 7000, 7200, 600},
		phases:     []string{"warm-up unsettled", "capacity", "warm-up settled", "capacity", "latency"},
		capacity:   stats.Spread{N: 2, Median: 7100, Min: 7000, Max: 7200},
		remeasured: true,
	}, {
		name:      "unsettled twice",
		rates:     []float64{1000, 2000, 5000, 5200, 3000, 4000, 600},
		phases:    []string{"warm-up unsettled", "capacity", "warm-up unsettled", "latency"},
		capacity:  stats.Spread{N: 2, Median: 5100, Min: 5000, Max: 5200},
		unsettled: true,
	}, {
		name:     "settled the first time",
		rates:    []float64{5000, 5100, 5000, 5200, 600},
		phases:   []string{"warm-up settled", "capacity", "latency"},
		capacity: stats.Spread{N: 2, Median: 5100, Min: 5000, Max: 5200},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRuns{rates: tt.rates}
			var phases []string
			var last *loadgen.Capacity
			m, err := loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{
				WarmUp:    &loadgen.WarmUpOptions{Interval: time.Second, Max: 2 * time.Second},
				Capacity:  &loadgen.CapacityOptions{Repeat: 2},
				Remeasure: true,
				Run:       f.run,
				OnWarmUp: func(w *loadgen.WarmUpResult) {
					if w.Settled {
						phases = append(phases, "warm-up settled")
					} else {
						phases = append(phases, "warm-up unsettled")
					}
				},
				OnCapacity: func(c *loadgen.Capacity) { phases = append(phases, "capacity"); last = c },
				OnLatency:  func(*loadgen.Result) { phases = append(phases, "latency") },
			})
			require.NoError(t, err)
			assert.Equal(t, tt.phases, phases)
			assert.Len(t, f.configs, len(tt.rates), "every run used")
			assert.Equal(t, tt.capacity, m.Capacity)
			if tt.remeasured {
				assert.Equal(t, last.Rate, m.Capacity, "the second capacity runs count")
				assert.Equal(t, last.Rates(), m.CapacityRuns)
			}
			assert.Equal(t, tt.unsettled, m.Unsettled)
			assert.Equal(t, tt.remeasured, m.Remeasured)
			assert.Equal(t, math.Round(0.6*tt.capacity.Median), m.Latency.Load, "latency at a share of the capacity kept")
		})
	}
}

// burnThreadCPU spins until the calling OS thread has used d of CPU time
// (CLOCK_THREAD_CPUTIME_ID), however long the scheduler takes to give it.
func burnThreadCPU(t *testing.T, d time.Duration) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	now := func() time.Duration {
		var ts unix.Timespec
		require.NoError(t, unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts))
		return time.Duration(ts.Nano())
	}
	for start := now(); now()-start < d; {
	}
}

func TestMeasureStepErrors(t *testing.T) {
	base := loadgen.Config{URL: "http://127.0.0.1:1/", Duration: time.Second}
	f := &fakeRuns{rates: []float64{100, 100}, errAt: 2}
	_, err := loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{Run: f.run})
	assert.ErrorContains(t, err, "warm-up: loadgen: warm-up run 2")
	f = &fakeRuns{rates: []float64{100, 100}, errAt: 2}
	_, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{SkipWarmUp: true, Run: f.run})
	assert.ErrorContains(t, err, "latency at 60 req/s")
	unsettled := &loadgen.WarmUpOptions{Interval: time.Second, Max: 2 * time.Second}
	f = &fakeRuns{rates: []float64{100, 200, 300, 400}, errAt: 4}
	_, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{WarmUp: unsettled, Remeasure: true, Run: f.run})
	assert.ErrorContains(t, err, "second warm-up: loadgen: warm-up run 1")
	f = &fakeRuns{rates: []float64{100, 200, 300, 400, 400, 0}, errAt: 6}
	_, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{WarmUp: unsettled, Remeasure: true, Run: f.run})
	assert.ErrorContains(t, err, "capacity after the second warm-up: loadgen: capacity run 1 of 1")
	_, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{LatencyRate: -1})
	assert.ErrorContains(t, err, "latency rate -1")
	_, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{LatencyShare: 2})
	assert.ErrorContains(t, err, "latency share 2")
}

// TestIntegrationMeasureStep measures the built-in HelloWorld server on
// 127.0.0.1 for real, with short runs.
func TestIntegrationMeasureStep(t *testing.T) {
	hw, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	m, err := loadgen.MeasureStep(context.Background(), loadgen.Config{URL: hw.URL, Connections: 4, Duration: 300 * time.Millisecond},
		&loadgen.StepOptions{Name: "hello", WarmUp: &loadgen.WarmUpOptions{Interval: 200 * time.Millisecond, Max: time.Second},
			Capacity: &loadgen.CapacityOptions{Rate: 200000, Repeat: 2}, PID: os.Getpid()})
	require.NoError(t, err)
	assert.Equal(t, 2, m.Capacity.N)
	assert.Greater(t, m.Capacity.Median, 100.0)
	assert.InDelta(t, 0.6*m.Capacity.Median, m.Latency.Load, 1)
	assert.Greater(t, m.Latency.Requests, int64(0))
	assert.Greater(t, m.Latency.P50, time.Duration(0))
	assert.Greater(t, m.Latency.CPU, 0.0, "this process serves the page: its CPU is sampled")
}
