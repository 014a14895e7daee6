package loadgen_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
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
	assert.Equal(t, loadgen.Spread{N: 3, Median: 20000, Min: 19000, Max: 21000}, m.Capacity)
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

	// A common rate, no warm-up, and this process's CPU sampled.
	f = &fakeRuns{rates: []float64{5000, 500}}
	m, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{SkipWarmUp: true, LatencyRate: 500,
		PID: os.Getpid(), CPUs: 1, Run: f.run})
	require.NoError(t, err)
	require.Len(t, f.configs, 2)
	assert.Equal(t, 500.0, f.configs[1].Rate)
	assert.Equal(t, 500.0, m.Latency.Load)
	assert.GreaterOrEqual(t, m.Latency.CPU, 0.0)
}

func TestMeasureStepErrors(t *testing.T) {
	base := loadgen.Config{URL: "http://127.0.0.1:1/", Duration: time.Second}
	f := &fakeRuns{rates: []float64{100, 100}, errAt: 2}
	_, err := loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{Run: f.run})
	assert.ErrorContains(t, err, "warm-up: loadgen: warm-up run 2")
	f = &fakeRuns{rates: []float64{100, 100}, errAt: 2}
	_, err = loadgen.MeasureStep(context.Background(), base, &loadgen.StepOptions{SkipWarmUp: true, Run: f.run})
	assert.ErrorContains(t, err, "latency at 60 req/s")
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
