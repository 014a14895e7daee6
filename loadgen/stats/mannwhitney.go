package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Limits of the exact null distribution of the Mann-Whitney U statistic,
// as benchstat's (golang.org/x/perf, through go-moremath's stats) sets
// them: beyond them MannWhitneyU uses the normal approximation.
const (
	// mwExactLimit is the largest sample size tested with the exact
	// distribution when no value occurs twice.
	mwExactLimit = 50
	// mwTiesExactLimit is the largest sample size tested with the exact
	// distribution of the tied ranks when some value occurs twice.
	mwTiesExactLimit = 9
)

// errSamplesEqual is the error of a rank test of samples whose values are
// all the same: no order, nothing to test.
var errSamplesEqual = errors.New("every value is the same")

// MannWhitney is the outcome of a two-sided Mann-Whitney U test (the
// Wilcoxon rank-sum test) of two samples.
type MannWhitney struct {
	// N1 and N2 are the sample sizes.
	N1, N2 int
	// U is the statistic of the first sample: the pairs (x from the first,
	// y from the second) with x > y, plus half the pairs with x == y. The
	// second sample's is N1·N2 − U.
	U float64
	// P is the two-sided p-value: the smaller tail at U doubled, at most
	// 1, that is min(1, 2·min(P(U' ≤ U), P(U' ≥ U))) for U' drawn from
	// the null distribution (both samples from one population, given the
	// tied values). With ties that distribution is not symmetric about
	// N1·N2/2, so P is not the probability of a U' at least as far from
	// N1·N2/2, and may be under 1 at U = N1·N2/2.
	P float64
	// Exact reports whether P comes from the exact null distribution
	// (false: the normal approximation).
	Exact bool
}

// MannWhitneyU tests whether one sample tends to hold larger values than
// the other, the test benchstat uses: ranks the pooled values (tied values
// share their mean rank), takes the first sample's U, and computes the
// two-sided p-value
//
//   - exactly, from the null distribution of U given the tied ranks, when
//     no value occurs twice and both samples hold at most 50 values, or
//     when some value occurs twice and both hold at most 9 (benchstat's
//     limits): the smaller tail at U doubled, min(1, 2·min(P(U' ≤ U),
//     P(U' ≥ U))), as [MannWhitney.P] says; without ties the distribution
//     is symmetric and this is twice the lower tail at min(U, N1·N2 − U),
//     1 at U = N1·N2/2; with ties it is not, and U = N1·N2/2 can give
//     less than 1;
//   - otherwise from the normal approximation with the tie correction
//     (σ² = N1·N2·(N+1 − Σ(t³−t)/(N(N−1)))/12 over the groups of t tied
//     values) and the continuity correction of ½, which never takes |U −
//     N1·N2/2| past 0 (as R's wilcox.test): p = min(1, 2·Φ(−max(|U −
//     N1·N2/2| − ½, 0)/σ)), 1 at U = N1·N2/2.
//
// NaNs are refused. It returns an error for an empty sample and when every
// value is the same (no order: nothing to test).
func MannWhitneyU(x1, x2 []float64) (MannWhitney, error) {
	n1, n2 := len(x1), len(x2)
	r := MannWhitney{N1: n1, N2: n2}
	if n1 == 0 || n2 == 0 {
		return r, fmt.Errorf("loadgen: Mann-Whitney U test of %d and %d values: want at least 1 in each", n1, n2)
	}
	ranks, first, ties, err := midRanks2(x1, x2)
	if err != nil {
		return r, err
	}
	// w2 is twice the first sample's rank sum: an integer with mid-ranks.
	w2 := 0
	for i, rk := range ranks {
		if first[i] {
			w2 += rk
		}
	}
	r.U = float64(w2-n1*(n1+1)) / 2
	mean := float64(n1*n2) / 2
	if ties.groups == 1 {
		return r, fmt.Errorf("loadgen: Mann-Whitney U test: %w", errSamplesEqual)
	}
	if (!ties.any && n1 <= mwExactLimit && n2 <= mwExactLimit) || (ties.any && n1 <= mwTiesExactLimit && n2 <= mwTiesExactLimit) {
		r.Exact = true
		// Both tails, even at U = mean: with ties the distribution is not
		// symmetric, and the smaller tail there can be under ½. The tails
		// of U without ties, as probabilities; with them, of the doubled
		// rank sum, as counts of subsets, exact integers divided once, so
		// that a tail of exactly ½ gives a p of exactly 1.
		dist, at, total := uDist(n1, n2), int(r.U), 1.0
		if ties.any {
			dist, total = rankSumWays(ranks, n1)
			at = w2
		}
		lower, upper := 0.0, 0.0
		for s, pr := range dist {
			if s <= at {
				lower += pr
			}
			if s >= at {
				upper += pr
			}
		}
		r.P = min(1, 2*min(lower, upper)/total)
		return r, nil
	}
	n := float64(n1 + n2)
	sd := math.Sqrt(float64(n1*n2) * ((n + 1) - ties.correction/(n*(n-1))) / 12)
	// The continuity correction moves |U − mean| half a step towards 0,
	// never past it: at U = mean, p is 1.
	d := max(math.Abs(r.U-mean)-0.5, 0)
	r.P = min(1, 2*normalCDF(-d/sd))
	return r, nil
}

// tieInfo describes the groups of tied values in a pooled sample.
type tieInfo struct {
	any        bool    // some value occurs twice
	groups     int     // distinct values
	correction float64 // Σ(t³ − t) over the groups of t tied values
}

// midRanks2 pools x1 and x2, sorts them and returns each pooled value's
// rank doubled (so that the mean rank of a tie is an integer), whether it
// came from x1, and the ties.
func midRanks2(x1, x2 []float64) (ranks []int, first []bool, ties tieInfo, err error) {
	type item struct {
		v     float64
		first bool
	}
	items := make([]item, 0, len(x1)+len(x2))
	for _, v := range x1 {
		items = append(items, item{v, true})
	}
	for _, v := range x2 {
		items = append(items, item{v, false})
	}
	for _, it := range items {
		if math.IsNaN(it.v) {
			return nil, nil, ties, fmt.Errorf("loadgen: Mann-Whitney U test: NaN among the values")
		}
	}
	slices.SortStableFunc(items, func(a, b item) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	ranks = make([]int, len(items))
	first = make([]bool, len(items))
	for i := 0; i < len(items); {
		j := i
		for j < len(items) && items[j].v == items[i].v {
			j++
		}
		// Ranks i+1 … j (1-based): twice their mean is i+1+j.
		for k := i; k < j; k++ {
			ranks[k], first[k] = i+1+j, items[k].first
		}
		t := float64(j - i)
		ties.groups++
		if j-i > 1 {
			ties.any = true
			ties.correction += t*t*t - t
		}
		i = j
	}
	return ranks, first, ties, nil
}

// rankSumWays counts the subsets of k of the given (doubled) ranks by
// their sum: it returns how many sum to each s, and how many there are
// (C(len(ranks), k)). It counts by dynamic programming over the ranks
// (ways[j][s]: subsets of j ranks so far summing to s). The counts are
// integers, exact in a float64 up to 2⁵³: C(18, 9) = 48620 at the tied
// limit.
func rankSumWays(ranks []int, k int) ([]float64, float64) {
	total := 0
	for _, r := range ranks {
		total += r
	}
	ways := make([][]float64, k+1)
	for j := range ways {
		ways[j] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for i, r := range ranks {
		for j := min(k, i+1); j >= 1; j-- {
			prev, cur := ways[j-1], ways[j]
			for s := total; s >= r; s-- {
				if prev[s-r] != 0 {
					cur[s] += prev[s-r]
				}
			}
		}
	}
	n := 0.0
	for _, w := range ways[k] {
		n += w
	}
	return ways[k], n
}

// uDist returns the null distribution of U for samples of n1 and n2
// values without ties: dist[u] is P(U = u), u = 0 … n1·n2. It places the
// first sample's values among the pooled sorted positions one position at
// a time (ways[j][u]: placements of j first-sample values so far with U =
// u; a first-sample value with b second-sample values below it adds b).
func uDist(n1, n2 int) []float64 {
	m := n1 * n2
	ways := make([][]float64, n1+1)
	for j := range ways {
		ways[j] = make([]float64, m+1)
	}
	ways[0][0] = 1
	for i := range n1 + n2 {
		for j := min(n1, i+1); j >= 1; j-- {
			below := i - (j - 1) // second-sample values before position i
			if below > n2 {
				continue
			}
			prev, cur := ways[j-1], ways[j]
			for u := m; u >= below; u-- {
				cur[u] += prev[u-below]
			}
		}
	}
	dist := ways[n1]
	total := 0.0
	for _, w := range dist {
		total += w
	}
	for u := range dist {
		dist[u] /= total
	}
	return dist
}

// minPValue is the smallest two-sided p-value a Mann-Whitney U test of
// samples of n1 and n2 distinct values can give: the samples do not
// overlap at all, p = 2/C(n1+n2, n1) (1 when that is more). Below the
// exact limits, no result of n1 and n2 runs can be significant at an α
// at or below it.
func minPValue(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	// log C(n1+n2, n1), exact enough: the lgamma of integers.
	lc := lgamma(n1+n2+1) - lgamma(n1+1) - lgamma(n2+1)
	return min(1, 2*math.Exp(-lc))
}

func lgamma(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// MinRuns returns the fewest runs per configuration (the same number on
// both sides) with which a Mann-Whitney U test can reach p < alpha: with
// fewer, even two configurations whose runs do not overlap at all are not
// significantly different. For α = 0.05 it is 4 (p ≥ 0.1 with 3 and 3,
// 0.029 with 4 and 4), as benchstat warns; 0 for an α outside (0, 1).
func MinRuns(alpha float64) int {
	if !(alpha > 0 && alpha < 1) {
		return 0
	}
	for n := 1; ; n++ {
		if minPValue(n, n) < alpha {
			return n
		}
	}
}

// RatioInterval is a confidence interval of the ratio of two samples'
// locations (the second's over the first's), and the level it reaches.
type RatioInterval struct {
	// Low and High bound the ratio: 1.08 is 8 % more.
	Low, High float64
	// Confidence is the level the interval reaches: at least the level
	// asked for, except with samples too small to reach it, where it is
	// the highest they can (0.9 for 3 and 3 runs, the whole range of
	// pairwise ratios).
	Confidence float64
}

// RatioIntervalOf returns the exact Hodges-Lehmann (Moses) confidence
// interval at confidence (e.g. 0.95) of to's location over from's: the
// logs of the N1·N2 pairwise ratios to[j]/from[i] sorted, the interval
// runs from the k-th smallest to the k-th largest, k the smallest count
// with P(U ≤ k−1) < (1−confidence)/2 ≤ P(U ≤ k) under the exact null
// distribution of U without ties (k at least 1), so that it covers the
// true ratio with probability 1 − 2·P(U ≤ k−1) ≥ confidence (R's
// wilcox.test(conf.int = TRUE) picks the same order statistics). The
// interval assumes the two configurations differ by a factor, which is
// how a tuning step changes a capacity. Past 50 values on a side, k comes
// from the normal approximation of U. Values must be positive and
// finite.
func RatioIntervalOf(from, to []float64, confidence float64) (RatioInterval, error) {
	n1, n2 := len(from), len(to)
	switch {
	case n1 == 0 || n2 == 0:
		return RatioInterval{}, fmt.Errorf("loadgen: ratio interval of %d and %d values: want at least 1 in each", n1, n2)
	case !(confidence > 0 && confidence < 1):
		return RatioInterval{}, fmt.Errorf("loadgen: ratio interval at confidence %g: want between 0 and 1", confidence)
	}
	logs := make([]float64, 0, n1*n2)
	for _, x := range from {
		for _, y := range to {
			if !(x > 0 && y > 0) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				return RatioInterval{}, fmt.Errorf("loadgen: ratio interval: values %g and %g: want positive and finite", x, y)
			}
			logs = append(logs, math.Log(y)-math.Log(x))
		}
	}
	slices.Sort(logs)
	half := (1 - confidence) / 2
	m := n1 * n2
	var k int
	var achieved float64
	if n1 <= mwExactLimit && n2 <= mwExactLimit {
		dist := uDist(n1, n2)
		cum := 0.0 // P(U ≤ k−1)
		for k = 0; k < len(dist); k++ {
			if cum+dist[k] >= half {
				break
			}
			cum += dist[k]
		}
		// k is now the smallest count with P(U ≤ k) ≥ half.
		k = max(k, 1) // 0: P(U = 0) alone reaches half; take the whole range
		achieved = 1 - 2*cumBelow(dist, k)
	} else {
		mean := float64(m) / 2
		sd := math.Sqrt(float64(m) * float64(n1+n2+1) / 12)
		// The largest k with P(U ≤ k−1) ≤ half, U continuity-corrected.
		k = max(1, int(math.Floor(mean-normalQuantile(1-half)*sd+0.5)))
		achieved = 1 - 2*normalCDF((float64(k)-0.5-mean)/sd)
	}
	k = min(k, (m+1)/2)
	return RatioInterval{Low: math.Exp(logs[k-1]), High: math.Exp(logs[m-k]), Confidence: achieved}, nil
}

// cumBelow returns P(U ≤ k−1) = Σ dist[0 … k−1].
func cumBelow(dist []float64, k int) float64 {
	s := 0.0
	for u := 0; u < k && u < len(dist); u++ {
		s += dist[u]
	}
	return s
}

// normalCDF is the standard normal distribution function.
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normalQuantile inverts normalCDF by bisection (p in (0, 1)).
func normalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if normalCDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
