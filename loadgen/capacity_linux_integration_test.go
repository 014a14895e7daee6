package loadgen_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
)

// pacedServer answers on 127.0.0.1 with a pool of workers; a worker
// serves one request at a time and takes service(t) for it, t being the
// time since the server's first request; the other requests queue. A
// queued request starts when its worker's previous one completed (by the
// schedule, not by when that timer fired or the hand-off woke it), so
// timer lateness on a loaded host does not lower the capacity: a
// saturated server completes workers/service requests per second.
type pacedServer struct {
	URL     string
	service func(since time.Duration) time.Duration
	pool    chan *pacedWorker
	mu      sync.Mutex
	first   time.Time
	// linger delays each response after its worker is free again: latency
	// that costs no capacity while the connections outnumber the requests
	// in flight.
	linger atomic.Int64 // ns
}

type pacedWorker struct{ done time.Time }

func startPaced(t *testing.T, workers int, service func(since time.Duration) time.Duration) *pacedServer {
	t.Helper()
	s := &pacedServer{service: service, pool: make(chan *pacedWorker, workers)}
	for range workers {
		s.pool <- &pacedWorker{}
	}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/"
	return s
}

func (s *pacedServer) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	s.mu.Lock()
	if s.first.IsZero() {
		s.first = arrived
	}
	first := s.first
	s.mu.Unlock()
	var wk *pacedWorker
	select {
	case wk = <-s.pool:
	case <-r.Context().Done():
		return
	}
	start := arrived
	if wk.done.After(start) {
		start = wk.done
	}
	wk.done = start.Add(s.service(start.Sub(first)))
	timer := time.NewTimer(time.Until(wk.done))
	select {
	case <-timer.C:
	case <-r.Context().Done():
		timer.Stop()
	}
	s.pool <- wk
	if d := time.Duration(s.linger.Load()); d > 0 {
		linger := time.NewTimer(d)
		select {
		case <-linger.C:
		case <-r.Context().Done():
			linger.Stop()
		}
	}
	w.Write([]byte("ok"))
}

// since returns the time since the server's first request.
func (s *pacedServer) since() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.first)
}

func fixed(d time.Duration) func(time.Duration) time.Duration {
	return func(time.Duration) time.Duration { return d }
}

// capacityConfig saturates a paced server: 16 connections on its few
// workers, runs of 600 ms; in-flight requests get 300 ms after the end (a
// request waits 16/2000 s = 8 ms at saturation).
func capacityConfig(url string) loadgen.Config {
	return loadgen.Config{URL: url, Connections: 16, Threads: 1, Duration: 600 * time.Millisecond, Timeout: 300 * time.Millisecond}
}

// attempts runs try until it finds nothing wrong, three times at most:
// the host is shared (other packages' tests, Tomcat among them, run
// beside this one), and a stall of a few hundred ms starves the server or
// the generator for one measurement.
func attempts(t *testing.T, try func(t *testing.T) []string) {
	t.Helper()
	var problems []string
	for attempt := 1; attempt <= 3; attempt++ {
		if problems = try(t); len(problems) == 0 {
			return
		}
		t.Logf("attempt %d does not match theory: %s", attempt, strings.Join(problems, "; "))
	}
	t.Errorf("no attempt matched theory: %s", strings.Join(problems, "; "))
}

// within reports a problem when got is not within tol (a fraction) of
// want.
func within(what string, want, got, tol float64) []string {
	if math.Abs(got-want) > tol*want {
		return []string{fmt.Sprintf("%s %.0f, want %.0f ± %.0f%%", what, got, want, 100*tol)}
	}
	return nil
}

// TestIntegrationCapacityKnown: 4 workers × 2 ms = 2000 requests/s; the
// saturating runs measure it within 10%, and the figure is the responses
// completed in the window over the window (Elapsed is Duration; the
// requests in flight at its end complete in the drain, counted apart).
func TestIntegrationCapacityKnown(t *testing.T) {
	timingTheory(t)
	testutil.StableCPUs(t)
	srv := startPaced(t, 4, fixed(2*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	attempts(t, func(t *testing.T) []string {
		c, err := loadgen.MeasureCapacity(ctx, capacityConfig(srv.URL), &loadgen.CapacityOptions{Repeat: 3})
		require.NoError(t, err)
		t.Logf("capacity %+v", c.Rate)
		assert.True(t, c.Saturated)
		require.Len(t, c.Runs, 3)
		for _, r := range c.Runs {
			t.Logf("run: %d requests in %s (%.0f/s), offered %.0f/s, missed %d, incomplete %d",
				r.Requests, r.Elapsed, r.AchievedRate, r.OfferedRate, r.Missed, r.Incomplete)
			assert.InEpsilon(t, float64(r.Requests)/r.Elapsed.Seconds(), r.AchievedRate, 1e-9)
			assert.Equal(t, 600*time.Millisecond, r.Elapsed)
			assert.Positive(t, r.Drain.Requests+r.Drain.Timeouts, "saturated: requests in flight at the end")
			assert.Greater(t, r.Missed, uint64(0))
		}
		return within("capacity", 2000, c.Rate.Median, 0.10)
	})
}

// TestIntegrationCapacityUplift: 2000 against 3000 requests/s is a real
// uplift; two identical servers, measured in turn, differ only by noise.
func TestIntegrationCapacityUplift(t *testing.T) {
	timingTheory(t)
	testutil.StableCPUs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a := startPaced(t, 4, fixed(2*time.Millisecond))
	b := startPaced(t, 6, fixed(2*time.Millisecond))
	a2 := startPaced(t, 4, fixed(2*time.Millisecond))

	// Runs alternate between the servers compared, so a change in the
	// host's load falls on both.
	interleaved := func(t *testing.T, n int, urls ...string) []stats.Spread {
		rates := make([][]float64, len(urls))
		for range n {
			for i, u := range urls {
				c, err := loadgen.MeasureCapacity(ctx, capacityConfig(u), nil)
				require.NoError(t, err)
				rates[i] = append(rates[i], c.Rate.Median)
			}
		}
		out := make([]stats.Spread, len(urls))
		for i := range urls {
			out[i] = stats.SpreadOf(rates[i])
		}
		return out
	}
	attempts(t, func(t *testing.T) []string {
		s := interleaved(t, 3, a.URL, b.URL)
		t.Logf("2000/s server %+v, 3000/s server %+v", s[0], s[1])
		u := stats.UpliftOf(s[0], s[1])
		if u.Noise {
			return []string{fmt.Sprintf("2000 → 3000 requests/s: %+.2f%% marked noise", u.Percent)}
		}
		return within("uplift %", 50, u.Percent, 0.2)
	})
	// Five runs each: two servers that perform the same have disjoint
	// ranges with probability 2·5!·5!/10! < 1%.
	attempts(t, func(t *testing.T) []string {
		s := interleaved(t, 5, a.URL, a2.URL)
		t.Logf("identical servers %+v, %+v", s[0], s[1])
		if u := stats.UpliftOf(s[0], s[1]); !u.Noise {
			return []string{fmt.Sprintf("identical servers: %+.2f%% not marked noise", u.Percent)}
		}
		return nil
	})
}

// TestIntegrationWarmUp: against a server whose capacity climbs over its
// first seconds (as a JIT compiles), the warm-up goes on until the climb
// ends; against a flat one it stops after two runs.
func TestIntegrationWarmUp(t *testing.T) {
	timingTheory(t)
	testutil.StableCPUs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ramp = 3 * time.Second
	opts := &loadgen.WarmUpOptions{Interval: 500 * time.Millisecond, Max: 12 * time.Second}
	attempts(t, func(t *testing.T) []string {
		// 4 workers: 8 ms per request at first (500/s), falling linearly
		// to 2 ms (2000/s) at ramp.
		climbing := startPaced(t, 4, falling(8*time.Millisecond, 2*time.Millisecond, ramp))
		w, err := loadgen.WarmUp(ctx, loadgen.Config{URL: climbing.URL, Connections: 16, Threads: 1}, opts)
		require.NoError(t, err)
		t.Logf("climbing: rates %.0f, stable %v after %s", w.Rates, w.Stable, w.Loaded)
		var problems []string
		if !w.Stable {
			problems = append(problems, "climbing: not stable")
		}
		if since := climbing.since(); since < ramp {
			problems = append(problems, fmt.Sprintf("climbing: the warm-up ended %s into a %s climb", since, ramp))
		}
		last := w.Rates[len(w.Rates)-1]
		if last < 2*w.Rates[0] {
			problems = append(problems, fmt.Sprintf("climbing: the rate did not climb: %.0f", w.Rates))
		}
		return append(problems, within("climbing: last rate", 2000, last, 0.10)...)
	})
	attempts(t, func(t *testing.T) []string {
		flat := startPaced(t, 4, fixed(2*time.Millisecond))
		w, err := loadgen.WarmUp(ctx, loadgen.Config{URL: flat.URL, Connections: 16, Threads: 1}, opts)
		require.NoError(t, err)
		t.Logf("flat: rates %.0f, stable %v after %s", w.Rates, w.Stable, w.Loaded)
		if !w.Stable || len(w.Rates) != 2 {
			return []string{fmt.Sprintf("flat: %d runs (stable %v): want stable after 2", len(w.Rates), w.Stable)}
		}
		return nil
	})
}
