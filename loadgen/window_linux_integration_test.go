package loadgen_test

import (
	"bufio"
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// slowServer answers each request hold after it arrives, one at a time per
// connection, and counts the requests it received.
func slowServer(t *testing.T, hold time.Duration) (string, *atomic.Int64) {
	var got atomic.Int64
	url := rawServer(t, func(c *net.TCPConn, r *bufio.Reader) {
		for readRequest(r) {
			got.Add(1)
			time.Sleep(hold) // the server's service time
			if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
				return
			}
		}
	})
	return url, &got
}

// TestIntegrationWindow checks the measured window's arithmetic: 4
// connections whose server answers in 400 ms cannot keep up with 20
// requests/s, so at the end of the 1 s window every connection has a
// request in flight and a backlog. No request is sent after the window (a
// connection sends at most at 0, 0.4 and 0.8 s), the 4 in flight complete
// in the drain and are counted there only, and the rate is over the window.
func TestIntegrationWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate float64
	}{{"open", 20}, {"closed", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			url, got := slowServer(t, 400*time.Millisecond)
			var last loadgen.Snapshot
			cfg := loadgen.Config{URL: url, Connections: 4, Threads: 1, Rate: tc.rate, Duration: time.Second,
				Interval: 250 * time.Millisecond, OnInterval: func(s loadgen.Snapshot) { last = s }}
			res, err := loadgen.Run(context.Background(), cfg)
			require.NoError(t, err)
			assert.Equal(t, time.Second, res.Elapsed, "Elapsed is the window")
			assert.LessOrEqual(t, res.Sent, uint64(12), "nothing sent after the window")
			assert.Equal(t, uint64(got.Load()), res.Sent, "the server saw only the window's requests")
			assert.Equal(t, uint64(4), res.Drain.Requests, "one request in flight per connection at the end")
			assert.Equal(t, res.Sent, res.Requests+res.Drain.Requests)
			assert.Zero(t, res.Incomplete)
			assert.Zero(t, res.Drain.Errors+res.Drain.Timeouts)
			assert.Positive(t, res.Drain.Elapsed)
			assert.Equal(t, int64(res.Requests), res.Histograms.Latency.TotalCount(), "drain not in the histograms")
			assert.Equal(t, int64(res.Drain.Requests), res.Drain.Latency.TotalCount())
			assert.InDelta(t, float64(res.Requests), res.AchievedRate, 1e-9, "rate over the 1 s window")
			assert.Equal(t, res.Requests, last.TotalRequests, "drain not in the intervals")
			assert.LessOrEqual(t, last.End, time.Second)
			if tc.rate > 0 {
				assert.Equal(t, uint64(20), res.Sent+res.Missed, "the backlog is missed, not sent late")
			}
		})
	}
}

// TestIntegrationNoDrain checks ab's -t semantics: the run ends at the
// window's end and the requests in flight are incomplete, not drained.
func TestIntegrationNoDrain(t *testing.T) {
	url, _ := slowServer(t, 400*time.Millisecond)
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Connections: 4, Threads: 1, Duration: time.Second, NoDrain: true})
	require.NoError(t, err)
	assert.Equal(t, time.Second, res.Elapsed)
	assert.Equal(t, uint64(4), res.Incomplete)
	assert.Zero(t, res.Drain.Requests)
	assert.Equal(t, res.Sent, res.Requests+res.Incomplete)
}

// TestIntegrationDrainTimeout checks that a request that outlives the
// drain is a drain timeout, not a window error.
func TestIntegrationDrainTimeout(t *testing.T) {
	url, _ := slowServer(t, 900*time.Millisecond)
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Connections: 2, Threads: 1, Duration: 500 * time.Millisecond, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.Zero(t, res.Requests)
	assert.Equal(t, uint64(2), res.Drain.Timeouts, "%+v", res.Drain)
	assert.Equal(t, res.Sent, res.Errors.Timeout+res.Drain.Timeouts)
}
