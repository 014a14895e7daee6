//go:build linux

package study

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tomcatconf/hsperf"
)

// systemCostServer serves a small page on 127.0.0.1; while heavy is set
// each request first maps 4 MiB of anonymous memory with MAP_POPULATE and
// unmaps it: system CPU of a known kind on every request (the kernel
// zeroes and frees 1024 pages), next to no user CPU, and none the race
// detector adds to (the pages are never touched from Go). 20000
// getppid(2) calls, as first written, cost about as much user time in
// Go's syscall path as system time (a gate run: user 62 → 992 µs against
// system 17 → 941 µs per request), and the reason named either.
func systemCostServer(t *testing.T, heavy *atomic.Bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if heavy.Load() {
			b, err := syscall.Mmap(-1, 0, 4<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			_ = syscall.Munmap(b)
		}
		_, _ = w.Write([]byte("Hello World!"))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// TestWhyKnownSystemCost: the reason line of a step that takes a known
// system-CPU cost off every request names system CPU, down; and a step
// that puts it back names it up. The cost probe reads this process (the
// server and the load generator in one) on every online CPU.
func TestWhyKnownSystemCost(t *testing.T) {
	var heavy atomic.Bool
	url := systemCostServer(t, &heavy)
	topo, err := numa.NewDefault().Topology()
	require.NoError(t, err)
	probe := costProbe{numa: numa.NewDefault(), pid: os.Getpid(), cpus: topo.Online}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	measure := func(h bool) StepCost {
		heavy.Store(h)
		a := probe.read()
		c, err := loadgen.MeasureCapacity(ctx, loadgen.Config{URL: url, Connections: 8, Duration: 700 * time.Millisecond},
			&loadgen.CapacityOptions{Rate: 1e6, Repeat: 2})
		require.NoError(t, err)
		return costOf(a, probe.read(), c, probe.cpus)
	}
	withCost, without, again := measure(true), measure(false), measure(true)
	for _, s := range []StepCost{withCost, without, again} {
		require.Positive(t, s.Requests)
		require.Positive(t, s.CPU.CPUs)
		// What could not be read: this process is no JVM.
		assert.Len(t, s.Missing, 2, "%q", s.Missing)
		assert.Contains(t, strings.Join(s.Missing, "\n"), hsperf.ErrNoCounters.Error())
		assert.Nil(t, s.JVM)
		assert.Positive(t, s.ITR())
		assert.GreaterOrEqual(t, s.CPU.Total(), s.CPU.Busy())
	}
	t.Logf("system µs per request: %.1f, %.1f, %.1f; user %.1f, %.1f, %.1f; ITR %.0f, %.0f, %.0f", withCost.perRequest(withCost.System),
		without.perRequest(without.System), again.perRequest(again.System), withCost.perRequest(withCost.User),
		without.perRequest(without.User), again.perRequest(again.User), withCost.ITR(), without.ITR(), again.ITR())
	down, up := whyOf(withCost, without), whyOf(without, again)
	t.Logf("why: %q, then %q", down, up)
	assert.Regexp(t, `^system CPU −\d+ % per request \(`, down)
	assert.Regexp(t, `^system CPU \+\d+(\.\d)?(×| %) per request \(`, up)
	assert.Greater(t, withCost.perRequest(withCost.System), 2*without.perRequest(without.System), "1024 pages zeroed cost more than a request")
}

// TestWhyOfValues: the reason names the state whose time per request
// moved most, says a GC pause or switch count that moved by more than
// half, and is empty without a CPU split.
func TestWhyOfValues(t *testing.T) {
	us := time.Microsecond
	cost := func(user, sys, irq, idle time.Duration, gc time.Duration, switches int64) StepCost {
		s := StepCost{Requests: 1000, User: 1000 * user, System: 1000 * sys, Voluntary: switches,
			CPU: numa.CPUSplit{CPUs: 1, User: 1000 * user, System: 1000 * sys, SoftIRQ: 1000 * irq, Idle: 1000 * idle}}
		if gc >= 0 {
			s.JVM = &hsperf.Figures{Collectors: []hsperf.Collector{{Name: "G1 young collection pauses", Collections: 3, Time: gc}}}
		}
		return s
	}
	base := cost(40*us, 30*us, 5*us, 5*us, 2*time.Millisecond, 2000)
	for _, tt := range []struct {
		name string
		cur  StepCost
		want string
	}{
		{"access log off", cost(38*us, 20*us, 5*us, 5*us, 2*time.Millisecond, 1900), "system CPU −33 % per request (30 → 20 µs of 80 → 68); context switches"},
		{"more GC", cost(52*us, 30*us, 5*us, 5*us, 6*time.Millisecond, 2000), "user CPU +30 % per request (40 → 52 µs of 80 → 92); GC pause +3.0×"},
		{"idle CPUs", cost(40*us, 30*us, 5*us, 25*us, -1, 2000), "idle CPU +5.0× per request (5.0 → 25 µs of 80 → 100)"},
		{"nothing moved", base, "user CPU ±0 % per request (40 → 40 µs of 80 → 80)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := whyOf(base, tt.cur)
			if strings.HasSuffix(tt.want, "context switches") {
				assert.Equal(t, tt.want[:strings.Index(tt.want, ";")], got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
	assert.Empty(t, whyOf(StepCost{}, base))
	assert.Empty(t, whyOf(base, StepCost{Requests: 10}))
}

// TestCostOfCensus: a reading of a JVM's threads (here this process)
// gives pools and switches; a restart between the readings (another PID)
// is named, not counted.
func TestCostOfCensus(t *testing.T) {
	a, err := tomcatconf.ReadThreads(os.Getpid(), nil)
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	b, err := tomcatconf.ReadThreads(os.Getpid(), nil)
	require.NoError(t, err)
	s := costOf(serverReading{threads: a}, serverReading{threads: b}, &loadgen.Capacity{}, numa.CPUs(0))
	assert.NotEmpty(t, s.Pools)
	assert.Empty(t, s.Missing)
	other := a
	other.PID = 1
	s = costOf(serverReading{threads: other}, serverReading{threads: b}, &loadgen.Capacity{}, numa.CPUs(0))
	assert.Empty(t, s.Pools)
	assert.Contains(t, strings.Join(s.Missing, ""), "want one process")
}

// TestDocumentCost: -json carries each measured step's warm-up (a step
// warmed up twice both), cost and reason; the reason compares a step with
// the one measured before it.
func TestDocumentCost(t *testing.T) {
	o := DefaultOptions()
	o.Apply = true
	res := realisticResults(t)
	doc := DocumentOf(o, res)
	byName := map[string]StepJSON{}
	for _, st := range doc.Steps {
		byName[st.Step] = st
	}
	base, al := byName["baseline"], byName[StepAccessLog]
	require.NotNil(t, base.Cost)
	require.NotNil(t, al.Cost)
	assert.Empty(t, base.Why, "nothing before the baseline")
	assert.Equal(t, "system CPU −39 % per request (11 → 6.9 µs of 33 → 29)", al.Why)
	assert.Equal(t, whyOf(res.Costs["baseline"], res.Costs[StepAccessLog]), al.Why)
	assert.InDelta(t, 22.0/1952000*1000, base.Cost.SystemPerRequest, 1e-9, "ms per request")
	assert.InDelta(t, 100*22.0/64, base.Cost.CPU.System, 1e-9)
	require.NotNil(t, base.Cost.JVM)
	assert.Equal(t, int64(40), base.Cost.JVM.Collections)
	assert.InDelta(t, 120.0, base.Cost.JVM.Pause, 1e-9)
	assert.Nil(t, byName[StepThreads].Cost, "a step without a cost has none")
	require.NotNil(t, base.WarmUp)
	assert.Len(t, base.WarmUp.Runs, 3)
	assert.InDelta(t, 31.0, *base.WarmUp.Runs[0].CompilerShare, 1e-9)
	assert.Nil(t, al.WarmUp)
	assert.Nil(t, al.WarmUpFirst)
	assert.False(t, al.Remeasured)

	require.NotNil(t, base.WarmUpFirst, "the unsettled baseline was warmed up twice")
	assert.True(t, base.Unsettled)
	assert.False(t, base.Remeasured)
	assert.False(t, base.WarmUpFirst.Settled)
	assert.InDelta(t, 60000.0, base.WarmUpFirst.Runs[0].Rate, 1e-9)
	nq := byName[StepNICQueues]
	assert.True(t, nq.Remeasured)
	assert.False(t, nq.Unsettled)
	require.NotNil(t, nq.WarmUpFirst)
	require.NotNil(t, nq.WarmUp)
	assert.False(t, nq.WarmUpFirst.Settled, "the first warm-up ended unsettled")
	assert.True(t, nq.WarmUp.Settled, "the second settled")
	require.Len(t, doc.Searches, 1)
	assert.True(t, doc.Searches[0].Candidates[1].Remeasured)
}

// TestCostBars: -plot's stacked bar per measured step is its cost per
// request by part, in µs, the parts adding up to the busy time of
// Tomcat's CPUs per request; a step without a cost has an empty bar, and
// a study with no cost at all draws no second chart.
func TestCostBars(t *testing.T) {
	res := realisticResults(t)
	bars := res.CostBars()
	require.Len(t, bars.Bars, len(res.Measured))
	assert.Len(t, bars.Parts, 5)
	base := bars.Bars[0]
	assert.Equal(t, "baseline", base.Name)
	require.Len(t, base.Values, 5)
	c := res.Costs["baseline"]
	assert.InDelta(t, 31e6/1952000, base.Values[0], 1e-9, "the JVM's user µs per request")
	assert.InDelta(t, 22e6/1952000, base.Values[1], 1e-9)
	assert.InDelta(t, 0, base.Values[2], 1e-9, "the JVM had its CPUs to itself")
	assert.InDelta(t, 3e6/1952000, base.Values[3], 1e-9)
	var total float64
	for _, v := range base.Values {
		total += v
	}
	assert.InDelta(t, float64(c.CPU.Busy().Microseconds())/1952000, total, 1e-9, "the parts are the busy time")
	assert.Equal(t, StepAccessLog, bars.Bars[1].Name)
	assert.NotEmpty(t, bars.Bars[1].Values)
	assert.Equal(t, StepThreads, bars.Bars[2].Name)
	assert.Empty(t, bars.Bars[2].Values, "no cost read for threads")

	res.Costs = nil
	assert.Empty(t, res.CostBars().Bars)

	var svg bytes.Buffer
	require.NoError(t, report.PlotSteps(&svg, "t", realisticResults(t).Comparison(), bars))
	assert.Contains(t, svg.String(), `data-part="JVM system"`)
}
