package loadgen_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// shardResult is a shard's Result: requests responses over elapsed from
// start, with the given latencies (µs) recorded in every histogram.
func shardResult(start time.Time, elapsed time.Duration, requests uint64, cpuPercent float64, latencies ...int64) *loadgen.Result {
	r := &loadgen.Result{URL: "http://10.0.0.1:8080/", Connections: 8, Threads: 1, Pacer: "shard of constant 1000/s", OfferedRate: 500,
		Start: start, Elapsed: elapsed, Requests: requests, Sent: requests + 1, Missed: 2,
		Errors:    loadgen.Errors{Read: 1, Errnos: []loadgen.ErrnoCount{{Class: "read", Errno: "ECONNRESET", Count: 1}}},
		Generator: loadgen.GeneratorUse{CPU: time.Duration(cpuPercent * float64(elapsed) / 100), Wall: elapsed, CPUs: 1},
		Drain:     loadgen.Drain{Requests: 3, Latency: loadgen.NewHistogram()},
		Histograms: loadgen.Histograms{Latency: loadgen.NewHistogram(), Service: loadgen.NewHistogram(), Lag: loadgen.NewHistogram(),
			Connect: loadgen.NewHistogram(), Processing: loadgen.NewHistogram(), Waiting: loadgen.NewHistogram()}}
	for _, v := range latencies {
		for _, h := range []interface{ RecordValue(int64) error }{r.Histograms.Latency, r.Histograms.Service, r.Histograms.Lag} {
			_ = h.RecordValue(v)
		}
	}
	return r
}

func TestMergeShards(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		shards     []*loadgen.Result
		start      time.Time
		window     time.Duration
		requests   uint64
		rate       float64
		p50, p99   int64
		generator  float64
		wantErr    string
		count      int64
		offered    float64
		connection int
	}{
		{name: "same window: counts add up, percentiles of the union",
			shards: []*loadgen.Result{shardResult(t0, 10*time.Second, 1000, 40, 100, 100, 100, 5000), shardResult(t0, 10*time.Second, 3000, 90, 200, 200, 200, 200)},
			start:  t0, window: 10 * time.Second, requests: 4000, rate: 400, p50: 200, p99: 5000, generator: 90, count: 8, offered: 1000, connection: 16},
		{name: "shifted windows: each shard's responses in the common window, pro rata",
			shards: []*loadgen.Result{shardResult(t0, 10*time.Second, 1000, 10, 100), shardResult(t0.Add(time.Second), 10*time.Second, 2000, 20, 300)},
			start:  t0.Add(time.Second), window: 9 * time.Second, requests: 2700, rate: 300, p50: 100, p99: 300, generator: 20, count: 2, offered: 1000, connection: 16},
		{name: "one shard is itself",
			shards: []*loadgen.Result{shardResult(t0, 2*time.Second, 500, 50, 7)},
			start:  t0, window: 2 * time.Second, requests: 500, rate: 250, p50: 7, p99: 7, generator: 50, count: 1, offered: 500, connection: 8},
		{name: "none", wantErr: "no result"},
		{name: "missing", shards: []*loadgen.Result{shardResult(t0, time.Second, 1, 1, 1), nil}, wantErr: "result 2 of 2 is missing"},
		{name: "disjoint", shards: []*loadgen.Result{shardResult(t0, time.Second, 1, 1, 1), shardResult(t0.Add(2*time.Second), time.Second, 1, 1, 1)},
			wantErr: "do not overlap"},
		{name: "empty window", shards: []*loadgen.Result{shardResult(t0, 0, 0, 0)}, wantErr: "empty window"},
		{name: "other URL", shards: func() []*loadgen.Result {
			b := shardResult(t0, time.Second, 1, 1, 1)
			b.URL = "http://10.0.0.2:8080/"
			return []*loadgen.Result{shardResult(t0, time.Second, 1, 1, 1), b}
		}(), wantErr: "want shards of one load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := loadgen.MergeShards(tt.shards...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.start, m.Start)
			assert.Equal(t, tt.window, m.Elapsed)
			assert.Equal(t, tt.requests, m.Requests)
			assert.InDelta(t, tt.rate, m.AchievedRate, 1e-9)
			assert.Equal(t, tt.count, m.Histograms.Latency.TotalCount(), "every value of every shard")
			assert.Equal(t, tt.p50, m.Histograms.Latency.ValueAtQuantile(50))
			assert.True(t, m.Histograms.Latency.ValuesAreEquivalent(tt.p99, m.Histograms.Latency.ValueAtQuantile(99)), "p99 %d", m.Histograms.Latency.ValueAtQuantile(99))
			assert.Equal(t, tt.count, m.Histograms.Lag.TotalCount())
			assert.InDelta(t, tt.generator, m.Generator.Percent(), 0.01, "the busiest shard's generator")
			assert.Equal(t, tt.offered, m.OfferedRate)
			assert.Equal(t, tt.connection, m.Connections)
			n := uint64(len(tt.shards))
			assert.Equal(t, 2*n, m.Missed)
			assert.Equal(t, n, m.Errors.Read)
			assert.Equal(t, []loadgen.ErrnoCount{{Class: "read", Errno: "ECONNRESET", Count: n}}, m.Errors.Errnos)
			assert.Equal(t, 3*n, m.Drain.Requests)
			assert.NotEmpty(t, m.Pacer, "an open-model merge stays open-model")
		})
	}
}
