package loadgen_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nettune/nettune/loadgen"
)

func TestPacers(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		p     loadgen.Pacer
		due   map[uint64]time.Duration // request -> intended time
		hits  map[time.Duration]uint64 // elapsed -> requests due by then
		rates map[time.Duration]float64
	}{
		{
			name:  "constant 1000/s",
			p:     loadgen.Constant(1000),
			due:   map[uint64]time.Duration{0: 0, 1: ms, 999: 999 * ms, 15000: 15 * time.Second},
			hits:  map[time.Duration]uint64{0: 1, ms - 1: 1, ms: 2, time.Second: 1001, -1: 0},
			rates: map[time.Duration]float64{0: 1000, time.Hour: 1000},
		},
		{
			name: "constant 500000/s (the seeds' -R500000)",
			p:    loadgen.Constant(500000),
			due:  map[uint64]time.Duration{1: 2 * time.Microsecond, 500000: time.Second},
			hits: map[time.Duration]uint64{time.Second: 500001},
		},
		{
			// Rate climbs 0 -> 2000/s over 2 s: requests due by t are t²·500
			// (1000 by 1.414 s, 2000 by 2 s), then 2000/s.
			name:  "ramp 0 to 2000/s over 2s",
			p:     loadgen.Ramp(0, 2000, 2*time.Second),
			due:   map[uint64]time.Duration{0: 0, 500: time.Second, 2000: 2 * time.Second, 4000: 3 * time.Second},
			hits:  map[time.Duration]uint64{time.Second: 501, 2 * time.Second: 2001, 3 * time.Second: 4001},
			rates: map[time.Duration]float64{0: 0, time.Second: 1000, 5 * time.Second: 2000},
		},
		{
			name: "ramp down 2000 to 1000/s over 1s",
			p:    loadgen.Ramp(2000, 1000, time.Second),
			due:  map[uint64]time.Duration{1500: time.Second, 2500: 2 * time.Second},
			hits: map[time.Duration]uint64{time.Second: 1501},
		},
		{
			name:  "steps 100/s for 1s then 1000/s",
			p:     loadgen.Steps(loadgen.Step{Rate: 100, For: time.Second}, loadgen.Step{Rate: 1000, For: time.Second}),
			due:   map[uint64]time.Duration{99: 990 * ms, 100: time.Second, 1100: 2 * time.Second, 2100: 3 * time.Second},
			hits:  map[time.Duration]uint64{500 * ms: 51, time.Second: 101, 1500 * ms: 601},
			rates: map[time.Duration]float64{0: 100, time.Second: 1000, time.Hour: 1000},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for n, want := range tt.due {
				assert.InDelta(t, float64(want), float64(tt.p.Due(n)), float64(time.Microsecond), "Due(%d)", n)
			}
			for e, want := range tt.hits {
				assert.Equal(t, want, tt.p.Hits(e), "Hits(%s)", e)
			}
			for e, want := range tt.rates {
				assert.InDelta(t, want, tt.p.Rate(e), 1e-9, "Rate(%s)", e)
			}
			// Consistency: monotonic, and Hits(Due(n)) counts request n.
			prev := time.Duration(-1)
			for n := uint64(0); n < 5000; n += 7 {
				d := tt.p.Due(n)
				assert.GreaterOrEqual(t, d, prev, "Due(%d) not monotonic", n)
				assert.Greater(t, tt.p.Hits(d), n, "Hits(Due(%d))", n)
				prev = d
			}
			assert.NotEmpty(t, fmt.Sprint(tt.p))
		})
	}
}

func ExampleRamp() {
	p := loadgen.Ramp(1000, 3000, 10*time.Second)
	fmt.Println(p.Rate(5 * time.Second))
	fmt.Println(p.Due(20000)) // 1000..3000/s for 10 s is 20000 requests
	// Output:
	// 2000
	// 10s
}

func ExampleConstant() {
	p := loadgen.Constant(500000) // wrk2 -R500000
	fmt.Println(p.Due(1), p.Due(500000), p.Hits(time.Second))
	// Output: 2µs 1s 500001
}
