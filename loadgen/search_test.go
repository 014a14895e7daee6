package loadgen_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
)

// cand is a candidate with six capacity runs around median (±spread %)
// and its p99 at rate.
func cand(name string, median, spread float64, rate float64, p99 time.Duration) loadgen.StepFigures {
	d := median * spread / 100
	runs := []float64{median - d, median - d/2, median - d/4, median + d/4, median + d/2, median + d}
	return loadgen.StepFigures{Name: name, CapacityRuns: runs, Latency: loadgen.Figures{Load: rate, P99: p99}}
}

func TestPickBest(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		cands    []loadgen.StepFigures
		best     int
		tied     []int
		why      string
		verdicts []stats.Verdict // each against the best
	}{
		{
			name: "a clear winner",
			cands: []loadgen.StepFigures{cand("1", 1000, 1, 800, 3*ms), cand("2", 1200, 1, 800, 9*ms),
				cand("4", 1100, 1, 800, 1*ms)},
			best: 1, tied: []int{1}, why: "highest capacity, significantly above every other",
			verdicts: []stats.Verdict{stats.VerdictLoss, "", stats.VerdictLoss},
		},
		{
			name: "a tie broken by p99 at the common rate",
			cands: []loadgen.StepFigures{cand("1", 800, 1, 700, 3*ms), cand("2", 1002, 3, 700, 4*ms),
				cand("4", 1000, 3, 700, 2*ms)},
			best: 2, tied: []int{1, 2}, why: "lowest p99 at 700 req/s (2.00ms) of 2 not significantly different in capacity",
			verdicts: []stats.Verdict{stats.VerdictLoss, stats.VerdictNoChange, ""},
		},
		{
			name:  "equal p99: the higher capacity",
			cands: []loadgen.StepFigures{cand("a", 1000, 3, 700, 2*ms), cand("b", 1001, 3, 700, 2*ms)},
			best:  1, tied: []int{0, 1}, why: "lowest p99 at 700 req/s (2.00ms) of 2",
			verdicts: []stats.Verdict{stats.VerdictNoChange, ""},
		},
		{
			name:  "latency at different rates cannot break the tie",
			cands: []loadgen.StepFigures{cand("a", 1000, 3, 700, 1*ms), cand("b", 1001, 3, 650, 9*ms)},
			best:  1, tied: []int{0, 1}, why: "no common-rate p99",
			verdicts: []stats.Verdict{stats.VerdictNoChange, ""},
		},
		{
			name: "an unsettled top is tied with the rest",
			cands: func() []loadgen.StepFigures {
				c := []loadgen.StepFigures{cand("a", 1000, 1, 700, 2*ms), cand("b", 1500, 1, 700, 5*ms)}
				c[1].Unsettled = true
				return c
			}(),
			best: 0, tied: []int{0, 1}, why: "lowest p99",
			verdicts: []stats.Verdict{"", stats.VerdictUnsettled},
		},
		{
			name:  "one candidate",
			cands: []loadgen.StepFigures{cand("only", 1000, 1, 700, 2*ms)},
			best:  0, tied: []int{0}, why: "highest capacity", verdicts: []stats.Verdict{""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := loadgen.PickBest(tt.cands, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.best, ch.Best)
			assert.Equal(t, tt.tied, ch.Tied)
			assert.Contains(t, ch.Why, tt.why)
			require.Len(t, ch.VsBest, len(tt.cands))
			for i, v := range tt.verdicts {
				assert.Equal(t, v, ch.VsBest[i].Verdict, "candidate %d against the best", i)
			}
		})
	}
}

func TestPickBestErrors(t *testing.T) {
	_, err := loadgen.PickBest(nil, nil)
	assert.ErrorContains(t, err, "no candidates")
	_, err = loadgen.PickBest([]loadgen.StepFigures{cand("a", 1000, 1, 0, 0)}, &stats.UpliftOptions{Alpha: 2})
	assert.ErrorContains(t, err, "alpha 2")
	_, err = loadgen.PickBest([]loadgen.StepFigures{cand("a", 1000, 1, 0, 0), {Name: "b", CapacityRuns: []float64{-1, 3}}}, nil)
	assert.ErrorContains(t, err, "b against a")
}
