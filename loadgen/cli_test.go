package loadgen_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
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
		{"seeds 000-002 verbatim", []string{"-c1280", "-t128", "-R500000", "-d60", seedURL}, 1280, 128, 500000, time.Minute, false, false},
		{"separate values, long options, SI units", []string{"-c", "64", "--threads=4", "--duration", "30s", "--rate", "15k", seedURL}, 64, 4, 15000, 30 * time.Second, false, false},
		{"minutes, grouped -LU, options after the URL", []string{seedURL, "-d1m", "-LU"}, 10, 2, 0, time.Minute, true, true},
		{"defaults: wrk's, closed loop", []string{seedURL}, 10, 2, 0, 10 * time.Second, false, false},
		{"--latency", []string{"--latency", "-d", "2", seedURL}, 10, 2, 0, 2 * time.Second, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := loadgen.ParseWrkArgs(tt.args)
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
	w, err := loadgen.ParseWrkArgs([]string{"-H", "Accept: text/html", "--timeout", "5", "-H", "X-A:b", seedURL})
	require.NoError(t, err)
	assert.Equal(t, []loadgen.Header{{Name: "Accept", Value: "text/html"}, {Name: "X-A", Value: "b"}}, w.Config.Headers)
	assert.Equal(t, 5*time.Second, w.Config.Timeout)

	for _, bad := range [][]string{{"-x", seedURL}, {"-c"}, {"-c0", seedURL}, {"-c1", "-t2", seedURL}, {"-dforever", seedURL}, {"-R", "lots", seedURL}, {seedURL, seedURL}} {
		_, err := loadgen.ParseWrkArgs(bad)
		assert.True(t, errors.Is(err, loadgen.ErrUsage), "%q: %v", bad, err)
	}
	_, err = loadgen.ParseWrkArgs([]string{"-s", "x.lua", seedURL})
	assert.ErrorIs(t, err, loadgen.ErrLuaScript)
	_, err = loadgen.ParseWrkArgs([]string{"ftp://127.0.0.1/"})
	assert.ErrorContains(t, err, "want an http:// or https:// URL")
	w, err = loadgen.ParseWrkArgs([]string{"--insecure", "https://127.0.0.1/"})
	require.NoError(t, err)
	assert.True(t, w.Config.Insecure)
}

func TestParseABArgs(t *testing.T) {
	a, err := loadgen.ParseABArgs([]string{"-k", "-n", "100000", "-c", "149", "http://192.168.5.44:8080/"})
	require.NoError(t, err)
	assert.Equal(t, int64(100000), a.Config.Requests)
	assert.Equal(t, 149, a.Config.Connections)
	assert.False(t, a.Config.DisableKeepAlive)
	assert.Equal(t, 30*time.Second, a.Config.Timeout)

	a, err = loadgen.ParseABArgs([]string{"-n100000", "-c149", "http://192.168.5.44:8080/"})
	require.NoError(t, err)
	assert.True(t, a.Config.DisableKeepAlive, "no keep-alive without -k, as ab")

	a, err = loadgen.ParseABArgs([]string{"-t", "5", "-c", "4", "-i", "-q", "http://127.0.0.1/"})
	require.NoError(t, err)
	assert.Equal(t, int64(50000), a.Config.Requests, "-t implies -n 50000")
	assert.Equal(t, 5*time.Second, a.Config.Duration)
	assert.Equal(t, "HEAD", a.Config.Method)
	assert.True(t, a.Quiet)

	body := filepath.Join(t.TempDir(), "post.json")
	require.NoError(t, os.WriteFile(body, []byte(`{"a":1}`), 0o644))
	a, err = loadgen.ParseABArgs([]string{"-p", body, "-T", "application/json", "http://127.0.0.1/"})
	require.NoError(t, err)
	assert.Equal(t, "POST", a.Config.Method)
	assert.Equal(t, []byte(`{"a":1}`), a.Config.Body)
	assert.Contains(t, a.Config.Headers, loadgen.Header{Name: "Content-Type", Value: "application/json"})

	_, err = loadgen.ParseABArgs([]string{"-n", "5", "-c", "10", "http://127.0.0.1/"})
	assert.ErrorIs(t, err, loadgen.ErrUsage)
	_, err = loadgen.ParseABArgs([]string{"-p", "/nonexistent/file", "http://127.0.0.1/"})
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestParseTimeAndMetric(t *testing.T) {
	for in, want := range map[string]time.Duration{"60": time.Minute, "30s": 30 * time.Second, "1m": time.Minute, "2h": 2 * time.Hour, "1.5": 1500 * time.Millisecond, "500ms": 500 * time.Millisecond} {
		got, err := loadgen.ParseTime(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, want := range map[string]int64{"1280": 1280, "500k": 500000, "1M": 1000000, "2g": 2000000000} {
		got, err := loadgen.ParseMetric(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := loadgen.ParseMetric("-1")
	assert.ErrorIs(t, err, loadgen.ErrUsage)
	// Past int64 once multiplied: refused, not wrapped to a negative.
	for _, in := range []string{"9223372036854775807k", "9300000000G"} {
		_, err = loadgen.ParseMetric(in)
		assert.ErrorIs(t, err, loadgen.ErrUsage, in)
	}
	// Beyond a time.Duration's 292 years, or not finite: refused.
	for _, in := range []string{"1e300", "+Inf", "NaN", "9300000000"} {
		_, err = loadgen.ParseTime(in)
		assert.ErrorIs(t, err, loadgen.ErrUsage, in)
	}
}

// FuzzParseWrkArgs: the command-line parser never panics, and what it
// accepts is a config Run's validation accepts too.
func FuzzParseWrkArgs(f *testing.F) {
	f.Add("-c1280", "-t128", "-R500000", "-d60")
	f.Add("--latency", "-d", "1m", "-LU")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		w, err := loadgen.ParseWrkArgs([]string{a, b, c, d, seedURL})
		if err != nil {
			return
		}
		if w.Config.Connections <= 0 || w.Config.Threads <= 0 || w.Config.Duration <= 0 {
			t.Fatalf("accepted %+v", w.Config)
		}
	})
}

func TestParseWrkExtensions(t *testing.T) {
	w, err := loadgen.ParseWrkArgs([]string{"-R2000", "--slack", "500us", "--warmup", "2s", "-m", "POST", "--body", "x=1", "--json", seedURL})
	require.NoError(t, err)
	assert.Equal(t, 500*time.Microsecond, w.Config.Slack)
	assert.Equal(t, 2*time.Second, w.Config.Warmup)
	assert.Equal(t, "POST", w.Config.Method)
	assert.Equal(t, []byte("x=1"), w.Config.Body)
	assert.True(t, w.JSON)
}
