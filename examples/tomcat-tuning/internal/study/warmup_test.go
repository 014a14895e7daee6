//go:build linux

package study

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// TestWarmUpLine: a warm-up's line says whether it settled, and one that
// reached the -warmup bound names the bound and what to do; the default
// bound is minutes, not loadgen's 30 s. A second warm-up says so.
func TestWarmUpLine(t *testing.T) {
	assert.Equal(t, 3*time.Minute, DefaultOptions().WarmUp)
	var b strings.Builder
	o := DefaultOptions()
	o.Connections = 16
	r := &run{o: o, log: &b}
	_, line := r.warmUpOptions(0)
	line("baseline", "warm-up", &loadgen.WarmUpResult{Rates: []float64{2007, 9000, 25858}, Loaded: 3 * time.Minute})
	assert.Equal(t, "baseline: warm-up 3m0s, closed loop on 16 connections: 2007 9000 25858 req/s, "+
		"still changing by more than 5% at the -warmup bound of 3m0s: unsettled (a longer -warmup lets it settle)\n", b.String())
	b.Reset()
	line("access-log", "warm-up", &loadgen.WarmUpResult{Rates: []float64{30000, 30100, 30050}, Loaded: 6 * time.Second, Stable: true, Settled: true})
	assert.Equal(t, "access-log: warm-up 6s, closed loop on 16 connections: 30000 30100 30050 req/s, the last 3 within 5%\n", b.String())
	b.Reset()
	line("baseline", "second warm-up", &loadgen.WarmUpResult{Rates: []float64{30000, 30100, 30050}, Loaded: 6 * time.Second, Stable: true, Settled: true})
	assert.Equal(t, "baseline: second warm-up 6s, closed loop on 16 connections: 30000 30100 30050 req/s, the last 3 within 5%\n", b.String())
}

// TestMeasureRemeasure: a step whose warm-up ends unsettled is warmed up
// a second time after its capacity runs, and measured again when that
// one settles; each warm-up is kept for -json and the log says what
// happened.
func TestMeasureRemeasure(t *testing.T) {
	tests := []struct {
		name       string
		second     []float64
		capacities int
		lines      []string
		remeasured bool
	}{{
		name:       "settles the second time",
		second:     []float64{5000, 5010, 5005},
		capacities: 4,
		lines: []string{
			"access-log: warm-up 3s, closed loop on 8 connections: 1000 2000 3000 req/s, still changing by more than 5% at the -warmup bound of 3s: unsettled (a longer -warmup lets it settle)",
			"access-log: warm-up unsettled; its capacity runs warmed it further: warming up again to re-measure it",
			"access-log: second warm-up 3s, closed loop on 8 connections: 5000 5010 5005 req/s, the last 3 within 5%",
			"access-log: re-measured after a second warm-up that settled",
		},
		remeasured: true,
	}, {
		name:       "unsettled twice",
		second:     []float64{4000, 5000, 6000},
		capacities: 2,
		lines: []string{
			"access-log: warm-up unsettled; its capacity runs warmed it further: warming up again to re-measure it",
			"access-log: second warm-up 3s, closed loop on 8 connections: 4000 5000 6000 req/s, still changing by more than 5% at the -warmup bound of 3s: unsettled (a longer -warmup lets it settle)",
			"access-log: the second warm-up did not settle either: the step stays unsettled, its uplifts are not called significant (a longer -warmup lets it settle)",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.CPUMethod, o.Repeat, o.Duration, o.Connections, o.Rate = MethodAffinity, 2, time.Second, 8, 100
			o.WarmUp, o.WarmUpStep = 3*time.Second, time.Second
			var log strings.Builder
			r := newRun(Host{CPUs: CPUs{N: 1}, NIC: NIC{Name: "lo", Virtual: true, Node: -1}}, o, &log)
			warmUps := append([]float64{1000, 2000, 3000}, tt.second...)
			capacities := 0
			r.loader = func(_ context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
				rate := 100.0 // the latency run
				switch cfg.Rate {
				case 0:
					rate, warmUps = warmUps[0], warmUps[1:]
				case o.CapacityRate:
					capacities++
					rate = float64(6000 + capacities)
				}
				return &loadgen.Result{Elapsed: cfg.Duration, AchievedRate: rate, OfferedRate: cfg.Rate, Requests: uint64(rate * cfg.Duration.Seconds())}, nil
			}
			m, err := r.measure(context.Background(), StepAccessLog, "http://127.0.0.1:1/", 0)
			require.NoError(t, err)
			t.Logf("%s", log.String())
			assert.Empty(t, warmUps, "both warm-ups ran to their bound or settled")
			assert.Equal(t, tt.capacities, capacities)
			assert.Equal(t, tt.remeasured, m.Remeasured)
			assert.Equal(t, !tt.remeasured, m.Unsettled)
			if tt.remeasured {
				assert.Equal(t, []float64{6003, 6004}, m.CapacityRuns, "the capacity runs after the second warm-up")
			} else {
				assert.Equal(t, []float64{6001, 6002}, m.CapacityRuns, "the capacity runs after the first warm-up")
			}
			require.NotNil(t, r.firstWarmUps[StepAccessLog])
			assert.Equal(t, []float64{1000, 2000, 3000}, r.firstWarmUps[StepAccessLog].Rates)
			assert.Equal(t, tt.second, r.warmUps[StepAccessLog].Rates)
			var got []string
			for _, l := range strings.Split(log.String(), "\n") {
				if strings.Contains(l, "warm") {
					got = append(got, l)
				}
			}
			for _, want := range tt.lines {
				assert.Contains(t, got, want)
			}
		})
	}
}
