package loadgen

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSendAt checks when a loop wakes for its due sends: on time for a
// send due alone, at the last one due within the window when several
// are, and never later than the window; a fixed slack always waits it.
func TestSendAt(t *testing.T) {
	us := func(n int64) int64 { return n * int64(time.Microsecond) }
	for _, tc := range []struct {
		name          string
		slack, window int64
		due           []int64 // µs
		want          int64   // µs
	}{
		{"alone on time", 0, us(500), []int64{1000}, 1000},
		{"next beyond the window", 0, us(500), []int64{1000, 1501, 3000}, 1000},
		{"batched to the last within", 0, us(500), []int64{1000, 1100, 1300, 1500, 1501, 2000}, 1500},
		{"order of insertion does not matter", 0, us(500), []int64{2000, 1300, 1000, 1700, 1100, 1400, 1200}, 1400},
		{"no window", 0, 0, []int64{1000, 1100}, 1000},
		{"fixed slack", us(4000), 0, []int64{1000, 1100}, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &loop{r: &runner{slack: tc.slack}, window: tc.window}
			for _, d := range tc.due {
				l.heap.push(&conn{due: us(d), hidx: -1})
			}
			assert.Equal(t, us(tc.want), l.sendAt())
			assert.Equal(t, us(tc.want), l.sendAt(), "again, reusing the scan stack")
		})
	}
}
