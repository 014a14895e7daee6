//go:build linux

package study

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen/stats"
)

// TestStartConnections: the guide's ratio, 1280 connections for 192
// CPUs, rounded up; one a client at least; the bound 32 × the start,
// capped at Tomcat's default maxConnections.
func TestStartConnections(t *testing.T) {
	assert.Equal(t, 1280, StartConnections(192, 1), "the guide's wrk2 -c1280 on 192 CPUs")
	assert.Equal(t, 54, StartConnections(8, 1), "8 CPUs: 53⅓ rounded up")
	assert.Equal(t, 7, StartConnections(1, 1))
	assert.Equal(t, 7, StartConnections(0, 1), "an unknown count counts as one CPU")
	assert.Equal(t, 10, StartConnections(1, 10), "one connection a client at least")
	assert.Equal(t, 224, ConnectionsBound(7))
	assert.Equal(t, 1728, ConnectionsBound(54), "the guide's 1280 lies within the bound of its 8 CPUs")
	assert.Equal(t, MaxSizedConnections, ConnectionsBound(1280))
	assert.Equal(t, 9000, ConnectionsBound(9000), "never below the start")
}

// runsAround are four capacity runs spread 0.3 % around v.
func runsAround(v float64) []float64 {
	return []float64{v * 0.997, v * 0.999, v * 1.001, v * 1.003}
}

// TestSizeDecision: the decision on given figures. A doubling whose runs
// all beat the ones before by far is a growth, and the count doubles;
// one inside the noise band stops, saturated, on the doubled count; a
// loss keeps the count before; the bound, a run that kept up and a
// load-bound run stop, unsaturated.
func TestSizeDecision(t *testing.T) {
	try := func(conns int, capacity float64) SizeTry {
		return SizeTry{Connections: conns, Capacity: capacity, Runs: runsAround(capacity)}
	}
	tests := []struct {
		name      string
		tried     []SizeTry
		bound     int
		next      int
		conns     int
		saturated bool
		why       string
	}{
		{name: "first count: double", tried: []SizeTry{try(7, 1750)}, bound: 224, next: 14},
		{name: "first count at the bound", tried: []SizeTry{try(8192, 1750)}, bound: 8192, conns: 8192,
			why: "8192 connections is the bound: nothing to double to"},
		{name: "grew: double again", tried: []SizeTry{try(7, 1750), try(14, 3000)}, bound: 224, next: 28},
		{name: "grew: the next is capped at the bound", tried: []SizeTry{try(100, 1000), try(200, 2000)}, bound: 300, next: 300},
		{name: "within the band: saturated at the doubled count", tried: []SizeTry{try(7, 1750), try(14, 3000), try(28, 3003)}, bound: 224,
			conns: 28, saturated: true, why: "doubling 14 to 28 connections did not raise the capacity beyond the 1 % noise band"},
		{name: "a loss keeps the count before", tried: []SizeTry{try(14, 3000), try(28, 2500)}, bound: 224,
			conns: 14, saturated: true, why: "doubling 14 to 28 connections lowered the capacity"},
		{name: "still growing at the bound", tried: []SizeTry{try(112, 1000), try(224, 2000)}, bound: 224,
			conns: 224, why: "224 connections is the bound, the capacity still growing (+100.0 %"},
		{name: "kept up with the offered rate", tried: []SizeTry{{Connections: 7, Capacity: 100, Runs: runsAround(100), KeptUp: true}}, bound: 224,
			conns: 7, why: "kept up with the offered rate"},
		{name: "load-bound keeps the count before", tried: []SizeTry{try(7, 1750), {Connections: 14, Capacity: 3000, Runs: runsAround(3000), LoadBound: "load-bound: client CPU 99 % of 1 core"}},
			bound: 224, conns: 7, why: "the load generator limited the runs at 14 connections (load-bound: client CPU 99 % of 1 core)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, s, err := SizeDecision(tt.tried, tt.bound, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.next, next)
			require.Len(t, s.Tried, len(tt.tried), "the record holds every count tried")
			for i := range tt.tried {
				assert.Equal(t, tt.tried[i].Connections, s.Tried[i].Connections)
				assert.Equal(t, tt.tried[i].Runs, s.Tried[i].Runs)
			}
			if len(tt.tried) > 1 {
				require.NotNil(t, s.Tried[len(tt.tried)-1].Growth, "the last count's growth is judged")
			}
			if next > 0 {
				assert.Zero(t, s.Connections, "no outcome before the end")
				return
			}
			assert.Equal(t, tt.conns, s.Connections)
			assert.Equal(t, tt.saturated, s.Saturated)
			assert.Contains(t, s.Why, tt.why)
			assert.Equal(t, tt.tried[0].Connections, s.Start)
			assert.Equal(t, tt.bound, s.Bound)
		})
	}
	// Too few runs for the U test (one a count): the medians against the
	// band decide.
	one := func(conns int, v float64) SizeTry {
		return SizeTry{Connections: conns, Capacity: v, Runs: []float64{v}}
	}
	next, _, err := SizeDecision([]SizeTry{one(7, 1000), one(14, 1100)}, 224, nil)
	require.NoError(t, err)
	assert.Equal(t, 28, next, "+10 %: grows")
	next, s, err := SizeDecision([]SizeTry{one(7, 1000), one(14, 1005)}, 224, nil)
	require.NoError(t, err)
	assert.Zero(t, next)
	assert.True(t, s.Saturated, "+0.5 %: inside the band")
	assert.Equal(t, stats.VerdictTooFewRuns, s.Tried[1].Growth.Verdict)

	_, _, err = SizeDecision(nil, 224, nil)
	assert.Error(t, err)
}

// TestCPUMethodChoiceOf: auto picks affinity for a load on this host
// (this process or a namespace), hotplug for a load on clients and for a
// fixture root; a given method is used as given.
func TestCPUMethodChoiceOf(t *testing.T) {
	tests := []struct {
		name   string
		set    func(*Options)
		chosen string
		why    string
	}{
		{"auto, load in this process", func(*Options) {}, MethodAffinity, "the load runs on this host (in this process)"},
		{"auto, load in a namespace", func(o *Options) { o.LoadNetNS = "cli" }, MethodAffinity, "(in network namespace cli)"},
		{"auto, load on a client", func(o *Options) { o.LoadHost = "bench@client" }, MethodHotplug, "the load runs on bench@client (-load-host)"},
		{"auto, fixture root", func(o *Options) { o.Root = "/tmp/fixture" }, MethodHotplug, "a fixture -root, where no load runs"},
		{"hotplug given", func(o *Options) { o.CPUMethod = MethodHotplug }, MethodHotplug, "given"},
		{"affinity given with a client", func(o *Options) { o.CPUMethod, o.LoadHost = MethodAffinity, "client" }, MethodAffinity, "given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			require.Equal(t, MethodAuto, o.CPUMethod, "the default")
			tt.set(&o)
			c := CPUMethodChoiceOf(o)
			assert.Equal(t, o.CPUMethod, c.Requested)
			assert.Equal(t, tt.chosen, c.Chosen)
			assert.Equal(t, tt.chosen, o.Method())
			assert.Contains(t, c.Why, tt.why)
			assert.Contains(t, c.String(), tt.chosen+" (-cpu-method "+o.CPUMethod+": ")
		})
	}
}

// slowServer answers on 127.0.0.1 with workers requests at a time, each
// taking service; the others wait for a worker. Saturated, it completes
// workers/service requests a second, and no more than workers
// connections raise it: the knee is at workers connections. It keeps the
// most requests it held at once.
type slowServer struct {
	URL      string
	workers  chan struct{}
	service  time.Duration
	inFlight atomic.Int64
	peak     atomic.Int64
}

func startSlow(t *testing.T, workers int, service time.Duration) *slowServer {
	t.Helper()
	s := &slowServer{workers: make(chan struct{}, workers), service: service}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
		}
		select {
		case s.workers <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		time.Sleep(s.service)
		<-s.workers
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/"
	return s
}

// TestSizeLoadPaced sizes the load to a server whose knee is known: 12
// workers of 10 ms (1200 requests/s), from the 7 connections of one CPU.
// Whatever the noise, the count chosen is at or past the knee; the
// doubling went on only while the capacity grew beyond the noise band
// and stopped at the bound or when it no longer did; and the record is
// what was run: the counts doubled from the start, each with its runs,
// the server never held more requests than the largest count, and more
// than the first; every later load of the study uses the count chosen.
func TestSizeLoadPaced(t *testing.T) {
	testutil.StableCPUs(t)
	const knee = 12
	srv := startSlow(t, knee, 10*time.Millisecond)
	o := DefaultOptions()
	o.Repeat, o.Duration, o.WarmUp, o.WarmUpStep = 4, 500*time.Millisecond, time.Second, 250*time.Millisecond
	var log strings.Builder
	r := &run{h: Host{CPUs: CPUs{N: 1}}, o: o, log: &log, place: Placement{Tomcat: cpuset.Of(0)}, bound: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, r.sizeLoad(ctx, srv.URL, 0))
	t.Logf("%s", log.String())
	s := r.sizing
	require.NotNil(t, s)
	require.NotEmpty(t, s.Tried)

	assert.Equal(t, StartConnections(1, 1), s.Start)
	assert.Equal(t, ConnectionsBound(s.Start), s.Bound)
	assert.GreaterOrEqual(t, s.Connections, knee, "the count chosen is at or past the knee")
	assert.Equal(t, s.Connections, r.o.Connections, "the study's loads use the count chosen")
	assert.Equal(t, s.Connections, r.o.LoadConfig(srv.URL).Connections)

	runs := sizingRuns(o.Repeat, o.Alpha)
	for i, try := range s.Tried {
		want := s.Start
		if i > 0 {
			want = min(2*s.Tried[i-1].Connections, s.Bound)
		}
		assert.Equal(t, want, try.Connections, "count %d", i)
		assert.Len(t, try.Runs, runs, "%d connections", try.Connections)
		assert.Equal(t, stats.SpreadOf(try.Runs).Median, try.Capacity)
		assert.Empty(t, try.LoadBound, "%d connections: a light load", try.Connections)
		assert.False(t, try.KeptUp, "%d connections: 500000 req/s offered", try.Connections)
		if i == 0 {
			assert.Nil(t, try.Growth)
			continue
		}
		require.NotNil(t, try.Growth, "%d connections", try.Connections)
		if i < len(s.Tried)-1 {
			assert.True(t, grows(*try.Growth), "doubled again after %d connections only on a growth: %s", try.Connections, try.Growth)
		}
	}
	last := s.Tried[len(s.Tried)-1]
	atBound := last.Connections == s.Bound
	assert.True(t, atBound || (len(s.Tried) > 1 && !grows(*last.Growth)),
		"stopped at the bound or when the capacity no longer grew beyond the band: %s", s.Why)
	assert.Equal(t, !atBound, s.Saturated, s.Why)
	assert.Contains(t, log.String(), "load: "+s.Text()+"\n")

	peak := int(srv.peak.Load())
	assert.LessOrEqual(t, peak, last.Connections, "no more requests at once than connections")
	assert.Greater(t, peak, s.Start, "the doubled counts were run")
}
