package loadgen

import (
	"errors"
	"fmt"

	"github.com/nettune/nettune/loadgen/internal/format"
	"github.com/nettune/nettune/loadgen/stats"
)

// Choice is the configuration that measured best among candidates of one
// setting (PickBest), and how every candidate compares with it.
type Choice struct {
	// Best is the index of the chosen candidate.
	Best int `json:"best"`
	// Top is the index of the highest median capacity; Best differs from
	// it only when the latency broke a tie.
	Top int `json:"top"`
	// Tied are the candidates whose capacity is not significantly below
	// Top's (Top among them), in index order: the p99 at the common rate
	// chose among them. One entry when Top won outright.
	Tied []int `json:"tied"`
	// VsBest is each candidate's capacity against Best's (Best's own is
	// the zero Uplift), judged as CompareStepsWith judges a step.
	VsBest []stats.Uplift `json:"vs_best"`
	// Why says how Best won, e.g. "highest capacity, significantly above
	// every other" or "lowest p99 at 1800 req/s (1.2ms) of 3 not
	// significantly different in capacity".
	Why string `json:"why"`
}

// PickBest chooses the best of several configurations of one setting (a
// thread pool's size, a queue count), each measured as a step: the highest
// median capacity, unless other candidates are not significantly below it
// (UpliftOfRuns at opts, as CompareStepsWith judges a step, an unsettled
// candidate never significant); then, among those tied, the lowest p99 at
// the common rate (Figures.P99 of Latency, compared only when every tied
// candidate was measured at one rate), the higher capacity breaking an
// equal p99. Equal medians keep the earlier candidate. It returns an error
// without candidates, for options out of range, or for runs that are not
// positive.
func PickBest(cands []StepFigures, opts *stats.UpliftOptions) (Choice, error) {
	if len(cands) == 0 {
		return Choice{}, errors.New("loadgen: pick the best of no candidates")
	}
	o, err := opts.WithDefaults()
	if err != nil {
		return Choice{}, err
	}
	cands = append([]StepFigures(nil), cands...) // the caller's are not changed
	for i := range cands {
		if cands[i].Capacity.N == 0 && len(cands[i].CapacityRuns) > 0 {
			cands[i].Capacity = stats.SpreadOf(cands[i].CapacityRuns)
		}
	}
	top := 0
	for i, c := range cands {
		if c.Capacity.Median > cands[top].Capacity.Median {
			top = i
		}
	}
	ch := Choice{Top: top, Best: top}
	for i, c := range cands {
		if i == top {
			ch.Tied = append(ch.Tied, i)
			continue
		}
		u, err := stepUplift(cands[top], c, &o)
		if err != nil {
			return Choice{}, fmt.Errorf("loadgen: %s against %s: %w", c.Name, cands[top].Name, err)
		}
		if tied(u) {
			ch.Tied = append(ch.Tied, i)
		}
	}
	ch.Why = "highest capacity, significantly above every other"
	if len(ch.Tied) > 1 {
		ch.Why = fmt.Sprintf("highest capacity; %d others not significantly below it, and no common-rate p99 of them all to choose by", len(ch.Tied)-1)
		if rate, ok := commonLatencyRate(cands, ch.Tied); ok {
			best := ch.Tied[0]
			for _, i := range ch.Tied[1:] {
				a, b := cands[i].Latency.P99, cands[best].Latency.P99
				if a < b || a == b && cands[i].Capacity.Median > cands[best].Capacity.Median {
					best = i
				}
			}
			ch.Best = best
			ch.Why = fmt.Sprintf("lowest p99 at %.0f req/s (%s) of %d not significantly different in capacity",
				rate, format.Duration(cands[best].Latency.P99), len(ch.Tied))
		}
	}
	ch.VsBest = make([]stats.Uplift, len(cands))
	for i, c := range cands {
		if i == ch.Best {
			continue
		}
		if ch.VsBest[i], err = stepUplift(cands[ch.Best], c, &o); err != nil {
			return Choice{}, fmt.Errorf("loadgen: %s against %s: %w", c.Name, cands[ch.Best].Name, err)
		}
	}
	return ch, nil
}

// commonLatencyRate is the rate every candidate of idx measured its
// latency at, when they all did at one rate with a p99.
func commonLatencyRate(cands []StepFigures, idx []int) (float64, bool) {
	rate := cands[idx[0]].Latency.Load
	for _, i := range idx {
		l := cands[i].Latency
		if l.P99 <= 0 || l.Load <= 0 || !sameRate(l.Load, rate) {
			return 0, false
		}
	}
	return rate, true
}

// sameRate: two offered rates within 0.1 % (a rate written to JSON and
// read back, or the same rate reached by two runs).
func sameRate(a, b float64) bool { return a == b || a > 0 && b > 0 && max(a, b)/min(a, b) < 1.001 }

// tied: u is not a significant change (by its verdict; by the ranges for
// figures without their runs).
func tied(u stats.Uplift) bool {
	if u.Verdict == "" {
		return u.Noise
	}
	return !u.Verdict.Significant()
}
