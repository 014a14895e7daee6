package stats_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen/stats"
)

// The reference values come from testdata/stats_reference.py: the exact
// p by enumerating every split of the pooled values, the normal
// approximation from its formula, Python's standard library only.
func TestMannWhitneyU(t *testing.T) {
	tests := []struct {
		name   string
		x1, x2 []float64
		u, p   float64
		exact  bool
	}{
		{"apart 5+5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 0.007936507936507936, true},
		{"apart 5+5 reversed", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 0.007936507936507936, true},
		{"apart 4+4", []float64{10, 11, 12, 13}, []float64{20, 21, 22, 23}, 0, 0.02857142857142857, true},
		{"apart 3+3", []float64{10, 11, 12}, []float64{20, 21, 22}, 0, 0.1, true},
		{"apart 3+4", []float64{10, 11, 12}, []float64{20, 21, 22, 23}, 0, 0.05714285714285714, true},
		{"interleaved 5+5", []float64{12100, 12400, 12900, 13300, 12650}, []float64{12500, 13100, 13500, 13900, 12950}, 5, 0.15079365079365079, true},
		// R's ?wilcox.test example: W = 35, one-sided p = 0.1272.
		{"R docs 10+5", []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}, []float64{1.15, 0.88, 0.90, 0.74, 1.21}, 35, 0.2544122544122544, true},
		{"ties 4+5", []float64{1, 2, 2, 3}, []float64{2, 3, 3, 4, 5}, 3, 0.15873015873015872, true},
		{"ties 6+6", []float64{10, 10, 11, 12, 12, 13}, []float64{12, 13, 13, 14, 14, 15}, 3, 0.021645021645021644, true},
		{"equal medians", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 6, 0.6857142857142857, true},
		{"U at the centre", []float64{1, 4}, []float64{2, 3}, 2, 1, true},
		{"ties 10+10: normal", []float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, []float64{3, 3, 4, 4, 5, 5, 6, 6, 7, 7}, 18, 0.015856209681046236, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := stats.MannWhitneyU(tt.x1, tt.x2)
			require.NoError(t, err)
			assert.Equal(t, tt.u, r.U)
			assert.InDelta(t, tt.p, r.P, 1e-12)
			assert.Equal(t, tt.exact, r.Exact)
			assert.Equal(t, len(tt.x1), r.N1)
			assert.Equal(t, len(tt.x2), r.N2)
		})
	}

	t.Run("60+60 with ties: normal", func(t *testing.T) {
		var x, y []float64
		for i := range 60 {
			x = append(x, float64(1000+3*i))
			y = append(y, float64(1050+3*i+1))
		}
		r, err := stats.MannWhitneyU(x, y)
		require.NoError(t, err)
		assert.False(t, r.Exact)
		assert.Equal(t, 924.5, r.U)
		assert.InEpsilon(t, 4.371246433781144e-06, r.P, 1e-9)
	})

	_, err := stats.MannWhitneyU(nil, []float64{1})
	assert.ErrorContains(t, err, "want at least 1 in each")
	_, err = stats.MannWhitneyU([]float64{2, 2}, []float64{2})
	assert.ErrorContains(t, err, "every value is the same")
	_, err = stats.MannWhitneyU([]float64{1, math.NaN()}, []float64{2})
	assert.ErrorContains(t, err, "NaN")
}

// benchstat's table of the smallest p of n against n runs
// (golang.org/x/perf/benchmath uTestMinP) and the count it asks for.
func TestMinPValue(t *testing.T) {
	want := []float64{1: 1, 0.3333333333333333, 0.1, 0.02857142857142857, 0.007936507936507936,
		0.0021645021645021645, 0.0005827505827505828, 0.0001554001554001554, 4.113533525298231e-05}
	for n := 1; n < len(want); n++ {
		assert.InEpsilon(t, want[n], stats.MinPValue(n, n), 1e-9, "%d+%d", n, n)
		// The smallest p is what two runs that do not overlap give.
		if n >= 2 {
			lo, hi := make([]float64, n), make([]float64, n)
			for i := range n {
				lo[i], hi[i] = float64(i), float64(100+i)
			}
			r, err := stats.MannWhitneyU(lo, hi)
			require.NoError(t, err)
			assert.InEpsilon(t, want[n], r.P, 1e-9)
		}
	}
	assert.InEpsilon(t, 0.05714285714285714, stats.MinPValue(3, 4), 1e-9)
	assert.Equal(t, 1.0, stats.MinPValue(0, 5))
	assert.Equal(t, 4, stats.MinRuns(0.05))
	assert.Equal(t, 5, stats.MinRuns(0.01))
	assert.Equal(t, 3, stats.MinRuns(0.2))
	assert.Equal(t, 0, stats.MinRuns(0))
}

func TestRatioIntervalOf(t *testing.T) {
	tests := []struct {
		name                  string
		from, to              []float64
		conf                  float64
		low, high, confidence float64
	}{
		{"5+5 +8%", []float64{12100, 12400, 12900, 12650, 12300}, []float64{13300, 13500, 13900, 13650, 13100}, 0.95,
			1.0355731225296438, 1.1280991735537176, 0.9682539682539683},
		{"5+5 +8% at 90%", []float64{12100, 12400, 12900, 12650, 12300}, []float64{13300, 13500, 13900, 13650, 13100}, 0.9,
			1.051383399209486, 1.115702479338842, 0.9047619047619048},
		{"6+6 close", []float64{100, 102, 99, 101, 103, 98}, []float64{101, 104, 100, 103, 102, 105}, 0.95,
			0.9902912621359219, 1.0499999999999992, 0.9588744588744589},
		{"6+6 close at 90%", []float64{100, 102, 99, 101, 103, 98}, []float64{101, 104, 100, 103, 102, 105}, 0.9,
			1.0, 1.0404040404040407, 0.9069264069264069},
		// Three runs cannot reach 95 %: the whole range of ratios, 90 %.
		{"3+3", []float64{10, 11, 12}, []float64{20, 21, 22}, 0.95, 1.6666666666666663, 2.2, 0.9},
		{"4+4", []float64{10, 11, 12, 13}, []float64{20, 21, 22, 23}, 0.95, 1.5384615384615383, 2.2999999999999994, 0.9714285714285714},
		{"4+4 at 90%", []float64{10, 11, 12, 13}, []float64{20, 21, 22, 23}, 0.9, 1.6153846153846154, 2.2, 0.9428571428571428},
		{"10+10", seq(100, 1, 10), seq(105, 1.5, 10), 0.95, 1.0294117647058825, 1.1099999999999992, 0.9567429474550218},
		{"10+10 at 90%", seq(100, 1, 10), seq(105, 1.5, 10), 0.9, 1.0373831775700937, 1.1029411764705885, 0.9107904479421507},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ri, err := stats.RatioIntervalOf(tt.from, tt.to, tt.conf)
			require.NoError(t, err)
			assert.InEpsilon(t, tt.low, ri.Low, 1e-12)
			assert.InEpsilon(t, tt.high, ri.High, 1e-12)
			assert.InEpsilon(t, tt.confidence, ri.Confidence, 1e-12)
		})
	}

	// Past 50 a side: the normal approximation, still about the shift.
	from, to := seq(1000, 1, 60), seq(1100, 1.1, 60) // to = 1.1 × from
	ri, err := stats.RatioIntervalOf(from, to, 0.95)
	require.NoError(t, err)
	assert.Less(t, ri.Low, 1.1)
	assert.Greater(t, ri.High, 1.1)
	assert.InDelta(t, 0.95, ri.Confidence, 0.01)

	for _, bad := range []struct {
		from, to []float64
		conf     float64
		want     string
	}{
		{nil, []float64{1}, 0.95, "want at least 1 in each"},
		{[]float64{1}, []float64{1}, 1, "want between 0 and 1"},
		{[]float64{0}, []float64{1}, 0.95, "want positive and finite"},
		{[]float64{1}, []float64{math.Inf(1)}, 0.95, "want positive and finite"},
	} {
		_, err := stats.RatioIntervalOf(bad.from, bad.to, bad.conf)
		assert.ErrorContains(t, err, bad.want)
	}
}

// seq returns n values start, start+step, ….
func seq(start, step float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = start + step*float64(i)
	}
	return out
}

// enumMannWhitney is the exact two-sided p of x1 against x2 by
// enumeration, written apart from stats.go: each of the C(n1+n2, n1)
// assignments of the pooled values to the first sample is equally likely
// under the null; each gives a U from the mid-ranks of the pooled values
// (doubled, so that they stay integers), and
// p = min(1, 2·min(P(U ≤ u), P(U ≥ u))) at the observed u. far is the
// share of assignments with |U − n1·n2/2| ≥ |u − n1·n2/2|, the other
// two-sided p, which MannWhitney.P is not.
func enumMannWhitney(x1, x2 []float64) (p, far float64) {
	pooled := append(append([]float64(nil), x1...), x2...)
	n1 := len(x1)
	// r2[i] is twice the mid-rank of pooled[i]: 2·(values below) + (values
	// equal, itself included) + 1.
	r2 := make([]int, len(pooled))
	for i, v := range pooled {
		below, equal := 0, 0
		for _, w := range pooled {
			switch {
			case w < v:
				below++
			case w == v:
				equal++
			}
		}
		r2[i] = 2*below + equal + 1
	}
	// u2 is twice U: twice the rank sum less n1·(n1+1).
	u2 := func(idx []int) int {
		s := 0
		for _, i := range idx {
			s += r2[i]
		}
		return s - n1*(n1+1)
	}
	obs := make([]int, n1)
	for i := range obs {
		obs[i] = i
	}
	u, centre := u2(obs), n1*len(x2) // twice u and twice n1·n2/2
	var lower, upper, farther, total int
	var rec func(start int, idx []int)
	rec = func(start int, idx []int) {
		if len(idx) == n1 {
			v := u2(idx)
			total++
			if v <= u {
				lower++
			}
			if v >= u {
				upper++
			}
			if abs(v-centre) >= abs(u-centre) {
				farther++
			}
			return
		}
		for i := start; i <= len(pooled)-(n1-len(idx)); i++ {
			rec(i+1, append(idx, i))
		}
	}
	rec(0, make([]int, 0, n1))
	return min(1, 2*float64(min(lower, upper))/float64(total)), float64(farther) / float64(total)
}

func abs(v int) int { return max(v, -v) }

// TestMannWhitneyUTies pins the exact p of tied samples from issue 31,
// each checked against the enumeration.
func TestMannWhitneyUTies(t *testing.T) {
	tests := []struct {
		name   string
		x1, x2 []float64
		u, p   float64
		far    float64 // the share at least as far from n1·n2/2: not P
	}{
		// U = n1·n2/2 = 6, but the tied distribution is not symmetric:
		// P(U ≤ 6) = 16/35, so p = 32/35, not 1.
		{"exact, U at the centre", []float64{2, 3, 3}, []float64{1, 5, 5, 1}, 6, 32.0 / 35, 1},
		// P(U ≥ 12) = 1/35, and that U is the only one as far from 6 as
		// 12 (U = 0 cannot occur with these ties), so doubling the smaller
		// tail gives 2/35 where "at least as far" gives 1/35.
		{"exact, the smaller tail doubled", []float64{2, 2, 2}, []float64{0, 1, 1, 0}, 12, 2.0 / 35, 1.0 / 35},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, far := enumMannWhitney(tt.x1, tt.x2)
			require.InDelta(t, tt.p, p, 1e-12, "the enumeration")
			require.InDelta(t, tt.far, far, 1e-12, "the enumeration")
			r, err := stats.MannWhitneyU(tt.x1, tt.x2)
			require.NoError(t, err)
			assert.True(t, r.Exact)
			assert.Equal(t, tt.u, r.U)
			assert.InDelta(t, tt.p, r.P, 1e-12)
		})
	}
}

// TestMannWhitneyUNormalCentre checks that the continuity correction of
// the normal approximation does not take U past the mean: beyond the
// exact limits, two equal samples (R and scipy give 1) and two samples
// without ties that interleave symmetrically give p = 1 exactly.
func TestMannWhitneyUNormalCentre(t *testing.T) {
	same := func(x []float64) [2][]float64 { return [2][]float64{x, x} }
	// xyyx repeated 26 times: 52 values a side, no ties, U = 52·52/2.
	var x1, x2 []float64
	for b := range 26 {
		v := float64(4 * b)
		x1, x2 = append(x1, v, v+3), append(x2, v+1, v+2)
	}
	tests := []struct {
		name string
		x    [2][]float64
	}{
		// Issue 31: 0.9696 with the correction applied at U = mean.
		{"x = y, 10 values", same([]float64{1, 1, 2, 3, 4, 5, 6, 7, 8, 9})},
		{"x = y, 12 values", same([]float64{5, 5, 5, 6, 6, 7, 8, 8, 9, 9, 9, 9})},
		{"x = y, 60 values", same(seq(0.5, 0.25, 60))},
		{"no ties, 52+52", [2][]float64{x1, x2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := stats.MannWhitneyU(tt.x[0], tt.x[1])
			require.NoError(t, err)
			assert.False(t, r.Exact)
			assert.Equal(t, float64(len(tt.x[0])*len(tt.x[1]))/2, r.U)
			assert.Equal(t, 1.0, r.P)
		})
	}
}

// TestMannWhitneyUBrute checks the exact p against the enumeration on
// seeded random pairs of samples of 1 to 7 values: 300 drawn from few
// distinct values, so that most have ties; 100 of distinct values; and,
// of 3000 drawn from 2 to 5 values, those whose U is at n1·n2/2, where a
// tied distribution that is not symmetric gives p < 1.
func TestMannWhitneyUBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	draw := func(n, levels, shift int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.IntN(levels) + shift)
		}
		return v
	}
	check := func(t *testing.T, trial int, x1, x2 []float64, r stats.MannWhitney) {
		t.Helper()
		require.True(t, r.Exact)
		p, _ := enumMannWhitney(x1, x2)
		assert.InDelta(t, p, r.P, 1e-12, "trial %d: %v against %v", trial, x1, x2)
		assert.Greater(t, r.P, 0.0)
		assert.LessOrEqual(t, r.P, 1.0)
	}
	t.Run("ties", func(t *testing.T) {
		for trial := range 300 {
			n1, n2 := 1+rng.IntN(7), 1+rng.IntN(7)
			levels := 3 + rng.IntN(12)
			x1, x2 := draw(n1, levels, 0), draw(n2, levels, rng.IntN(3))
			r, err := stats.MannWhitneyU(x1, x2)
			if err != nil {
				require.ErrorContains(t, err, "every value is the same", "trial %d: %v %v", trial, x1, x2)
				continue
			}
			check(t, trial, x1, x2, r)
		}
	})
	t.Run("distinct", func(t *testing.T) {
		for trial := range 100 {
			n1, n2 := 1+rng.IntN(7), 1+rng.IntN(7)
			pooled := make([]float64, n1+n2)
			for i, k := range rng.Perm(n1 + n2) {
				pooled[i] = 10 + 0.5*float64(k)
			}
			x1, x2 := pooled[:n1], pooled[n1:]
			r, err := stats.MannWhitneyU(x1, x2)
			require.NoError(t, err)
			check(t, trial, x1, x2, r)
			if r.U == float64(n1*n2)/2 {
				assert.Equal(t, 1.0, r.P, "trial %d: the centre without ties", trial)
			}
		}
	})
	t.Run("centre", func(t *testing.T) {
		centre, under1 := 0, 0
		for trial := range 3000 {
			n1, n2 := 1+rng.IntN(7), 1+rng.IntN(7)
			levels := 2 + rng.IntN(4)
			x1, x2 := draw(n1, levels, 0), draw(n2, levels, 0)
			r, err := stats.MannWhitneyU(x1, x2)
			if err != nil || r.U != float64(n1*n2)/2 {
				continue
			}
			check(t, trial, x1, x2, r)
			centre++
			if r.P < 1 {
				under1++
			}
		}
		t.Logf("%d at the centre, %d of them with p < 1", centre, under1)
		assert.Positive(t, under1, "no trial at the centre of a distribution that is not symmetric")
	})
}
