package hsperf_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tomcatconf/hsperf"
)

// snapLines renders s as jstat -snap does: name=value, strings in
// quotes (not escaped), the prologue as sun.perfdata.*, sorted.
func snapLines(s *hsperf.Snapshot) []string {
	out := []string{
		fmt.Sprintf("sun.perfdata.majorVersion=%d", s.Major),
		fmt.Sprintf("sun.perfdata.minorVersion=%d", s.Minor),
		fmt.Sprintf("sun.perfdata.overflow=%d", s.Overflow),
		fmt.Sprintf("sun.perfdata.size=%d", s.Size),
		fmt.Sprintf("sun.perfdata.timestamp=%d", s.Timestamp),
		fmt.Sprintf("sun.perfdata.used=%d", s.Used),
	}
	for _, c := range s.Counters {
		if c.Units == hsperf.UnitsString {
			out = append(out, c.Name+`="`+c.Text+`"`)
		} else {
			out = append(out, fmt.Sprintf("%s=%d", c.Name, c.Value))
		}
	}
	sort.Strings(out)
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	require.NoError(t, sc.Err())
	sort.Strings(out)
	return out
}

// TestParseAgainstJstat: every counter of real hsperfdata files (OpenJDK
// 17 with G1 and Parallel, Temurin 25) reads as jstat -snap
// file:///... printed it from the same file.
func TestParseAgainstJstat(t *testing.T) {
	files, err := filepath.Glob("testdata/*.hsperf")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := hsperf.ReadFile(f)
			require.NoError(t, err)
			assert.Equal(t, 2, s.Major)
			want := readLines(t, strings.TrimSuffix(f, ".hsperf")+".jstat-snap")
			assert.Equal(t, want, snapLines(s))
		})
	}
}

// snapValues reads a jstat -snap file as a map.
func snapValues(t *testing.T, path string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range readLines(t, path) {
		k, v, ok := strings.Cut(l, "=")
		require.True(t, ok, "%s: %q", path, l)
		m[k] = v
	}
	return m
}

func snapInt(t *testing.T, m map[string]string, k string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(m[k], 10, 64)
	require.NoError(t, err, "%s=%q", k, m[k])
	return v
}

// TestFigures: the collectors, compile time, safepoints and threads of
// the real files are jstat's counters, ticks over sun.os.hrt.frequency.
func TestFigures(t *testing.T) {
	for _, tt := range []struct {
		file       string
		collectors []string
	}{
		{"openjdk17-g1", []string{"G1 young collection pauses", "G1 full collection pauses", "G1 concurrent cycle pauses"}},
		{"openjdk17-parallel", []string{"Parallel young collection pauses", "Parallel full collection pauses"}},
		{"temurin25-g1", []string{"G1 young collection pauses", "G1 full collection pauses", "G1 concurrent cycle pauses"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			s, err := hsperf.ReadFile(filepath.Join("testdata", tt.file+".hsperf"))
			require.NoError(t, err)
			f, err := s.Figures()
			require.NoError(t, err)
			m := snapValues(t, filepath.Join("testdata", tt.file+".jstat-snap"))
			hz := snapInt(t, m, "sun.os.hrt.frequency")
			dur := func(k string) time.Duration {
				return time.Duration(float64(snapInt(t, m, k)) / float64(hz) * float64(time.Second))
			}
			var names []string
			var n int64
			var pause time.Duration
			for i, c := range f.Collectors {
				names = append(names, c.Name)
				p := fmt.Sprintf("sun.gc.collector.%d.", i)
				assert.Equal(t, snapInt(t, m, p+"invocations"), c.Collections, c.Name)
				assert.InDelta(t, dur(p+"time"), c.Time, 1, c.Name)
				n += c.Collections
				pause += c.Time
			}
			assert.Equal(t, tt.collectors, names)
			gotN, gotPause := f.GC()
			assert.Equal(t, n, gotN)
			assert.Equal(t, pause, gotPause)
			assert.Positive(t, gotN, "the test program collects")
			assert.InDelta(t, dur("java.ci.totalTime"), f.Compile, 1)
			assert.InDelta(t, dur("sun.rt.safepointTime"), f.SafepointTime, 1)
			assert.Equal(t, snapInt(t, m, "sun.rt.safepoints"), f.Safepoints)
			assert.Equal(t, snapInt(t, m, "java.threads.live"), f.Threads)
			args, ok := s.Text("java.rt.vmArgs")
			assert.True(t, ok)
			assert.Equal(t, strings.Trim(m["java.rt.vmArgs"], `"`), args)
			_, ok = s.Int("java.rt.vmArgs")
			assert.False(t, ok, "a string is no number")
		})
	}
}

// TestSub: a difference of one JVM's figures counts what happened
// between; figures of two JVMs (another collector set, or counts gone
// down after a restart) are refused, naming why.
func TestSub(t *testing.T) {
	g1 := hsperf.Figures{Collectors: []hsperf.Collector{{"G1 young collection pauses", 10, 50 * time.Millisecond}, {"G1 full collection pauses", 1, 20 * time.Millisecond}},
		Compile: time.Second, Safepoints: 40, SafepointTime: 80 * time.Millisecond, Threads: 30}
	later := hsperf.Figures{Collectors: []hsperf.Collector{{"G1 young collection pauses", 25, 90 * time.Millisecond}, {"G1 full collection pauses", 1, 20 * time.Millisecond}},
		Compile: 1500 * time.Millisecond, Safepoints: 70, SafepointTime: 130 * time.Millisecond, Threads: 45}
	d, err := later.Sub(g1)
	require.NoError(t, err)
	assert.Equal(t, hsperf.Figures{Collectors: []hsperf.Collector{{"G1 young collection pauses", 15, 40 * time.Millisecond}, {"G1 full collection pauses", 0, 0}},
		Compile: 500 * time.Millisecond, Safepoints: 30, SafepointTime: 50 * time.Millisecond, Threads: 45}, d)
	n, pause := d.GC()
	assert.Equal(t, int64(15), n)
	assert.Equal(t, 40*time.Millisecond, pause)

	_, err = g1.Sub(later)
	assert.ErrorContains(t, err, "G1 young collection pauses, compile or safepoint counters went down: the JVM restarted")
	par := hsperf.Figures{Collectors: []hsperf.Collector{{"Parallel young collection pauses", 1, 0}, {"Parallel full collection pauses", 0, 0}}}
	_, err = later.Sub(par)
	assert.ErrorContains(t, err, `collector 0 is "G1 young collection pauses" after, "Parallel young collection pauses" before`)
	_, err = later.Sub(hsperf.Figures{})
	assert.ErrorContains(t, err, "2 collectors after, 0 before")
}
