package loadgen

import (
	"fmt"
	"strings"

	"github.com/nettune/nettune/loadgen/internal/format"
)

// KneeOptions tune AnalyzeSweep. A nil *KneeOptions means the defaults.
type KneeOptions struct {
	// MinGain is the throughput gain, in percent, below which one more
	// load level "buys nothing". Default: 5.
	MinGain float64
	// MinLatencyRise is the rise of mean latency, in percent, that makes a
	// level not worth its cost when the gain is below MinGain. Default: 20.
	MinLatencyRise float64
	// Noise is the throughput drop, in percent of the best so far, that
	// counts as a real fall (over-drive) rather than noise. Default: 0.5.
	Noise float64
}

// SweepAnalysis is what a sweep says about the system's capacity.
type SweepAnalysis struct {
	// Best is the index of the level with the highest throughput.
	Best int `json:"best"`
	// Knee is the index of the last level worth its load: past it,
	// throughput grows less than MinGain while latency rises more than
	// MinLatencyRise. -1 when throughput kept growing.
	Knee int `json:"knee"`
	// Overdriven is the index of the first level whose throughput fell
	// below the best so far (by more than Noise) while latency rose.
	// -1 when none.
	Overdriven int `json:"overdriven"`
	// Findings explain the verdict in words, one sentence each.
	Findings []string `json:"findings"`
}

// AnalyzeSweep finds the best level, the knee and the over-driven point
// of a sweep whose levels are in increasing load order. A flat step or a
// fall that a later level undoes (its throughput beyond the step's by more
// than MinGain, or Noise for a fall) is reported as a dip, not as the knee
// or over-drive: on a shared host one level can be disturbed. It reasons as
// the IBM tuning-variations study does about its 20/40/60/80-user runs:
// "60 users give us the most throughput, while 80 users overdrives our
// test setup and reduces throughput. Going from 40 to 60 users increases
// throughput very slightly, about 1%, but latency increases 50%."
func AnalyzeSweep(levels []Figures, opts *KneeOptions) SweepAnalysis {
	o := KneeOptions{MinGain: 5, MinLatencyRise: 20, Noise: 0.5}
	if opts != nil {
		if opts.MinGain > 0 {
			o.MinGain = opts.MinGain
		}
		if opts.MinLatencyRise > 0 {
			o.MinLatencyRise = opts.MinLatencyRise
		}
		if opts.Noise > 0 {
			o.Noise = opts.Noise
		}
	}
	a := SweepAnalysis{Best: -1, Knee: -1, Overdriven: -1}
	if len(levels) == 0 {
		return a
	}
	a.Best = 0
	for i, l := range levels {
		if l.Throughput > levels[a.Best].Throughput {
			a.Best = i
		}
	}
	bestSoFar := 0
	for i := 1; i < len(levels); i++ {
		prev, cur := levels[i-1], levels[i]
		gain := change(prev.Throughput, cur.Throughput)
		rise := change(float64(prev.Mean), float64(cur.Mean))
		if a.Knee < 0 && gain < o.MinGain && rise > o.MinLatencyRise {
			if j := recovers(levels, i, prev.Throughput, o.MinGain); j > 0 {
				a.Findings = append(a.Findings, fmt.Sprintf("%s → %s: throughput %s, mean latency %s, but %s later gives %s: a dip (noise?), not the knee",
					prev.Name, cur.Name, pctWords(gain), pctWords(rise), levels[j].Name, pctWords(change(prev.Throughput, levels[j].Throughput))))
			} else {
				a.Knee = i - 1
				a.Findings = append(a.Findings, fmt.Sprintf("%s → %s: throughput %s, mean latency %s: the knee is at %s",
					prev.Name, cur.Name, pctWords(gain), pctWords(rise), prev.Name))
			}
		}
		top := levels[bestSoFar]
		if a.Overdriven < 0 && change(top.Throughput, cur.Throughput) < -o.Noise && cur.Mean > prev.Mean && recovers(levels, i, top.Throughput, o.Noise) < 0 {
			a.Overdriven = i
			a.Findings = append(a.Findings, fmt.Sprintf("%s over-drives the system: throughput falls %.1f%% below that of %s while mean latency rises %s",
				cur.Name, -change(top.Throughput, cur.Throughput), top.Name, pctWords(change(float64(top.Mean), float64(cur.Mean)))))
		}
		if cur.Throughput > top.Throughput {
			bestSoFar = i
		}
	}
	best := levels[a.Best]
	a.Findings = append([]string{fmt.Sprintf("%s gives the most throughput (%.2f req/s, mean latency %s)", best.Name, best.Throughput, format.Duration(best.Mean))}, a.Findings...)
	if a.Knee < 0 {
		a.Findings = append(a.Findings, "throughput kept growing with load: no knee within the levels run")
	}
	return a
}

// recovers returns the first level after i whose throughput exceeds ref
// by more than pct percent, or -1: a fall that later load undoes is not a
// knee or over-drive but a disturbed level.
func recovers(levels []Figures, i int, ref, pct float64) int {
	for j := i + 1; j < len(levels); j++ {
		if change(ref, levels[j].Throughput) > pct {
			return j
		}
	}
	return -1
}

func pctWords(v float64) string {
	if v >= 0 {
		return fmt.Sprintf("+%.1f%%", v)
	}
	return fmt.Sprintf("%.1f%%", v)
}

// Text renders the analysis as one finding per line.
func (a SweepAnalysis) Text() string { return strings.Join(a.Findings, "\n") + "\n" }
