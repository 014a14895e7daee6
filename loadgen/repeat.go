package loadgen

import (
	"math"
	"slices"
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

// Uplift is the change of a repeated figure from one configuration to
// another, and whether it stands out of the repeats' spread.
type Uplift struct {
	// Percent is the change of the median, in percent of the first
	// configuration's median (0 when that median is 0).
	Percent float64 `json:"percent"`
	// Noise is true when the change does not stand out of the spread:
	// the two ranges overlap (some run of the lower configuration matched
	// or beat some run of the higher), or the medians differ by no more
	// than the wider of the two ranges. A change between single runs (no
	// spread) is never noise: one run cannot tell.
	Noise bool `json:"noise"`
}

// UpliftOf compares to against from. With three runs each, two
// configurations that perform the same have disjoint ranges one time in
// ten (2·3!·3!/6!); the second condition, a gap between the medians wider
// than either range, makes that rarer still.
func UpliftOf(from, to Spread) Uplift {
	u := Uplift{Percent: change(from.Median, to.Median)}
	if from.N == 0 || to.N == 0 {
		return u
	}
	overlap := from.Min <= to.Max && to.Min <= from.Max
	gap := math.Abs(to.Median - from.Median)
	u.Noise = overlap || gap <= max(from.Width(), to.Width())
	return u
}
