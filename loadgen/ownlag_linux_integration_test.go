package loadgen_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// TestIntegrationOwnLagExcludesBusyConnections: a server that holds each
// request 20 ms while each of the 2 connections is due every 10 ms makes
// every send wait for its connection: Lag holds that wait (at least 10 ms
// at the median, by construction), OwnLag does not. Per request OwnLag
// is never more than Lag, so every quantile of it is at most Lag's.
func TestIntegrationOwnLagExcludesBusyConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: srv.URL, Connections: 2, Threads: 1, Rate: 200,
		Duration: 1500 * time.Millisecond, Timeout: 5 * time.Second})
	require.NoError(t, err)
	lag, own := res.Histograms.Lag, res.Histograms.OwnLag
	require.NotNil(t, own)
	require.Positive(t, lag.TotalCount())
	assert.Equal(t, lag.TotalCount(), own.TotalCount(), "one own lag per send")
	assert.GreaterOrEqual(t, lag.ValueAtQuantile(50), int64(10000), "each send waited for a connection held 20 ms")
	for _, q := range []float64{50, 90, 99, 100} {
		assert.LessOrEqual(t, own.ValueAtQuantile(q), lag.ValueAtQuantile(q), "p%g", q)
	}
	assert.Less(t, own.ValueAtQuantile(50), lag.ValueAtQuantile(50), "the wait for the connection is not the generator's")
	f := loadgen.FiguresOf("busy", res)
	assert.Equal(t, time.Duration(own.ValueAtQuantile(99))*time.Microsecond, f.OwnLagP99)
}

// TestIntegrationOwnLagClosedLoop: a closed loop has no schedule, so
// neither lag is recorded and LateSends is silent.
func TestIntegrationOwnLagClosedLoop(t *testing.T) {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: hello.URL, Connections: 2, Requests: 200})
	require.NoError(t, err)
	assert.Zero(t, res.Histograms.OwnLag.TotalCount())
	assert.Empty(t, loadgen.LateSends(res))
	assert.Zero(t, loadgen.FiguresOf("closed", res).OwnLagP99)
}
