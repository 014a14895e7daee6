package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cliflag"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

const seedURL = "http://10.0.0.1:8080/examples/servlets/servlet/HelloWorldExample"

func TestParseWrkArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		conn int
		thr  int
		rate float64
		dur  time.Duration
		lat  bool
		unc  bool
	}{
		{"the Arm guide's line verbatim", []string{"-c1280", "-t128", "-R500000", "-d60", seedURL}, 1280, 128, 500000, time.Minute, false, false},
		{"separate values, long options, SI units", []string{"-c", "64", "--threads=4", "--duration", "30s", "--rate", "15k", seedURL}, 64, 4, 15000, 30 * time.Second, false, false},
		{"minutes, grouped -LU, options after the URL", []string{seedURL, "-d1m", "-LU"}, 10, 2, 0, time.Minute, true, true},
		{"defaults: wrk's, closed loop", []string{seedURL}, 10, 2, 0, 10 * time.Second, false, false},
		{"--latency", []string{"--latency", "-d", "2", seedURL}, 10, 2, 0, 2 * time.Second, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := parseWrkArgs(tt.args)
			require.NoError(t, err)
			assert.Equal(t, seedURL, w.Config.URL)
			assert.Equal(t, tt.conn, w.Config.Connections)
			assert.Equal(t, tt.thr, w.Config.Threads)
			assert.Equal(t, tt.rate, w.Config.Rate)
			assert.Equal(t, tt.dur, w.Config.Duration)
			assert.Equal(t, tt.lat, w.Report.Latency)
			assert.Equal(t, tt.unc, w.Report.Uncorrected)
		})
	}
	w, err := parseWrkArgs([]string{"-H", "Accept: text/html", "--timeout", "5", "-H", "X-A:b", seedURL})
	require.NoError(t, err)
	assert.Equal(t, []loadgen.Header{{Name: "Accept", Value: "text/html"}, {Name: "X-A", Value: "b"}}, w.Config.Headers)
	assert.Equal(t, 5*time.Second, w.Config.Timeout)

	for _, bad := range [][]string{{"-x", seedURL}, {"-c"}, {"-c0", seedURL}, {"-c1", "-t2", seedURL}, {"-dforever", seedURL}, {"-R", "lots", seedURL}, {seedURL, seedURL}} {
		_, err := parseWrkArgs(bad)
		assert.True(t, errors.Is(err, cliflag.ErrUsage), "%q: %v", bad, err)
	}
	_, err = parseWrkArgs([]string{"-s", "x.lua", seedURL})
	assert.ErrorIs(t, err, errLuaScript)
	_, err = parseWrkArgs([]string{"ftp://127.0.0.1/"})
	assert.ErrorContains(t, err, "want an http:// or https:// URL")
	w, err = parseWrkArgs([]string{"--insecure", "https://127.0.0.1/"})
	require.NoError(t, err)
	assert.True(t, w.Config.Insecure)
}

func TestParseABArgs(t *testing.T) {
	a, err := parseABArgs([]string{"-k", "-n", "100000", "-c", "149", "http://192.168.5.44:8080/"})
	require.NoError(t, err)
	assert.Equal(t, int64(100000), a.Config.Requests)
	assert.Equal(t, 149, a.Config.Connections)
	assert.False(t, a.Config.DisableKeepAlive)
	assert.Equal(t, 30*time.Second, a.Config.Timeout)

	a, err = parseABArgs([]string{"-n100000", "-c149", "http://192.168.5.44:8080/"})
	require.NoError(t, err)
	assert.True(t, a.Config.DisableKeepAlive, "no keep-alive without -k, as ab")

	a, err = parseABArgs([]string{"-t", "5", "-c", "4", "-i", "-q", "http://127.0.0.1/"})
	require.NoError(t, err)
	assert.Equal(t, int64(50000), a.Config.Requests, "-t implies -n 50000")
	assert.Equal(t, 5*time.Second, a.Config.Duration)
	assert.Equal(t, "HEAD", a.Config.Method)
	assert.True(t, a.Quiet)

	body := filepath.Join(t.TempDir(), "post.json")
	require.NoError(t, os.WriteFile(body, []byte(`{"a":1}`), 0o644))
	a, err = parseABArgs([]string{"-p", body, "-T", "application/json", "http://127.0.0.1/"})
	require.NoError(t, err)
	assert.Equal(t, "POST", a.Config.Method)
	assert.Equal(t, []byte(`{"a":1}`), a.Config.Body)
	assert.Contains(t, a.Config.Headers, loadgen.Header{Name: "Content-Type", Value: "application/json"})

	_, err = parseABArgs([]string{"-n", "5", "-c", "10", "http://127.0.0.1/"})
	assert.ErrorIs(t, err, cliflag.ErrUsage)
	_, err = parseABArgs([]string{"-p", "/nonexistent/file", "http://127.0.0.1/"})
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// FuzzParseWrkArgs: the command-line parser never panics, and what it
// accepts is a config Run's validation accepts too.
func FuzzParseWrkArgs(f *testing.F) {
	f.Add("-c1280", "-t128", "-R500000", "-d60")
	f.Add("--latency", "-d", "1m", "-LU")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		w, err := parseWrkArgs([]string{a, b, c, d, seedURL})
		if err != nil {
			return
		}
		if w.Config.Connections <= 0 || w.Config.Threads <= 0 || w.Config.Duration <= 0 {
			t.Fatalf("accepted %+v", w.Config)
		}
	})
}

func TestParseWrkExtensions(t *testing.T) {
	w, err := parseWrkArgs([]string{"-R2000", "--slack", "500us", "--warmup", "2s", "-m", "POST", "--body", "x=1", "--json", seedURL})
	require.NoError(t, err)
	assert.Equal(t, 500*time.Microsecond, w.Config.Slack)
	assert.Equal(t, 2*time.Second, w.Config.Warmup)
	assert.Equal(t, "POST", w.Config.Method)
	assert.Equal(t, []byte("x=1"), w.Config.Body)
	assert.True(t, w.JSON)

	// --slack 0 sends every request at its own time; without --slack the
	// library's rate-aware window applies.
	w, err = parseWrkArgs([]string{"-R2000", "--slack", "0", seedURL})
	require.NoError(t, err)
	assert.Equal(t, loadgen.NoSlack, w.Config.Slack)
	w, err = parseWrkArgs([]string{"-R2000", seedURL})
	require.NoError(t, err)
	assert.Zero(t, w.Config.Slack)
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParseShard(t *testing.T) {
	i, n, err := parseShard("1/3", env(nil))
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 3}, [2]int{i, n})
	i, n, err = parseShard("4", env(map[string]string{"JOB_COMPLETION_INDEX": "2"}))
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 4}, [2]int{i, n}, "the index from a Kubernetes Indexed Job")
	for _, bad := range []string{"3/3", "-1/3", "a/3", "1/0", "1/", "4", ""} {
		_, _, err := parseShard(bad, env(nil))
		assert.True(t, errors.Is(err, cliflag.ErrUsage), bad)
	}
	_, _, err = parseShard("4", env(map[string]string{"JOB_COMPLETION_INDEX": "4"}))
	assert.ErrorContains(t, err, `index "4"`)
}

func TestParseStartAt(t *testing.T) {
	want := time.Date(2026, 12, 2, 18, 0, 0, 500e6, time.UTC)
	for _, s := range []string{"2026-12-02T18:00:00.5Z", "2026-12-02T19:00:00.5+01:00", "1796234400.5"} {
		got, err := parseStartAt(s)
		require.NoError(t, err, s)
		assert.True(t, want.Equal(got), "%s: %s", s, got)
	}
	for _, bad := range []string{"", "tomorrow", "-5", "2026-12-02 18:00"} {
		_, err := parseStartAt(bad)
		assert.ErrorContains(t, err, "RFC 3339", bad)
	}
}

func TestParseWrkShardHlogPlot(t *testing.T) {
	// Go-style single-dash long options, as the issue writes them, and GNU
	// double-dash ones.
	w, err := parseWrkArgs([]string{"-R30k", "-hlog", "a.hlog", "-plot=a.svg", "--shard", "2/3", "-start-at", "2026-12-02T18:00:00Z", "-c64", seedURL})
	require.NoError(t, err)
	assert.Equal(t, "a.hlog", w.Hlog)
	assert.Equal(t, "a.svg", w.Plot)
	assert.Equal(t, 2, w.Config.Shard)
	assert.Equal(t, 3, w.Config.Shards)
	assert.Equal(t, 30000.0, w.Config.Rate, "-R stays the total rate")
	assert.Equal(t, 64, w.Config.Connections)
	assert.Equal(t, int64(1796234400), w.Config.StartAt.Unix())
	_, err = parseWrkArgs([]string{"-shard", "0/2", seedURL})
	assert.ErrorContains(t, err, "give -R")
	// A grouped short option still parses as before.
	w, err = parseWrkArgs([]string{"-LU", "-c8", seedURL})
	require.NoError(t, err)
	assert.True(t, w.Report.Uncorrected)
}

func TestParseSweepArgs(t *testing.T) {
	a, err := parseSweepArgs([]string{"-c", "20,40,60,80", "-t4", "-d30", "--process", "java", "-plot", "s.svg", seedURL})
	require.NoError(t, err)
	assert.Equal(t, []int{20, 40, 60, 80}, a.Sweep.Connections)
	assert.Equal(t, 30*time.Second, a.Sweep.Duration)
	assert.Equal(t, defaultSweepWarmup, a.Sweep.Warmup)
	assert.Equal(t, "java", a.Process)
	assert.Equal(t, "s.svg", a.Plot)
	assert.Equal(t, seedURL, a.Sweep.Base.URL)
	assert.Equal(t, 4, a.Sweep.Base.Threads)

	a, err = parseSweepArgs([]string{"-R", "1k,2k,4k", "-c", "64", "--pid", "42", "--json", "--warmup", "0", seedURL})
	require.NoError(t, err)
	assert.Equal(t, []float64{1000, 2000, 4000}, a.Sweep.Rates)
	assert.Equal(t, 64, a.Sweep.Base.Connections)
	assert.Equal(t, 42, a.Sweep.PID)
	assert.Zero(t, a.Sweep.Warmup)
	assert.True(t, a.JSON)

	for _, bad := range [][]string{
		{seedURL}, {"-c", "8,4", seedURL}, {"-c", "8,x", seedURL}, {"-R", "1k", "-c", "8,16", seedURL},
		{"-c", "8", "--pid", "0", seedURL}, {"-c", "8", "-d0", seedURL},
	} {
		_, err := parseSweepArgs(bad)
		assert.True(t, errors.Is(err, cliflag.ErrUsage), "%q: %v", bad, err)
	}
}

func TestParseMergeArgs(t *testing.T) {
	a, err := parseMergeArgs([]string{"-o", "m.hlog", "a.hlog", "b.hlog"})
	require.NoError(t, err)
	assert.Equal(t, "m.hlog", a.Out)
	assert.Equal(t, report.TagCorrected, a.Tag)
	assert.Equal(t, []string{"a.hlog", "b.hlog"}, a.Files)
	a, err = parseMergeArgs([]string{"--tag", "lag", "a.hlog"})
	require.NoError(t, err)
	assert.Equal(t, "lag", a.Tag)
	_, err = parseMergeArgs(nil)
	assert.ErrorIs(t, err, cliflag.ErrUsage)
}

func FuzzParseSweepArgs(f *testing.F) {
	f.Add("-c", "20,40,60,80", "-d30")
	f.Add("-R", "1k,2k,4k", "-c64")
	f.Add("-shard", "1/3", "-R1000")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		s, err := parseSweepArgs([]string{a, b, c, seedURL})
		if err == nil {
			lv := append([]int(nil), s.Sweep.Connections...)
			for i := 1; i < len(lv); i++ {
				if lv[i] <= lv[i-1] {
					t.Fatalf("levels not increasing: %v", lv)
				}
			}
			if !s.Help && len(s.Sweep.Connections) == 0 && len(s.Sweep.Rates) == 0 {
				t.Fatalf("accepted a sweep without levels: %q %q %q", a, b, c)
			}
		}
		w, err := parseWrkArgs([]string{a, b, c, seedURL})
		if err == nil && w.Config.Shards > 0 && (w.Config.Shard < 0 || w.Config.Shard >= w.Config.Shards) {
			t.Fatalf("accepted shard %d/%d", w.Config.Shard, w.Config.Shards)
		}
		if i, n, err := parseShard(a, env(map[string]string{"JOB_COMPLETION_INDEX": b})); err == nil && (i < 0 || i >= n) {
			t.Fatalf("ParseShard(%q) = %d/%d", a, i, n)
		}
		_, _ = parseStartAt(c)
	})
}

func TestParseCompareArgs(t *testing.T) {
	a, err := parseCompareArgs([]string{"--cpu", "93.1,92.9", "base=a.json", "dir/step.json", "-plot", "c.svg"})
	require.NoError(t, err)
	assert.Equal(t, []namedFile{{Name: "base", Path: "a.json"}, {Name: "step", Path: "dir/step.json"}}, a.Runs)
	assert.Equal(t, []float64{93.1, 92.9}, a.CPU)
	assert.Equal(t, "c.svg", a.Plot)
	for _, bad := range [][]string{nil, {"--cpu", "101", "a.json"}, {"=a.json"}, {"--cpu", "1,2", "a.json"}} {
		_, err := parseCompareArgs(bad)
		assert.ErrorIs(t, err, cliflag.ErrUsage, "%q", bad)
	}
}

// Seeds 000-002's wrk2 command line, parsed.
func Example_parseWrkArgs() {
	w, err := parseWrkArgs([]string{"-c1280", "-t128", "-R500000", "-d60", "http://10.0.0.1:8080/"})
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Config.Connections, w.Config.Threads, w.Config.Rate, w.Config.Duration)
	// Output: 1280 128 500000 1m0s
}

// Seed 003's ab command line, parsed: ab's defaults apply.
func Example_parseABArgs() {
	a, err := parseABArgs([]string{"-k", "-n", "100000", "-c", "149", "http://192.168.5.44:8080/"})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Config.Requests, a.Config.Connections, "keep-alive:", !a.Config.DisableKeepAlive, "timeout:", a.Config.Timeout)
	// Output: 100000 149 keep-alive: true timeout: 30s
}

// A Kubernetes Indexed Job gives each pod its index in
// JOB_COMPLETION_INDEX: "-shard 3" then means "shard <index> of 3".
func Example_parseShard() {
	i, n, err := parseShard("3", func(string) string { return "2" })
	fmt.Println(i, n, err)
	i, n, err = parseShard("1/3", os.Getenv)
	fmt.Println(i, n, err)
	// Output:
	// 2 3 <nil>
	// 1 3 <nil>
}
