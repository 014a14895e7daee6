package loadgen_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
)

// freezeServer answers at once, except that every period it freezes all
// responses for stall: a request arriving during a freeze is held until
// the freeze ends.
func freezeServer(t *testing.T, stall, period time.Duration) *httptest.Server {
	t.Helper()
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		phase := time.Since(start) % period
		if phase < stall {
			time.Sleep(stall - phase)
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestIntegrationCoordinatedOmission runs a fixed rate against a server
// that freezes for S = P/8 every P. A request intended at phase φ < S of a
// freeze completes at S, so 12.5% of requests wait U(0,S]: the corrected
// p90, p99 and p99.9 are S−0.1P, S−0.01P and S−0.001P (60, 276 and
// 297.6 ms for 300 ms every 2.4 s; 50, 230 and 248 ms for 250 ms every
// 2 s). With 64 connections at 1000 requests/s, a connection stuck in
// a freeze has the next ~4 requests queued behind it: they are sent late
// (counted from their intended time in the corrected histogram) and drain
// in a few ms after the freeze. The uncorrected (service time) histogram
// sees only the 64 requests per freeze that were on the wire (2.7%), so
// its p90 stays near the server's real latency: it must not agree.
//
// Tolerance: the measured percentiles may exceed the analytic ones by up to
// 35 ms (the backlog drain, and scheduling delays on a loaded 2-core
// machine only add latency) and fall short by 5 ms (histogram resolution,
// the freeze's phase against the 100 ms the run covers at its edges).
func TestIntegrationCoordinatedOmission(t *testing.T) {
	timingTheory(t)
	testutil.StableCPUs(t)
	for _, tc := range []struct {
		name          string
		stall, period time.Duration
		rate          float64
	}{
		{"1000/s, 300 ms every 2.4 s", 300 * time.Millisecond, 2400 * time.Millisecond, 1000},
		// DESIGN.md's figures (analytic p90/p99/p99.9 50/230/248 ms):
		// 1000/s per event loop, sends 1 ms apart, which a fixed 1 ms
		// send window batched in pairs (p50 1.14 ms, issue 23).
		{"2000/s, 250 ms every 2 s", 250 * time.Millisecond, 2 * time.Second, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) { testCoordinatedOmission(t, tc.stall, tc.period, tc.rate) })
	}
}

func testCoordinatedOmission(t *testing.T, stall, period time.Duration, rate float64) {
	srv := freezeServer(t, stall, period)
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL: srv.URL, Connections: 64, Threads: 2, Rate: rate, Duration: 2 * period,
	})
	require.NoError(t, err)
	require.Zero(t, res.Errors.Socket(), "errors: %+v", res.Errors)
	h := res.Histograms
	// The analytic percentiles are over every request sent in the window.
	// The window ends a few ms into a new freeze (the run starts just
	// after the server): the requests sent then complete in the drain,
	// which Latency leaves out as wrk2 does, so add them back.
	sent := hdrhistogram.Import(h.Latency.Export())
	sent.Merge(res.Drain.Latency)
	ms := func(q float64) float64 { return float64(sent.ValueAtQuantile(q)) / 1000 }
	ums := func(q float64) float64 { return float64(h.Service.ValueAtQuantile(q)) / 1000 }
	p := func(q float64) float64 { // analytic corrected percentile, ms
		return (float64(stall) - (1-q/100)*float64(period)) / 1e6
	}
	t.Logf("requests %d drained %d missed %d; corrected p50 %.2f p90 %.1f p99 %.1f p99.9 %.1f ms (analytic %.1f %.1f %.1f); uncorrected p90 %.1f p99 %.1f; lag p50 %.3f p99 %.3f ms",
		res.Requests, res.Drain.Requests, res.Missed, ms(50), ms(90), ms(99), ms(99.9), p(90), p(99), p(99.9), ums(90), ums(99),
		float64(h.Lag.ValueAtQuantile(50))/1000, float64(h.Lag.ValueAtQuantile(99))/1000)
	want := rate * 2 * period.Seconds()
	assert.InDelta(t, want, float64(res.Requests+res.Drain.Requests), want*0.02, "requests")
	// The uncorrected histogram must not agree: at p90 it is less than half
	// the corrected value, whatever the machine's speed.
	assert.Less(t, ums(90), ms(90)/2, "uncorrected p90 should miss the freezes")
	// Outside the freezes the server answers in well under a millisecond
	// and the generator sends on time; when the median send lag or service
	// time says otherwise, the machine starved the test (other processes on
	// a shared CI machine) and the percentiles measure that, not the
	// correction.
	if lag, svc := ms50(h.Lag), ms50(h.Service); lag > 2 || svc > 2 {
		load, cpus := loadPerCPU(t)
		t.Skipf("strict percentile check skipped: the machine starved the run (median send lag %.1f ms, median service time %.1f ms; load average %.1f per CPU on %d CPUs)", lag, svc, load, cpus)
	}
	assert.Less(t, ums(90), p(90)/2, "uncorrected p90 should stay near the server's real latency")
	// The default send policy batches nothing at these rates (each loop
	// is nearly idle): every send leaves on time, so the median is the
	// server's, not wrk2's ~1 ms of timer granularity.
	assert.LessOrEqual(t, ms(50), 0.5, "corrected p50")
	for _, q := range []float64{90, 99, 99.9} {
		assert.GreaterOrEqual(t, ms(q), p(q)-5, "corrected p%g", q)
		assert.LessOrEqual(t, ms(q), p(q)+35, "corrected p%g", q)
	}
}

func ms50(h *hdrhistogram.Histogram) float64 { return float64(h.ValueAtQuantile(50)) / 1000 }

// loadPerCPU returns the 1-minute load average per CPU.
func loadPerCPU(t *testing.T) (float64, int) {
	b, err := os.ReadFile("/proc/loadavg")
	require.NoError(t, err)
	var l float64
	_, err = fmt.Sscan(string(b), &l)
	require.NoError(t, err)
	return l / float64(runtime.NumCPU()), runtime.NumCPU()
}
