package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/nettune/nettune/loadgen/internal/format"
)

// Spread summarises repeated measurements of one figure (the capacity of
// one configuration measured N times): its median and its range.
type Spread struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// SpreadOf returns the median, minimum and maximum of values; the median
// of an even count is the mean of the two middle values. NaNs are left
// out. It returns the zero Spread for no values. values is not modified.
func SpreadOf(values []float64) Spread {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Spread{}
	}
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return Spread{N: n, Median: med, Min: v[0], Max: v[n-1]}
}

// Width returns Max − Min: how far the repeats lay apart.
func (s Spread) Width() float64 { return s.Max - s.Min }

// Defaults of UpliftOfRuns and CompareStepsWith.
const (
	// DefaultAlpha is the significance level: a change is significant
	// when the Mann-Whitney U test's p is below it (benchstat's -alpha).
	DefaultAlpha = 0.05
	// DefaultConfidence is the level of the ratio's confidence interval.
	DefaultConfidence = 0.95
	// DefaultNoiseBand is the band, in percent either side of no change,
	// that the interval must lie wholly outside for a change to be a gain
	// or a loss (criterion's noise threshold).
	DefaultNoiseBand = 1.0
	// DefaultRepeat is the number of capacity runs per configuration a
	// study should take for CompareSteps to be able to answer: at least
	// MinRuns(DefaultAlpha) = 4 for anything to be significant, and enough
	// for a real +8 % to be called a gain in 16 of 20 trials, and two
	// identical configurations "no significant change" in 18 of 20, on
	// runs that spread by a few percent (TestIntegrationUpliftTrials;
	// README.md has the figures). Six runs that do not overlap give p =
	// 0.002.
	DefaultRepeat = 6
)

// Verdict is what a comparison of two configurations' runs concludes.
type Verdict string

// The verdicts of UpliftOfRuns and CompareSteps.
const (
	// VerdictGain: p < α and the ratio's whole interval lies above the
	// noise band.
	VerdictGain Verdict = "gain"
	// VerdictLoss: p < α and the whole interval lies below the noise band.
	VerdictLoss Verdict = "loss"
	// VerdictNoChange: not significant, or the interval reaches into the
	// noise band.
	VerdictNoChange Verdict = "no significant change"
	// VerdictTooFewRuns: with so few runs not even two configurations
	// whose runs do not overlap reach p < α (minPValue).
	VerdictTooFewRuns Verdict = "too few runs"
	// VerdictUnsettled: one of the configurations was measured before its
	// warm-up settled (StepFigures.Unsettled); its change is never
	// called significant.
	VerdictUnsettled Verdict = "unsettled"
)

// Significant reports whether v is a gain or a loss.
func (v Verdict) Significant() bool { return v == VerdictGain || v == VerdictLoss }

// Uplift is the change of a repeated figure from one configuration to
// another. UpliftOfRuns fills every field; UpliftOf (deprecated) only
// Percent and Noise, and its JSON then has no interval, p or verdict.
type Uplift struct {
	// Percent is the change of the median, in percent of the first
	// configuration's median (0 when that median is 0).
	Percent float64 `json:"percent"`
	// Noise is true when the change does not stand out of the spread:
	// the two ranges overlap (some run of the lower configuration matched
	// or beat some run of the higher), or the medians differ by no more
	// than the wider of the two ranges. A change between single runs (no
	// spread) is never noise: one run cannot tell.
	//
	// Deprecated: a range rule on few runs calls two equal configurations
	// different one time in ten with three runs each. Use Verdict.
	Noise bool `json:"noise"`
	// Low and High bound the change at Confidence: the ratio's interval
	// (RatioIntervalOf) as percent changes (8 is a ratio of 1.08).
	Low  float64 `json:"ci_low_percent,omitempty"`
	High float64 `json:"ci_high_percent,omitempty"`
	// Confidence is the level the interval reached (RatioInterval).
	Confidence float64 `json:"confidence,omitempty"`
	// P is the two-sided p-value of the Mann-Whitney U test of the runs
	// (MannWhitneyU); 1 when every run of both read the same.
	P float64 `json:"p,omitempty"`
	// Alpha and NoiseBand are the thresholds Verdict was judged by.
	Alpha     float64 `json:"alpha,omitempty"`
	NoiseBand float64 `json:"noise_band_percent,omitempty"`
	// N1 and N2 are the runs of the first and the second configuration.
	N1 int `json:"n_from,omitempty"`
	N2 int `json:"n_to,omitempty"`
	// Verdict is the conclusion; "" when only Percent and Noise were
	// computed (UpliftOf).
	Verdict Verdict `json:"verdict,omitempty"`
}

// String formats the uplift as a step table's cell: "+10.4 % [+7.9,
// +12.6] p=0.008" for a gain or a loss; "no significant change (+0.4 %
// [-2.1, +3.0] p=0.690)"; "+26.1 % (too few runs: 3+3, p ≥ 0.100)";
// "+3.2 % [...] p=... (unsettled)"; and, without a verdict (UpliftOf),
// "+2.0 %" with " (noise)" after a change inside the spread.
func (u Uplift) String() string {
	if u.Verdict == "" {
		if u.Noise {
			return format.Percent(u.Percent) + " (noise)"
		}
		return format.Percent(u.Percent)
	}
	figures := fmt.Sprintf("%s [%s, %s] %s", format.Percent(u.Percent), format.Signed1(u.Low), format.Signed1(u.High), pValue(u.P))
	switch u.Verdict {
	case VerdictGain, VerdictLoss:
		return figures
	case VerdictNoChange:
		return "no significant change (" + figures + ")"
	case VerdictTooFewRuns:
		return fmt.Sprintf("%s (too few runs: %d+%d, p >= %.3f)", format.Percent(u.Percent), u.N1, u.N2, minPValue(u.N1, u.N2))
	}
	return figures + " (" + string(u.Verdict) + ")"
}

// pValue formats a p-value as benchstat does: three decimals, "p<0.001"
// below.
func pValue(p float64) string {
	if p < 0.0005 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}

// UpliftOf compares to against from by their ranges: Percent and the
// deprecated Noise. With three runs each, two configurations that perform
// the same have disjoint ranges one time in ten (2·3!·3!/6!); the second
// condition, a gap between the medians wider than either range, makes
// that rarer still.
//
// Deprecated: a range rule is not a test. Use UpliftOfRuns, which needs
// the runs, not their Spread.
func UpliftOf(from, to Spread) Uplift {
	u := Uplift{Percent: format.Change(from.Median, to.Median)}
	if from.N == 0 || to.N == 0 {
		return u
	}
	overlap := from.Min <= to.Max && to.Min <= from.Max
	gap := math.Abs(to.Median - from.Median)
	u.Noise = overlap || gap <= max(from.Width(), to.Width())
	return u
}

// UpliftOptions set the thresholds of UpliftOfRuns and CompareStepsWith.
// A nil *UpliftOptions means the defaults; so does a zero field.
type UpliftOptions struct {
	// Alpha is the significance level of the Mann-Whitney U test.
	// Default: DefaultAlpha (0.05).
	Alpha float64 `json:"alpha"`
	// Confidence is the level of the ratio's interval. Default:
	// DefaultConfidence (0.95).
	Confidence float64 `json:"confidence"`
	// NoiseBand is the band, in percent either side of no change, that
	// the interval must lie wholly outside for a gain or a loss. Default:
	// DefaultNoiseBand (1 %).
	NoiseBand float64 `json:"noise_band_percent"`
}

// WithDefaults returns the options with every zero field set to its
// default, or an error for a value out of range.
func (o *UpliftOptions) WithDefaults() (UpliftOptions, error) {
	r := UpliftOptions{Alpha: DefaultAlpha, Confidence: DefaultConfidence, NoiseBand: DefaultNoiseBand}
	if o != nil {
		if o.Alpha != 0 {
			r.Alpha = o.Alpha
		}
		if o.Confidence != 0 {
			r.Confidence = o.Confidence
		}
		if o.NoiseBand != 0 {
			r.NoiseBand = o.NoiseBand
		}
	}
	switch {
	case !(r.Alpha > 0 && r.Alpha < 1):
		return r, fmt.Errorf("loadgen: alpha %g: want between 0 and 1 (e.g. 0.05)", r.Alpha)
	case !(r.Confidence > 0 && r.Confidence < 1):
		return r, fmt.Errorf("loadgen: confidence %g: want between 0 and 1 (e.g. 0.95)", r.Confidence)
	case !(r.NoiseBand >= 0) || math.IsInf(r.NoiseBand, 0):
		return r, fmt.Errorf("loadgen: noise band %g%%: want a percentage >= 0 (e.g. 1)", r.NoiseBand)
	}
	return r, nil
}

// UpliftOfRuns compares the runs of one configuration (to) against
// another's (from), as benchstat judges a difference and criterion reports
// one:
//
//   - Percent is the change of the median;
//   - P is the two-sided Mann-Whitney U test's p (MannWhitneyU: exact for
//     small samples);
//   - Low and High are the exact Hodges-Lehmann interval of the ratio
//     to/from at Confidence (RatioIntervalOf), as percent changes;
//   - Verdict is a gain or a loss only when P < Alpha and the whole
//     interval lies outside ±NoiseBand %; otherwise "no significant
//     change", or "too few runs" when even runs that do not overlap could
//     not reach P < Alpha with so few (fewer than MinRuns(Alpha) a side
//     with equal counts: 4 at α = 0.05).
//
// Noise is UpliftOf's range rule, kept for its old readers. NaNs are left
// out. It returns an error for options out of range, a side without runs,
// or a run that is not positive and finite.
func UpliftOfRuns(from, to []float64, opts *UpliftOptions) (Uplift, error) {
	o, err := opts.WithDefaults()
	if err != nil {
		return Uplift{}, err
	}
	from, to = withoutNaN(from), withoutNaN(to)
	u := UpliftOf(SpreadOf(from), SpreadOf(to))
	u.Alpha, u.NoiseBand, u.N1, u.N2 = o.Alpha, o.NoiseBand, len(from), len(to)
	ri, err := RatioIntervalOf(from, to, o.Confidence)
	if err != nil {
		return Uplift{}, err
	}
	u.Low, u.High, u.Confidence = 100*(ri.Low-1), 100*(ri.High-1), ri.Confidence
	mw, err := MannWhitneyU(from, to)
	switch {
	case errors.Is(err, errSamplesEqual):
		u.P = 1
	case err != nil:
		return Uplift{}, err
	default:
		u.P = mw.P
	}
	switch {
	case minPValue(u.N1, u.N2) >= o.Alpha:
		u.Verdict = VerdictTooFewRuns
	case u.P < o.Alpha && u.Low > o.NoiseBand:
		u.Verdict = VerdictGain
	case u.P < o.Alpha && u.High < -o.NoiseBand:
		u.Verdict = VerdictLoss
	default:
		u.Verdict = VerdictNoChange
	}
	return u, nil
}

func withoutNaN(v []float64) []float64 {
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}
