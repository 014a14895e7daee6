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
	"github.com/nettune/nettune/loadgen/stats"
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
	assert.Equal(t, stats.Spread{N: 3, Median: 23100, Min: 12500, Max: 23900}, c.Rate)
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

// compilerShares is a CompilerShare hook returning the given shares in
// turn, the first for the call before run 1.
type compilerShares struct {
	shares []float64
	calls  int
	errAt  int // 1-based call that fails; 0: none
}

func (c *compilerShares) share() (float64, error) {
	c.calls++
	if c.calls == c.errAt {
		return 0, errors.New("/proc/4242/task: no such file or directory")
	}
	return c.shares[c.calls-1], nil
}

// TestWarmUpJIT: the rate plateaus at run 3, but the compilers still use
// 15 % and 4 % of the JVM's CPU; the warm-up is settled only at run 5,
// under 2 %. The hook is called once before the first run.
func TestWarmUpJIT(t *testing.T) {
	f := &fakeRuns{rates: []float64{12000, 23000, 23400, 23300, 23500, 23400}}
	c := &compilerShares{shares: []float64{0.9, 0.40, 0.15, 0.15, 0.04, 0.012, 0.01}}
	var seen []loadgen.WarmUpRun
	w, err := loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/"},
		&loadgen.WarmUpOptions{Interval: time.Second, Run: f.run, CompilerShare: c.share, OnRun: func(r loadgen.WarmUpRun) { seen = append(seen, r) }})
	require.NoError(t, err)
	assert.True(t, w.Settled)
	assert.True(t, w.Stable)
	assert.Equal(t, 6, c.calls, "once before run 1, once after each of 5 runs")
	require.Len(t, w.Runs, 5)
	assert.Equal(t, w.Runs, seen, "OnRun saw every run")
	assert.Equal(t, []float64{12000, 23000, 23400, 23300, 23500}, w.Rates)
	want := []struct {
		share           float64
		stable, settled bool
	}{{0.40, false, false}, {0.15, false, false}, {0.15, true, false}, {0.04, true, false}, {0.012, true, true}}
	for i, r := range w.Runs {
		assert.Equal(t, i+1, r.Index)
		assert.Equal(t, time.Second, r.Duration)
		assert.True(t, r.JIT)
		assert.Equal(t, want[i].share, r.CompilerShare, "run %d", i+1)
		assert.Equal(t, want[i].stable, r.Stable, "run %d", i+1)
		assert.Equal(t, want[i].settled, r.Settled, "run %d", i+1)
	}

	assert.Equal(t, "run 1 (1s): 12000 req/s, JIT compilers 40.0 % of the server's CPU", w.Runs[0].String())
	assert.Equal(t, "run 3 (1s): 23400 req/s, JIT compilers 15.0 % of the server's CPU, rate steady", w.Runs[2].String())
	assert.Equal(t, "run 5 (1s): 23500 req/s, JIT compilers 1.2 % of the server's CPU, settled", w.Runs[4].String())

	// A higher threshold settles at the plateau.
	c = &compilerShares{shares: []float64{0.9, 0.40, 0.15, 0.15}}
	w, err = loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/"},
		&loadgen.WarmUpOptions{Run: (&fakeRuns{rates: f.rates}).run, CompilerShare: c.share, MaxCompilerShare: 0.2})
	require.NoError(t, err)
	assert.True(t, w.Settled)
	assert.Len(t, w.Runs, 3)

	// At Max with the compilers still busy: stable, not settled.
	c = &compilerShares{shares: []float64{0.9, 0.40, 0.15, 0.15, 0.10}}
	w, err = loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/"},
		&loadgen.WarmUpOptions{Interval: time.Second, Max: 4 * time.Second, Run: (&fakeRuns{rates: f.rates}).run, CompilerShare: c.share})
	require.NoError(t, err)
	assert.True(t, w.Stable)
	assert.False(t, w.Settled)
	assert.Len(t, w.Runs, 4)

	// Without the hook, the rate alone: settled at the plateau.
	w, err = loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/"},
		&loadgen.WarmUpOptions{Run: (&fakeRuns{rates: f.rates}).run})
	require.NoError(t, err)
	assert.True(t, w.Settled)
	assert.False(t, w.Runs[0].JIT)
	assert.Len(t, w.Runs, 3)
	assert.Equal(t, "run 3 (2s): 23400 req/s, settled", w.Runs[2].String())

	// The hook's errors, before the first run and after one.
	for at, want := range map[int]string{1: "compiler share before run 1: /proc/4242/task", 3: "warm-up run 2: compiler share: /proc/4242/task"} {
		c = &compilerShares{shares: []float64{0.9, 0.4, 0.1}, errAt: at}
		_, err = loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/"},
			&loadgen.WarmUpOptions{Run: (&fakeRuns{rates: f.rates}).run, CompilerShare: c.share})
		assert.ErrorContains(t, err, want)
	}
	_, err = loadgen.WarmUp(context.Background(), loadgen.Config{URL: "http://127.0.0.1:1/"}, &loadgen.WarmUpOptions{MaxCompilerShare: 2})
	assert.ErrorContains(t, err, "compiler share 2: want a fraction")
}
