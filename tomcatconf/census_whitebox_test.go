package tomcatconf

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/procstat"
)

func TestParseTaskStatReal(t *testing.T) {
	// This process's own threads, then the captured Tomcat ones.
	paths, err := filepath.Glob("/proc/self/task/*/stat")
	require.NoError(t, err)
	captured, err := filepath.Glob(filepath.Join("testdata", "tomcat10-root", "proc", "*", "task", "*", "stat"))
	require.NoError(t, err)
	require.Len(t, captured, 37)
	for _, p := range append(paths, captured...) {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		st, err := parseTaskStat(data)
		require.NoError(t, err, p)
		assert.NotEmpty(t, st.comm)
		comm, ticks, ok := statByHand(data)
		require.True(t, ok, "%s: %q", p, data)
		assert.Equal(t, taskStat{comm: comm, ticks: ticks}, st, p)
	}
	st, err := parseTaskStat([]byte("4677 (http-nio-8080-P) R 1 2 3 0 -1 4194368 10 0 0 0 7000 871 0 0 20 0 231 0 1 2 3"))
	require.NoError(t, err)
	assert.Equal(t, taskStat{comm: "http-nio-8080-P", ticks: 7871}, st)
	st, err = parseTaskStat([]byte("9 (a) b (c)) S 1 2 3 0 -1 0 0 0 0 0 5 6 0 0"))
	require.NoError(t, err)
	assert.Equal(t, "a) b (c)", st.comm)
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2", "1 (x) S 1 2 3 0 -1 0 0 0 0 0 a 6 0",
		"1 (x) S 1 2 3 0 -1 0 0 0 0 0 9223372036854775807 1 0"} {
		_, err := parseTaskStat([]byte(bad))
		assert.Error(t, err, bad)
	}
}

// statByHand reads a stat line as proc(5) describes it, apart from
// procstat: the comm between the first "(" and the last ")", then utime
// and stime, the 12th and 13th fields after it (fields 14 and 15 of the
// line). ok is false when the line has no such fields or their sum is not
// a count of ticks below 2^63.
func statByHand(data []byte) (comm string, ticks int64, ok bool) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 13 {
		return "", 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || u < 0 || s < 0 || u > math.MaxInt64-s {
		return "", 0, false
	}
	return string(data[open+1 : end]), u + s, true
}

func TestIntervalTicks(t *testing.T) {
	assert.Equal(t, int64(30), intervalTicks(taskStat{ticks: 70}, taskStat{ticks: 100}))
	// A thread that appeared during the interval.
	assert.Equal(t, int64(100), intervalTicks(taskStat{}, taskStat{ticks: 100}))
	// Its TID was reused by a new thread: not a negative CPU time.
	assert.Equal(t, int64(5), intervalTicks(taskStat{ticks: 900}, taskStat{ticks: 5}))
	assert.Equal(t, 250*time.Millisecond, procstat.Ticks(25))
	// 9.2e9 ticks, where ticks × 1e9 leaves int64: 2.9 years of CPU.
	assert.Equal(t, 92_000_000*time.Second, procstat.Ticks(9_200_000_000))
	assert.Equal(t, time.Duration(math.MaxInt64), procstat.Ticks(math.MaxInt64))
}

func TestParseSwitches(t *testing.T) {
	self, err := os.ReadFile("/proc/thread-self/status")
	require.NoError(t, err)
	vol, invol, err := parseSwitches(self)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, vol+invol, int64(0))
	vol, invol, err = parseSwitches([]byte("Name:\tjava\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t56\n"))
	require.NoError(t, err)
	assert.Equal(t, [2]int64{1234, 56}, [2]int64{vol, invol})
	_, _, err = parseSwitches([]byte("voluntary_ctxt_switches:\tmany\nnonvoluntary_ctxt_switches:\t1\n"))
	assert.ErrorContains(t, err, `voluntary_ctxt_switches "many": want a count`)
	_, _, err = parseSwitches([]byte("Name:\tjava\n"))
	assert.ErrorContains(t, err, "no voluntary_ctxt_switches")
}

func TestIntervalSwitches(t *testing.T) {
	vol, invol := intervalSwitches(taskStat{vol: 10, invol: 2}, taskStat{vol: 25, invol: 3})
	assert.Equal(t, [2]int64{15, 1}, [2]int64{vol, invol})
	// New thread, reused TID, unknown: from zero, from zero, none.
	vol, invol = intervalSwitches(taskStat{}, taskStat{vol: 7, invol: 1})
	assert.Equal(t, [2]int64{7, 1}, [2]int64{vol, invol})
	vol, invol = intervalSwitches(taskStat{vol: 900, invol: 9}, taskStat{vol: 5, invol: 9})
	assert.Equal(t, [2]int64{5, 9}, [2]int64{vol, invol})
	vol, invol = intervalSwitches(taskStat{vol: 1, invol: 1}, taskStat{vol: -1, invol: -1})
	assert.Equal(t, [2]int64{0, 0}, [2]int64{vol, invol})
}

func TestParseOpenFiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "tomcat10-root", "proc", "6083", "limits"))
	require.NoError(t, err)
	n, _, err := parseLimitsNoFile(data)
	require.NoError(t, err)
	assert.Equal(t, uint64(20000), n)
	self, err := os.ReadFile("/proc/self/limits")
	require.NoError(t, err)
	_, _, err = parseLimitsNoFile(self)
	require.NoError(t, err)
	_, _, err = parseLimitsNoFile([]byte("Max cpu time unlimited\n"))
	assert.Error(t, err)
}

func FuzzParseTaskStat(f *testing.F) {
	captured, _ := filepath.Glob(filepath.Join("testdata", "tomcat10-root", "proc", "*", "task", "*", "stat"))
	for _, p := range captured[:5] {
		d, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(d)
	}
	f.Add([]byte("1 (a)b) S"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseTaskStat(data)
		if err == nil {
			assert.True(t, bytes.Contains(data, []byte("("+st.comm+")")))
			comm, ticks, ok := statByHand(data)
			require.True(t, ok, "parsed %q, which has no utime and stime fields", data)
			assert.Equal(t, taskStat{comm: comm, ticks: ticks}, st)
		}
	})
}

func FuzzParseThreadDump(f *testing.F) {
	d, err := os.ReadFile(filepath.Join("testdata", "jcmd-thread-print-openjdk17-tomcat10.txt"))
	require.NoError(f, err)
	f.Add(d)
	f.Add([]byte(`"a \"b\"" #1 nid=12 runnable` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		names, err := parseThreadDump(bytes.NewReader(data))
		if err == nil {
			assert.NotEmpty(t, names)
			for tid := range names {
				assert.Positive(t, tid)
			}
		}
	})
}

func FuzzParseSwitches(f *testing.F) {
	if self, err := os.ReadFile("/proc/self/status"); err == nil {
		f.Add(self)
	}
	f.Add([]byte("voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vol, invol, err := parseSwitches(data)
		if err == nil && (vol < 0 || invol < 0) {
			t.Fatalf("negative switches %d %d from %q", vol, invol, data)
		}
	})
}
