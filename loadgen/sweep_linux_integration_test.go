package loadgen_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// poolServer answers on 127.0.0.1 with a fixed pool of workers, each
// taking service per request: its capacity is workers/service requests per
// second, and a closed loop of c connections gets min(c, workers)/service
// with a mean latency of service·max(1, c/workers).
func poolServer(t *testing.T, workers int, service time.Duration) string {
	t.Helper()
	pool := make(chan struct{}, workers)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pool <- struct{}{}
		time.Sleep(service)
		<-pool
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func TestIntegrationSweepKnee(t *testing.T) {
	timingTheory(t)
	testutil.StableCPUs(t)
	const workers, service = 4, 20 * time.Millisecond
	url := poolServer(t, workers, service)
	// The host is shared (CI runs other packages' tests, Tomcat among
	// them, beside this one): a stall of a few hundred ms can ruin one
	// level, so the sweep gets three attempts to match theory.
	var problems []string
	for attempt := 1; attempt <= 3; attempt++ {
		res := sweepPool(t, url)
		t.Logf("attempt %d:\n%s", attempt, res.Text())
		if problems = kneeProblems(res, workers, service); len(problems) == 0 {
			return
		}
		t.Logf("attempt %d does not match theory: %s", attempt, strings.Join(problems, "; "))
	}
	t.Errorf("no sweep matched theory: %s", strings.Join(problems, "; "))
}

func sweepPool(t *testing.T, url string) *loadgen.SweepResult {
	t.Helper()
	var seen []string
	res, err := loadgen.Sweep(context.Background(), loadgen.SweepConfig{
		Base:        loadgen.Config{URL: url, Threads: 2},
		Connections: []int{1, 2, 4, 8, 16},
		Warmup:      300 * time.Millisecond, Duration: 1500 * time.Millisecond,
		PID: os.Getpid(),
		// In theory each level doubles throughput (+100%) up to the pool
		// size and adds nothing after it, while latency stays flat and
		// then doubles: thresholds halfway leave room for a shared CPU.
		Knee:    &loadgen.KneeOptions{MinGain: 25, MinLatencyRise: 50},
		OnLevel: func(l loadgen.SweepLevel) { seen = append(seen, l.Name) },
	})
	require.NoError(t, err)
	require.Len(t, res.Levels, 5)
	assert.Equal(t, []string{"c=1", "c=2", "c=4", "c=8", "c=16"}, seen)
	for _, l := range res.Levels {
		assert.Zero(t, l.Errors, l.Name)
		assert.Greater(t, l.Host.Percent, 0.0, l.Name)
		assert.Greater(t, l.Process.Cores, 0.0, "%s: the test process serves and loads", l.Name)
		assert.Equal(t, l.Process.Percent, l.CPU, "%s: CPU is the process's when a PID is given", l.Name)
		assert.InDelta(t, l.Throughput/(l.CPU/100), l.ITR(), 1e-6)
	}
	js, err := res.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(js), `"knee": `)
	assert.Len(t, report.SweepSeries(res), 5)
	return res
}

// kneeProblems compares a sweep of the pool server with theory.
func kneeProblems(res *loadgen.SweepResult, workers int, service time.Duration) []string {
	var p []string
	for _, l := range res.Levels {
		want := min(l.Load, float64(workers)) / service.Seconds()
		// Never above the pool's capacity; below it by the server's and
		// the client's overhead (sleeps overshoot and wake-ups come late
		// on a busy host: with two CPU hogs beside it and the race
		// detector, c=1 got 0.69 of theory here).
		if l.Throughput > want*1.02 || l.Throughput < want*0.5 {
			p = append(p, fmt.Sprintf("%s: %.1f req/s, theory min(c, %d)/%s = %.0f", l.Name, l.Throughput, workers, service, want))
		}
	}
	// Past 4 connections the pool is saturated: 8 and 16 add queueing
	// only (mean latency 40 ms, 80 ms) at the same 200 req/s.
	if res.Analysis.Knee != 2 {
		p = append(p, fmt.Sprintf("knee at level %d, theory: 2 (c=4, the pool size)", res.Analysis.Knee))
	} else if !strings.Contains(res.Text(), "the knee is at c=4") {
		p = append(p, "the findings do not name c=4")
	}
	if m := res.Levels[4].Mean; m < 4*service*9/10 {
		p = append(p, fmt.Sprintf("c=16: mean %s, theory 4 × %s", m, service))
	}
	return p
}

func TestSweepErrors(t *testing.T) {
	_, err := loadgen.Sweep(context.Background(), loadgen.SweepConfig{Base: loadgen.Config{URL: "http://127.0.0.1:1/"}})
	assert.ErrorContains(t, err, "either connection levels or rate levels")
	_, err = loadgen.Sweep(context.Background(), loadgen.SweepConfig{Base: loadgen.Config{URL: "http://127.0.0.1:1/", StartAt: time.Now().Add(time.Hour)}, Connections: []int{1}})
	assert.ErrorContains(t, err, "StartAt is for one run")
	_, err = loadgen.Sweep(context.Background(), loadgen.SweepConfig{Base: loadgen.Config{URL: "http://127.0.0.1:1/"}, Connections: []int{1}, PID: 1 << 30})
	assert.ErrorContains(t, err, "process 1073741824")
}

// TestIntegrationIntervalHlog records a run's intervals as an .hlog, reads
// it back and checks the three tags add up to the run's own histograms.
func TestIntegrationIntervalHlog(t *testing.T) {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	var buf bytes.Buffer
	rec := report.NewHlogRecorder(&buf, "loadgen -R1000 -d2.5")
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL: hello.URL, Connections: 8, Rate: 1000, Duration: 2500 * time.Millisecond,
		Warmup: 200 * time.Millisecond, OnInterval: rec.Record,
	})
	require.NoError(t, err)
	require.NoError(t, rec.Err())
	assert.Contains(t, buf.String(), "#[Histogram log format version 1.3]")
	// HdrHistogram's own Go log reader reads it, tags and all.
	hr := hdrhistogram.NewHistogramLogReader(bytes.NewReader(buf.Bytes()))
	counts := map[string]int64{}
	for {
		h, err := hr.NextIntervalHistogram()
		require.NoError(t, err)
		if h == nil {
			break
		}
		counts[h.Tag()] += h.TotalCount()
	}
	assert.Equal(t, map[string]int64{
		report.TagCorrected: int64(res.Requests), report.TagUncorrected: int64(res.Requests), report.TagLag: int64(res.Sent),
	}, counts)
	log, err := report.ReadHlog(&buf)
	require.NoError(t, err)
	assert.WithinDuration(t, res.Start, log.StartTime, time.Millisecond)
	for _, c := range []struct {
		tag  string
		want int64
	}{{report.TagCorrected, res.Histograms.Latency.TotalCount()}, {report.TagUncorrected, res.Histograms.Service.TotalCount()}, {report.TagLag, res.Histograms.Lag.TotalCount()}} {
		h, first, last := log.Total(c.tag)
		require.NotNil(t, h, c.tag)
		assert.Equal(t, c.want, h.TotalCount(), c.tag)
		assert.WithinDuration(t, res.Start, first, time.Millisecond, c.tag)
		assert.InDelta(t, 2.5, last.Sub(first).Seconds(), 0.1, c.tag)
	}
	h, _, _ := log.Total(report.TagCorrected)
	assert.True(t, h.Equals(res.Histograms.Latency), "the intervals' union is the run's corrected histogram")
	s, _, _ := log.Total(report.TagUncorrected)
	assert.True(t, s.Equals(res.Histograms.Service))
	// One interval per second: 0-1, 1-2, 2-2.5 (+ responses after the end).
	var lengths []float64
	for _, iv := range log.Intervals {
		if iv.Tag == report.TagCorrected {
			lengths = append(lengths, iv.End.Sub(iv.Start).Seconds())
		}
	}
	require.Len(t, lengths, 3)
	assert.InDelta(t, 1, lengths[0], 0.002)
	assert.InDelta(t, 1, lengths[1], 0.002)
}

func TestShardPacerUnion(t *testing.T) {
	whole := loadgen.Constant(3000)
	const n = 3
	var union []time.Duration
	for i := 0; i < n; i++ {
		p := loadgen.Shard(whole, i, n)
		assert.Equal(t, 1000.0, p.Rate(0))
		assert.InDelta(t, float64(time.Duration(i)*time.Second/3000), float64(p.Due(0)), 1, "shard %d is offset by i/R", i)
		for k := uint64(0); p.Due(k) < time.Second; k++ {
			union = append(union, p.Due(k))
			assert.Greater(t, p.Hits(p.Due(k)), k, "Hits(Due(k)) > k")
		}
		assert.Equal(t, uint64(1000), p.Hits(time.Second-time.Nanosecond))
	}
	require.Len(t, union, 3000)
	seen := map[time.Duration]bool{}
	for _, d := range union {
		seen[d] = true
	}
	for k := uint64(0); k < 3000; k++ {
		assert.True(t, seen[whole.Due(k)], "request %d of the whole schedule is sent by one shard", k)
	}
	assert.Equal(t, "shard 1/3 of constant 3000/s", loadgen.Shard(whole, 1, 3).String())
}

func TestShardConfigErrors(t *testing.T) {
	for _, c := range []loadgen.Config{
		{URL: "http://127.0.0.1:1/", Shard: 1, Shards: 3},                              // closed loop
		{URL: "http://127.0.0.1:1/", Rate: 100, Shard: 3, Shards: 3},                   // out of range
		{URL: "http://127.0.0.1:1/", Rate: 100, Shard: -1, Shards: 3},                  // negative
		{URL: "http://127.0.0.1:1/", Rate: 100, StartAt: time.Now().Add(-time.Minute)}, // passed
	} {
		_, err := loadgen.Run(context.Background(), c)
		assert.Error(t, err, "%+v", c)
	}
}

// TestShardHelperProcess is one shard when re-executed by
// TestIntegrationShardsThreeProcesses; otherwise it does nothing.
func TestShardHelperProcess(t *testing.T) {
	spec := os.Getenv("LOADGEN_TEST_SHARD")
	if spec == "" {
		t.Skip("run by TestIntegrationShardsThreeProcesses")
	}
	f := strings.Split(spec, " ") // URL rate shard shards startUnixNano out
	rate, _ := strconv.ParseFloat(f[1], 64)
	shard, _ := strconv.Atoi(f[2])
	shards, _ := strconv.Atoi(f[3])
	ns, _ := strconv.ParseInt(f[4], 10, 64)
	out, err := os.Create(f[5])
	require.NoError(t, err)
	defer out.Close()
	rec := report.NewHlogRecorder(out, "shard "+f[2])
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL: f[0], Connections: 16, Threads: 1, Rate: rate, Shard: shard, Shards: shards,
		StartAt: time.Unix(0, ns), Warmup: shardWarmup, Duration: shardDuration, OnInterval: rec.Record,
	})
	require.NoError(t, err)
	require.NoError(t, rec.Err())
	fmt.Printf("shard %d: %d requests, %d errors, %d missed, %d drained\n", shard, res.Requests, res.Errors.Socket()+res.Errors.Status, res.Missed, res.Drain.Requests)
}

const shardDuration, shardWarmup = 2 * time.Second, 500 * time.Millisecond

// TestIntegrationShardsThreeProcesses runs three shards as three processes
// against one server, merges their logs, and checks what holds on every
// run: the shards started at the shared time; their counts add up to the
// whole rate's exactly, as one process's do; the merge loses nothing when
// written and read back; and each merged quantile lies between the
// shards' own. It compares no figure of one run with another's: two
// latency percentiles measured seconds apart differ by what the host did
// meanwhile (a factor of 9 was seen at p90 on this 2-core machine).
func TestIntegrationShardsThreeProcesses(t *testing.T) {
	testutil.StableCPUs(t)
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	rate := 3000.0
	if raceEnabled {
		rate = 600
	}
	dir := t.TempDir()
	start := time.Now().Add(2 * time.Second) // time for three processes to start on a busy host
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 0; i < 3; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestShardHelperProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), fmt.Sprintf("LOADGEN_TEST_SHARD=%s %g %d 3 %d %s", hello.URL, rate, i, start.UnixNano(), filepath.Join(dir, fmt.Sprintf("shard%d.hlog", i))))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	var logs []*report.IntervalLog
	var drained int64
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "shard %d:\n%s", i, outs[i])
		line := strings.TrimSpace(grepLine(outs[i].String(), "shard "))
		t.Logf("%s", line)
		var n, req, errs, missed, d int64
		_, err := fmt.Sscanf(line, "shard %d: %d requests, %d errors, %d missed, %d drained", &n, &req, &errs, &missed, &d)
		require.NoError(t, err, "shard %d: %q", i, line)
		drained += d
		hf, err := os.Open(filepath.Join(dir, fmt.Sprintf("shard%d.hlog", i)))
		require.NoError(t, err)
		l, err := report.ReadHlog(hf)
		hf.Close()
		require.NoError(t, err)
		logs = append(logs, l)
	}
	merged, err := report.MergeHlogs(report.TagCorrected, logs...)
	require.NoError(t, err)
	for i, l := range logs {
		assert.WithinDuration(t, start.Add(shardWarmup), l.StartTime, time.Millisecond, "shard %d started at the shared time", i)
	}

	single, err := loadgen.Run(context.Background(), loadgen.Config{URL: hello.URL, Connections: 48, Threads: 2, Rate: rate, Warmup: shardWarmup, Duration: shardDuration})
	require.NoError(t, err)
	require.Zero(t, single.Missed)
	want := int64(rate * shardDuration.Seconds())
	// A response to a request due at the very end may complete after the
	// window: it is counted in the drain, not in the histograms.
	require.Equal(t, want, single.Histograms.Latency.TotalCount()+int64(single.Drain.Requests), "one process at R")
	require.Equal(t, want, merged.Total.TotalCount()+drained, "three shards at R/3, merged: the same count exactly")
	var out bytes.Buffer
	require.NoError(t, report.WriteHlog(&out, &merged.Log))
	back, err := report.ReadHlog(&out)
	require.NoError(t, err)
	h, _, _ := back.Total(report.TagCorrected)
	assert.True(t, h.Equals(merged.Total), "a merged log written and read back loses nothing")

	for _, q := range []float64{50, 90, 99, 99.9} {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, l := range logs {
			sh, _, _ := l.Total(report.TagCorrected)
			v := sh.ValueAtQuantile(q)
			lo, hi = min(lo, v), max(hi, v)
		}
		m := merged.Total.ValueAtQuantile(q)
		t.Logf("p%g: shards %d-%dµs, merged %dµs (one process at R: %dµs)", q, lo, hi, m, single.Histograms.Latency.ValueAtQuantile(q))
		assert.True(t, lo <= m && m <= hi, "p%g: merged %dµs outside the shards' [%d, %d]", q, m, lo, hi)
	}
}

func grepLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestFiguresOf(t *testing.T) {
	r := &loadgen.Result{Connections: 8, Requests: 4, AchievedRate: 40, Histograms: loadgen.Histograms{Latency: loadgen.NewHistogram()}}
	r.Errors.Connect, r.Errors.Timeout, r.Errors.Status = 1, 2, 3
	for _, us := range []int64{100, 200, 300, 10000} {
		require.NoError(t, r.Histograms.Latency.RecordValue(us))
	}
	f := loadgen.FiguresOf("base", r)
	assert.Equal(t, "base", f.Name)
	assert.Equal(t, 8.0, f.Load)
	assert.Equal(t, int64(6), f.Errors, "every error class")
	assert.Equal(t, 40.0, f.Throughput)
	assert.Equal(t, 200*time.Microsecond, f.P50)
	assert.InDelta(t, float64(10*time.Millisecond), float64(f.Max), float64(10*time.Microsecond))
	assert.InDelta(t, float64(2650*time.Microsecond), float64(f.Mean), float64(5*time.Microsecond))
	r.Pacer, r.OfferedRate = "constant 50/s", 50
	assert.Equal(t, 50.0, loadgen.FiguresOf("x", r).Load)
}

// thrashServer answers after service·max(1, (n/workers)²), n being the
// requests in flight when one arrives: past workers, contention costs more
// than it serves, so a closed loop of c > workers connections gets
// workers²/(c·service) — throughput falls as load rises (over-drive).
func thrashServer(t *testing.T, workers int, service time.Duration) string {
	t.Helper()
	var mu sync.Mutex
	inflight := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inflight++
		n := inflight
		mu.Unlock()
		f := max(1, float64(n)/float64(workers))
		time.Sleep(time.Duration(float64(service) * f * f))
		mu.Lock()
		inflight--
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func TestIntegrationSweepOverdrive(t *testing.T) {
	timingTheory(t)
	testutil.StableCPUs(t)
	const workers, service = 4, 20 * time.Millisecond
	url := thrashServer(t, workers, service)
	var problems []string
	for attempt := 1; attempt <= 3; attempt++ {
		res, err := loadgen.Sweep(context.Background(), loadgen.SweepConfig{
			Base:        loadgen.Config{URL: url, Threads: 2},
			Connections: []int{2, 4, 8, 16},
			Warmup:      300 * time.Millisecond, Duration: 1500 * time.Millisecond,
			Knee: &loadgen.KneeOptions{MinGain: 25, MinLatencyRise: 50, Noise: 10},
		})
		require.NoError(t, err)
		t.Logf("attempt %d:\n%s", attempt, res.Text())
		problems = nil
		// Theory: 100, 200, 100, 50 requests/s.
		for _, l := range res.Levels {
			c := l.Load
			want := c / service.Seconds()
			if c > workers {
				want = workers * workers / (c * service.Seconds())
			}
			if l.Throughput > want*1.1 || l.Throughput < want*0.6 {
				problems = append(problems, fmt.Sprintf("%s: %.1f req/s, theory %.0f", l.Name, l.Throughput, want))
			}
		}
		if res.Analysis.Best != 1 || res.Analysis.Knee != 1 || res.Analysis.Overdriven != 2 {
			problems = append(problems, fmt.Sprintf("best %d, knee %d, over-driven %d; theory 1, 1, 2", res.Analysis.Best, res.Analysis.Knee, res.Analysis.Overdriven))
		} else if !strings.Contains(res.Text(), "c=8 over-drives the system") {
			problems = append(problems, "the findings do not name c=8 as over-driving")
		}
		if len(problems) == 0 {
			return
		}
		t.Logf("attempt %d does not match theory: %s", attempt, strings.Join(problems, "; "))
	}
	t.Errorf("no sweep matched theory: %s", strings.Join(problems, "; "))
}
