//go:build linux

package study

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nettune/nettune/loadgen"
)

// TestWarmUpLine: a warm-up's line says whether it settled, and one that
// reached the -warmup bound names the bound and what to do; the default
// bound is minutes, not loadgen's 30 s.
func TestWarmUpLine(t *testing.T) {
	assert.Equal(t, 3*time.Minute, DefaultOptions().WarmUp)
	var b strings.Builder
	o := DefaultOptions()
	o.Connections = 16
	r := &run{o: o, log: &b}
	_, line := r.warmUpOptions(0)
	line("baseline", &loadgen.WarmUpResult{Rates: []float64{2007, 9000, 25858}, Loaded: 3 * time.Minute})
	assert.Equal(t, "baseline: warm-up 3m0s, closed loop on 16 connections: 2007 9000 25858 req/s, "+
		"still changing by more than 5% at the -warmup bound of 3m0s: unsettled, its uplifts are not called significant (a longer -warmup lets it settle)\n", b.String())
	b.Reset()
	line("access-log", &loadgen.WarmUpResult{Rates: []float64{30000, 30100, 30050}, Loaded: 6 * time.Second, Stable: true, Settled: true})
	assert.Equal(t, "access-log: warm-up 6s, closed loop on 16 connections: 30000 30100 30050 req/s, the last 3 within 5%\n", b.String())
}
