package stats_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nettune/nettune/loadgen/stats"
)

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   stats.Spread
	}{
		{"none", nil, stats.Spread{}},
		{"one", []float64{7}, stats.Spread{N: 1, Median: 7, Min: 7, Max: 7}},
		{"odd, unsorted", []float64{272, 244, 358}, stats.Spread{N: 3, Median: 272, Min: 244, Max: 358}},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, stats.Spread{N: 4, Median: 2.5, Min: 1, Max: 4}},
		{"NaN left out", []float64{math.NaN(), 5, 1}, stats.Spread{N: 2, Median: 3, Min: 1, Max: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.values...)
			assert.Equal(t, tt.want, stats.SpreadOf(tt.values))
			if len(in) > 0 && !math.IsNaN(in[0]) {
				assert.Equal(t, in, tt.values, "values not modified")
			}
		})
	}
}

func TestUpliftOf(t *testing.T) {
	s := func(v ...float64) stats.Spread { return stats.SpreadOf(v) }
	tests := []struct {
		name     string
		from, to stats.Spread
		percent  float64
		noise    bool
	}{
		// The guide's steps, one wrk2 run each: a single run cannot tell noise.
		{"single runs", s(244449.62), s(271675.12), 11.14, false},
		{"equal single runs", s(1000), s(1000), 0, true},
		{"apart, gap wider than both ranges", s(1980, 2000, 2010), s(2950, 3000, 3020), 50, false},
		{"ranges overlap", s(1900, 2000, 2100), s(2050, 2100, 2150), 5, true},
		{"apart but gap inside the wider range", s(1000, 1090, 1100), s(1101, 1102, 1103), 1.1, true},
		{"real fall", s(3000, 3010, 3020), s(2000, 2010, 2020), -33.22, false},
		{"fall inside the spread", s(900, 1000, 1100), s(950, 980, 990), -2, true},
		{"from nothing", stats.Spread{}, s(5), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := stats.UpliftOf(tt.from, tt.to)
			assert.InDelta(t, tt.percent, u.Percent, 0.01)
			assert.Equal(t, tt.noise, u.Noise)
		})
	}
}
