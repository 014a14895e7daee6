package loadgen_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// fakeRuns is a RunFunc that returns the given achieved rates in turn,
// each over the run's duration, and records the configs it was given.
type fakeRuns struct {
	rates   []float64
	offered float64 // 0: the config's rate
	errAt   int     // 1-based run that fails; 0: none
	configs []loadgen.Config
}

func (f *fakeRuns) run(_ context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	f.configs = append(f.configs, cfg)
	i := len(f.configs) - 1
	if f.errAt == i+1 {
		return nil, errors.New("connection refused")
	}
	rate := f.rates[i]
	offered := f.offered
	if offered == 0 {
		offered = cfg.Rate
	}
	d := cfg.Duration
	return &loadgen.Result{URL: cfg.URL, Elapsed: d, AchievedRate: rate, OfferedRate: offered,
		Requests: uint64(rate * d.Seconds()), Errors: loadgen.Errors{Timeout: 1}}, nil
}

func TestMeasureCapacity(t *testing.T) {
	ctx := context.Background()
	f := &fakeRuns{rates: []float64{12500, 23900, 23100}}
	c, err := loadgen.MeasureCapacity(ctx, loadgen.Config{URL: "http://127.0.0.1:1/", Connections: 256, Duration: 8 * time.Second},
		&loadgen.CapacityOptions{Repeat: 3, Run: f.run})
	require.NoError(t, err)
	assert.Equal(t, loadgen.Spread{N: 3, Median: 23100, Min: 12500, Max: 23900}, c.Rate)
	assert.True(t, c.Saturated)
	assert.Len(t, c.Runs, 3)
	assert.Equal(t, int64(3), c.Errors)
	require.Len(t, f.configs, 3)
	for _, cfg := range f.configs {
		assert.Equal(t, float64(loadgen.DefaultCapacityRate), cfg.Rate, "saturating open model")
		assert.Equal(t, 256, cfg.Connections)
		assert.Equal(t, 8*time.Second, cfg.Duration)
	}

	// A server that kept up with the offered rate was not saturated.
	f = &fakeRuns{rates: []float64{1990}}
	c, err = loadgen.MeasureCapacity(ctx, loadgen.Config{URL: "http://127.0.0.1:1/", Duration: time.Second},
		&loadgen.CapacityOptions{Rate: 2000, Run: f.run})
	require.NoError(t, err)
	assert.False(t, c.Saturated)
	assert.Equal(t, 1, c.Rate.N, "one run by default")

	// Errors: a failed run, a run with no response, bad options.
	f = &fakeRuns{rates: []float64{100, 100}, errAt: 2}
	_, err = loadgen.MeasureCapacity(ctx, loadgen.Config{URL: "http://127.0.0.1:1/", Duration: time.Second}, &loadgen.CapacityOptions{Repeat: 3, Run: f.run})
	assert.ErrorContains(t, err, "loadgen: capacity run 2 of 3: connection refused")
	f = &fakeRuns{rates: []float64{0}}
	_, err = loadgen.MeasureCapacity(ctx, loadgen.Config{URL: "http://127.0.0.1:1/", Duration: time.Second}, &loadgen.CapacityOptions{Run: f.run})
	assert.ErrorContains(t, err, "no request completed")
	_, err = loadgen.MeasureCapacity(ctx, loadgen.Config{URL: "http://127.0.0.1:1/", Warmup: time.Second}, &loadgen.CapacityOptions{Run: f.run})
	assert.ErrorContains(t, err, "Config.Warmup 1s: want 0")
	_, err = loadgen.MeasureCapacity(ctx, loadgen.Config{URL: "http://127.0.0.1:1/"}, &loadgen.CapacityOptions{Rate: -1, Run: f.run})
	assert.ErrorContains(t, err, "capacity rate -1: want > 0")
	_, err = loadgen.MeasureCapacity(ctx, loadgen.Config{URL: "http://127.0.0.1:1/"}, &loadgen.CapacityOptions{Repeat: -2, Run: f.run})
	assert.ErrorContains(t, err, "capacity repeat -2")
}

func TestWarmUp(t *testing.T) {
	tests := []struct {
		name      string
		rates     []float64
		max       time.Duration
		wantRuns  int
		stable    bool
		loaded    time.Duration
		lastShort time.Duration // the last run's duration, when cut to fit max
	}{
		// The JIT trap: 12.5k, then 23k once compiled.
		{"climbs then flat", []float64{12500, 18000, 23100, 23900, 23500}, 0, 4, true, 8 * time.Second, 0},
		{"flat from the start", []float64{2000, 1990}, 0, 2, true, 4 * time.Second, 0},
		{"a drop is not stable", []float64{2000, 1500, 1520}, 0, 3, true, 6 * time.Second, 0},
		{"nothing completed is not stable", []float64{0, 0, 100, 102}, 0, 4, true, 8 * time.Second, 0},
		{"still climbing at max", []float64{100, 200, 300, 400, 500}, 7 * time.Second, 4, false, 7 * time.Second, time.Second},
		// Three runs must agree: a plateau of two is not the end.
		{"plateau of two, three runs", []float64{12000, 17000, 17300, 21000, 21400, 21200}, 0, 6, true, 12 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRuns{rates: tt.rates}
			runs := 0
			if strings.Contains(tt.name, "three runs") {
				runs = 3
			}
			w, err := loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/", Connections: 64},
				&loadgen.WarmUpOptions{Interval: 2 * time.Second, Max: tt.max, Runs: runs, Run: f.run})
			require.NoError(t, err)
			assert.Equal(t, tt.rates[:tt.wantRuns], w.Rates)
			assert.Equal(t, tt.stable, w.Stable)
			assert.Equal(t, tt.loaded, w.Loaded)
			require.Len(t, f.configs, tt.wantRuns)
			for i, cfg := range f.configs {
				want := 2 * time.Second
				if tt.lastShort > 0 && i == len(f.configs)-1 {
					want = tt.lastShort
				}
				assert.Equal(t, want, cfg.Duration, "run %d", i+1)
				assert.Equal(t, 64, cfg.Connections)
			}
		})
	}

	f := &fakeRuns{rates: []float64{1, 2, 3}, errAt: 2}
	w, err := loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/"}, &loadgen.WarmUpOptions{Run: f.run})
	assert.ErrorContains(t, err, "loadgen: warm-up run 2: connection refused")
	assert.Equal(t, []float64{1}, w.Rates)
	_, err = loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/", Warmup: time.Second}, nil)
	assert.ErrorContains(t, err, "Config.Warmup 1s: want 0")
	_, err = loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/"}, &loadgen.WarmUpOptions{Runs: 1})
	assert.ErrorContains(t, err, "warm-up runs 1: want 2 or more")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f = &fakeRuns{rates: []float64{1, 2, 3}}
	_, err = loadgen.WarmUp(ctx, loadgen.Config{URL: "http://127.0.0.1:1/"}, &loadgen.WarmUpOptions{Run: f.run})
	assert.ErrorIs(t, err, context.Canceled)
}
