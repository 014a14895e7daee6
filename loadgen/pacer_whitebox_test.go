package loadgen

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSendPolicy checks the default send batching as a table: sends leave
// on time while the loop is nearly idle, the window widens with the
// loop's load, and it is never wider than a quarter of a connection's
// send interval nor than defaultSendWindow.
func TestSendPolicy(t *testing.T) {
	us := time.Microsecond
	iv := func(conns, rate float64) time.Duration { return time.Duration(conns / rate * 1e9) }
	p := defaultSendPolicy
	tests := []struct {
		name     string
		load     float64
		interval time.Duration
		want     time.Duration
	}{
		{"idle: on time", 0, iv(64, 15000), 0},
		{"the CO test's 500/s per loop (~1% load): on time", 0.01, iv(64, 1000), 0},
		{"at the idle threshold: on time", 0.02, iv(64, 15000), 0},
		{"halfway: half the widest", 0.06, iv(64, 15000), 500 * us},
		{"busy, 15000/s on 64 connections: capped by defaultSendWindow", 0.10, iv(64, 15000), time.Millisecond},
		{"saturated: still capped", 1, iv(64, 15000), time.Millisecond},
		{"busy, 50000/s on 64: a quarter of 1.28 ms", 0.5, iv(64, 50000), 320 * us},
		{"busy, 90000/s on 64: a quarter of 711 µs", 0.8, iv(64, 90000), iv(64, 90000) / 4},
		{"halfway at 90000/s: an eighth of the interval", 0.06, iv(64, 90000), iv(64, 90000) / 8},
		{"one connection at 1000/s: a quarter of its 1 ms", 0.5, iv(1, 1000), 250 * us},
		{"no rate (a zero interval): on time", 0.5, 0, 0},
		{"no load sample yet (NaN): on time", math.NaN(), iv(64, 15000), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, float64(tt.want), float64(p.window(tt.load, tt.interval)), 1, "window")
		})
	}
}

// TestSendPolicyBounds checks the bounds over a grid of loads and rates:
// the window never exceeds its caps and never narrows as the load grows.
func TestSendPolicyBounds(t *testing.T) {
	p := defaultSendPolicy
	for _, rate := range []float64{100, 1000, 2000, 15000, 50000, 90000, 500000} {
		interval := time.Duration(64 / rate * 1e9)
		prev := time.Duration(0)
		for load := 0.0; load <= 1.5; load += 0.005 {
			w := p.window(load, interval)
			assert.LessOrEqual(t, w, defaultSendWindow, "rate %g load %g", rate, load)
			assert.LessOrEqual(t, float64(w), float64(interval)*p.Fraction+1, "rate %g load %g", rate, load)
			assert.GreaterOrEqual(t, w, prev, "rate %g load %g: narrower at a higher load", rate, load)
			prev = w
		}
	}
}

// TestSmoothLoad checks the running load: a quarter of the way to each
// new sample, and a bad sample (no clock) ignored.
func TestSmoothLoad(t *testing.T) {
	tests := []struct {
		name               string
		prev, sample, want float64
	}{
		{"first sample from zero", 0, 0.4, 0.1},
		{"steady", 0.2, 0.2, 0.2},
		{"falling", 0.5, 0.1, 0.4},
		{"negative sample ignored", 0.3, -1, 0.3},
		{"NaN sample ignored", 0.3, math.NaN(), 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, smoothLoad(tt.prev, tt.sample), 1e-12)
		})
	}
	// Ten ticks of a steady load bring the running value within 6% of it.
	l := 0.0
	for range 10 {
		l = smoothLoad(l, 0.2)
	}
	assert.InDelta(t, 0.2, l, 0.2*0.06)
}
