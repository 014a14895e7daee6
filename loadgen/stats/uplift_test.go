package stats_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen/stats"
)

// Reference values: testdata/stats_reference.py ("uplift ...").
func TestUpliftOfRuns(t *testing.T) {
	gainFrom := []float64{12100, 12400, 12900, 12650, 12300, 12500}
	gainTo := []float64{13300, 13500, 13900, 13650, 13100, 13400}
	tests := []struct {
		name                  string
		from, to              []float64
		opts                  *stats.UpliftOptions
		percent, p, low, high float64
		verdict               stats.Verdict
		cell                  string
	}{
		{"gain", gainFrom, gainTo, nil, 8.032128514056225, 0.0021645021645021645, 4.800000000000004, 11.200000000000031,
			stats.VerdictGain, "+8.0 % [+4.8, +11.2] p=0.002"},
		{"loss", gainTo, gainFrom, nil, -7.434944237918216, 0.0021645021645021645, -10.071942446043192, -4.580152671755733,
			stats.VerdictLoss, "-7.4 % [-10.1, -4.6] p=0.002"},
		// Significant, but the whole interval lies inside ±1 %.
		{"inside the band", seq(1000, 1, 6), seq(1006, 1, 6), nil, 0.5985037406483791, 0.0021645021645021645, 0.29910269192421346, 0.8982035928144061,
			stats.VerdictNoChange, "no significant change (+0.6 % [+0.3, +0.9] p=0.002)"},
		// A narrower band makes it a gain.
		{"inside a band of 0.2 %", seq(1000, 1, 6), seq(1006, 1, 6), &stats.UpliftOptions{NoiseBand: 0.2}, 0.5985037406483791, 0.0021645021645021645, 0.29910269192421346, 0.8982035928144061,
			stats.VerdictGain, "+0.6 % [+0.3, +0.9] p=0.002"},
		{"noise", []float64{100, 102, 99, 101, 103, 98}, []float64{101, 104, 100, 103, 102, 97}, nil, 0.9950248756218906, 0.5714285714285714, -2.020202020202011, 3.999999999999937,
			stats.VerdictNoChange, "no significant change (+1.0 % [-2.0, +4.0] p=0.571)"},
		// A stricter α: 6 runs a side cannot reach p < 0.001 (at best 0.002).
		{"gain at alpha 0.001", gainFrom, gainTo, &stats.UpliftOptions{Alpha: 0.001}, 8.032128514056225, 0.0021645021645021645, 4.800000000000004, 11.200000000000031,
			stats.VerdictTooFewRuns, "+8.0 % (too few runs: 6+6, p >= 0.002)"},
		// A looser α lets a smaller difference through.
		{"noise at alpha 0.6", []float64{100, 102, 99, 101, 103, 98}, []float64{101, 104, 100, 103, 102, 97}, &stats.UpliftOptions{Alpha: 0.6, NoiseBand: 0.01}, 0.9950248756218906, 0.5714285714285714, -2.020202020202011, 3.999999999999937,
			stats.VerdictNoChange, "no significant change (+1.0 % [-2.0, +4.0] p=0.571)"},
		// Three runs a side never reach p < 0.05: 2/C(6,3) = 0.1.
		{"three runs", []float64{12100, 12400, 12900}, []float64{14900, 15200, 15300}, nil, 22.58064516129032, 0.1, 15.503875968992258, 26.446280991735538,
			stats.VerdictTooFewRuns, "+22.6 % (too few runs: 3+3, p >= 0.100)"},
		{"every run the same", []float64{5, 5, 5, 5}, []float64{5, 5, 5, 5}, nil, 0, 1, 0, 0,
			stats.VerdictNoChange, "no significant change (0.0 % [0.0, 0.0] p=1.000)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := stats.UpliftOfRuns(tt.from, tt.to, tt.opts)
			require.NoError(t, err)
			assert.InDelta(t, tt.percent, u.Percent, 1e-9)
			assert.InDelta(t, tt.p, u.P, 1e-12)
			assert.InDelta(t, tt.low, u.Low, 1e-9)
			assert.InDelta(t, tt.high, u.High, 1e-9)
			assert.Equal(t, tt.verdict, u.Verdict)
			assert.Equal(t, tt.cell, u.String())
			assert.Equal(t, len(tt.from), u.N1)
			assert.Equal(t, tt.verdict.Significant(), tt.verdict == stats.VerdictGain || tt.verdict == stats.VerdictLoss)
		})
	}

	for _, bad := range []struct {
		from, to []float64
		opts     *stats.UpliftOptions
		want     string
	}{
		{nil, []float64{1}, nil, "want at least 1 in each"},
		{[]float64{1, 0}, []float64{1}, nil, "want positive and finite"},
		{[]float64{1}, []float64{1}, &stats.UpliftOptions{Alpha: 2}, "alpha 2: want between 0 and 1"},
		{[]float64{1}, []float64{1}, &stats.UpliftOptions{Confidence: -1}, "confidence -1"},
		{[]float64{1}, []float64{1}, &stats.UpliftOptions{NoiseBand: -1}, "noise band -1%"},
	} {
		_, err := stats.UpliftOfRuns(bad.from, bad.to, bad.opts)
		assert.ErrorContains(t, err, bad.want)
	}
}

// guideSteps are a study's steps with their runs: a gain, a step whose
// warm-up did not settle, and a change inside the noise, each with the
// Arm guide's figure beside it.
// An uplift by the ranges only (steps without their runs) has no
// interval, p or verdict in JSON, rather than zeros that read as p = 0.
func TestUpliftJSONWithoutRuns(t *testing.T) {
	b, err := json.Marshal(stats.UpliftOf(stats.SpreadOf([]float64{1, 2, 3}), stats.SpreadOf([]float64{2, 3, 4})))
	require.NoError(t, err)
	assert.JSONEq(t, `{"percent": 50, "noise": true}`, string(b))
}
