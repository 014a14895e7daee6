package loadgen_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParseShard(t *testing.T) {
	i, n, err := loadgen.ParseShard("1/3", env(nil))
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 3}, [2]int{i, n})
	i, n, err = loadgen.ParseShard("4", env(map[string]string{"JOB_COMPLETION_INDEX": "2"}))
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 4}, [2]int{i, n}, "the index from a Kubernetes Indexed Job")
	for _, bad := range []string{"3/3", "-1/3", "a/3", "1/0", "1/", "4", ""} {
		_, _, err := loadgen.ParseShard(bad, env(nil))
		assert.True(t, errors.Is(err, loadgen.ErrUsage), bad)
	}
	_, _, err = loadgen.ParseShard("4", env(map[string]string{"JOB_COMPLETION_INDEX": "4"}))
	assert.ErrorContains(t, err, `index "4"`)
}

func TestParseStartAt(t *testing.T) {
	want := time.Date(2026, 12, 2, 18, 0, 0, 500e6, time.UTC)
	for _, s := range []string{"2026-12-02T18:00:00.5Z", "2026-12-02T19:00:00.5+01:00", "1796234400.5"} {
		got, err := loadgen.ParseStartAt(s)
		require.NoError(t, err, s)
		assert.True(t, want.Equal(got), "%s: %s", s, got)
	}
	for _, bad := range []string{"", "tomorrow", "-5", "2026-12-02 18:00"} {
		_, err := loadgen.ParseStartAt(bad)
		assert.ErrorContains(t, err, "RFC 3339", bad)
	}
}

func TestParseWrkShardHlogPlot(t *testing.T) {
	// Go-style single-dash long options, as the issue writes them, and GNU
	// double-dash ones.
	w, err := loadgen.ParseWrkArgs([]string{"-R30k", "-hlog", "a.hlog", "-plot=a.svg", "--shard", "2/3", "-start-at", "2026-12-02T18:00:00Z", "-c64", seedURL})
	require.NoError(t, err)
	assert.Equal(t, "a.hlog", w.Hlog)
	assert.Equal(t, "a.svg", w.Plot)
	assert.Equal(t, 2, w.Config.Shard)
	assert.Equal(t, 3, w.Config.Shards)
	assert.Equal(t, 30000.0, w.Config.Rate, "-R stays the total rate")
	assert.Equal(t, 64, w.Config.Connections)
	assert.Equal(t, int64(1796234400), w.Config.StartAt.Unix())
	_, err = loadgen.ParseWrkArgs([]string{"-shard", "0/2", seedURL})
	assert.ErrorContains(t, err, "give -R")
	// A grouped short option still parses as before.
	w, err = loadgen.ParseWrkArgs([]string{"-LU", "-c8", seedURL})
	require.NoError(t, err)
	assert.True(t, w.Report.Uncorrected)
}

func TestParseSweepArgs(t *testing.T) {
	a, err := loadgen.ParseSweepArgs([]string{"-c", "20,40,60,80", "-t4", "-d30", "--process", "java", "-plot", "s.svg", seedURL})
	require.NoError(t, err)
	assert.Equal(t, []int{20, 40, 60, 80}, a.Sweep.Connections)
	assert.Equal(t, 30*time.Second, a.Sweep.Duration)
	assert.Equal(t, loadgen.DefaultSweepWarmup, a.Sweep.Warmup)
	assert.Equal(t, "java", a.Process)
	assert.Equal(t, "s.svg", a.Plot)
	assert.Equal(t, seedURL, a.Sweep.Base.URL)
	assert.Equal(t, 4, a.Sweep.Base.Threads)

	a, err = loadgen.ParseSweepArgs([]string{"-R", "1k,2k,4k", "-c", "64", "--pid", "42", "--json", "--warmup", "0", seedURL})
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
		_, err := loadgen.ParseSweepArgs(bad)
		assert.True(t, errors.Is(err, loadgen.ErrUsage), "%q: %v", bad, err)
	}
}

func TestParseMergeArgs(t *testing.T) {
	a, err := loadgen.ParseMergeArgs([]string{"-o", "m.hlog", "a.hlog", "b.hlog"})
	require.NoError(t, err)
	assert.Equal(t, "m.hlog", a.Out)
	assert.Equal(t, loadgen.TagCorrected, a.Tag)
	assert.Equal(t, []string{"a.hlog", "b.hlog"}, a.Files)
	a, err = loadgen.ParseMergeArgs([]string{"--tag", "lag", "a.hlog"})
	require.NoError(t, err)
	assert.Equal(t, "lag", a.Tag)
	_, err = loadgen.ParseMergeArgs(nil)
	assert.ErrorIs(t, err, loadgen.ErrUsage)
}

func FuzzParseSweepArgs(f *testing.F) {
	f.Add("-c", "20,40,60,80", "-d30")
	f.Add("-R", "1k,2k,4k", "-c64")
	f.Add("-shard", "1/3", "-R1000")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		s, err := loadgen.ParseSweepArgs([]string{a, b, c, seedURL})
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
		w, err := loadgen.ParseWrkArgs([]string{a, b, c, seedURL})
		if err == nil && w.Config.Shards > 0 && (w.Config.Shard < 0 || w.Config.Shard >= w.Config.Shards) {
			t.Fatalf("accepted shard %d/%d", w.Config.Shard, w.Config.Shards)
		}
		if i, n, err := loadgen.ParseShard(a, env(map[string]string{"JOB_COMPLETION_INDEX": b})); err == nil && (i < 0 || i >= n) {
			t.Fatalf("ParseShard(%q) = %d/%d", a, i, n)
		}
		_, _ = loadgen.ParseStartAt(c)
	})
}
