package loadgen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

func hist(values ...int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, v := range values {
		h.RecordValue(v)
	}
	return h
}

func TestHlogRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 2, 16, 0, 0, 250_000_000, time.UTC)
	var buf bytes.Buffer
	w, err := loadgen.NewHlogWriter(&buf, start, "loadgen -c64 -R15000 -d10 http://127.0.0.1:8080/")
	require.NoError(t, err)
	var want []loadgen.Interval
	for i := 0; i < 3; i++ {
		s := start.Add(time.Duration(i) * time.Second)
		for _, tag := range []string{loadgen.TagCorrected, loadgen.TagUncorrected, loadgen.TagLag} {
			iv := loadgen.Interval{Tag: tag, Start: s, End: s.Add(time.Second), Hist: hist(120, 130, int64(1000*(i+1)), 250_000)}
			require.NoError(t, w.Write(iv))
			want = append(want, iv)
		}
	}
	text := buf.String()
	assert.True(t, strings.HasPrefix(text, "#[loadgen -c64 -R15000 -d10 http://127.0.0.1:8080/]\n#[Histogram log format version 1.3]\n#[StartTime: 1796227200.250 (seconds since epoch), 2026-12-02T16:00:00Z]\n\"StartTimestamp\""), text)
	assert.Contains(t, text, "\nTag=lag,2.000,1.000,250.111,HISTF")

	got, err := loadgen.ReadHlog(strings.NewReader(text))
	require.NoError(t, err)
	assert.True(t, got.StartTime.Equal(start))
	assert.Equal(t, []string{"loadgen -c64 -R15000 -d10 http://127.0.0.1:8080/"}, got.Comments)
	require.Len(t, got.Intervals, len(want))
	for i := range want {
		assert.Equal(t, want[i].Tag, got.Intervals[i].Tag)
		assert.True(t, want[i].Start.Equal(got.Intervals[i].Start), "%v != %v", want[i].Start, got.Intervals[i].Start)
		assert.True(t, want[i].End.Equal(got.Intervals[i].End))
		assert.True(t, want[i].Hist.Equals(got.Intervals[i].Hist), "interval %d histogram differs", i)
	}
	total, first, last := got.Total(loadgen.TagCorrected)
	assert.Equal(t, int64(12), total.TotalCount())
	assert.Equal(t, 3*time.Second, last.Sub(first))

	// Bad input names the line.
	_, err = loadgen.ReadHlog(strings.NewReader("#[StartTime: 1.0 (x)]\n0.1,1.0,2.0,NOTBASE64\n"))
	require.ErrorContains(t, err, "hlog line 2: histogram payload")
	_, err = loadgen.ReadHlog(strings.NewReader("0.1,1.0\n"))
	require.ErrorContains(t, err, "hlog line 1: expected StartTimestamp,Interval_Length,Interval_Max,Interval_Compressed_Histogram")
	require.Error(t, w.Write(loadgen.Interval{Tag: "a b", Hist: hist(1)}))
}

// TestReadHlogFromHdrHistogram reads logs written by HdrHistogram's own
// tools (jHiccup, the Java library), shipped in hdrhistogram-go's module.
func TestReadHlogFromHdrHistogram(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/HdrHistogram/hdrhistogram-go").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("skipped: hdrhistogram-go module directory not found: %v", err)
	}
	tests := []struct {
		file      string
		intervals int
		tags      []string
	}{
		{file: "jHiccup-2.0.7S.logV2.hlog", intervals: 62, tags: []string{""}},
		{file: "tagged-Log.logV2.hlog", intervals: 42, tags: []string{"", "A"}},
		{file: "ycsb.logV1.hlog"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, "test", tt.file))
			require.NoError(t, err)
			defer f.Close()
			l, err := loadgen.ReadHlog(f)
			if tt.intervals == 0 {
				// A V1 payload: HdrHistogram's Go decoder supports only V2,
				// and the error says so with the line.
				require.ErrorContains(t, err, "hlog line")
				return
			}
			require.NoError(t, err)
			assert.Len(t, l.Intervals, tt.intervals)
			assert.Equal(t, 2015, l.StartTime.Year())
			for _, tag := range tt.tags {
				h, first, last := l.Total(tag)
				require.NotNil(t, h, "tag %q", tag)
				assert.Greater(t, h.TotalCount(), int64(0))
				assert.True(t, last.After(first))
			}
			// Written again and read back, nothing changes.
			var buf bytes.Buffer
			require.NoError(t, loadgen.WriteHlog(&buf, l))
			back, err := loadgen.ReadHlog(&buf)
			require.NoError(t, err)
			require.Len(t, back.Intervals, len(l.Intervals))
			for i := range l.Intervals {
				assert.True(t, l.Intervals[i].Hist.Equals(back.Intervals[i].Hist))
			}
		})
	}
}

func TestMergeHlogs(t *testing.T) {
	start := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	mk := func(offset time.Duration, seconds int, perSecond int) *loadgen.IntervalLog {
		l := &loadgen.IntervalLog{StartTime: start.Add(offset)}
		for i := 0; i < seconds; i++ {
			s := start.Add(offset + time.Duration(i)*time.Second)
			h := hdrhistogram.New(1, 60_000_000, 3)
			h.RecordValues(100+int64(i), int64(perSecond))
			l.Intervals = append(l.Intervals, loadgen.Interval{Tag: loadgen.TagCorrected, Start: s, End: s.Add(time.Second), Hist: h})
		}
		return l
	}
	// Three shards of 1000 req/s each; the third started 2 s late and ran
	// 4 s. Over the union of spans (6 s) the rate would read 2666 req/s.
	m, err := loadgen.MergeHlogs(loadgen.TagCorrected, mk(0, 6, 1000), mk(0, 6, 1000), mk(2*time.Second, 4, 1000))
	require.NoError(t, err)
	assert.Equal(t, int64(16000), m.Total.TotalCount())
	assert.InDelta(t, 3000, m.Throughput, 0.001)
	assert.Equal(t, []time.Duration{6 * time.Second, 6 * time.Second, 4 * time.Second}, m.Windows)
	assert.Len(t, m.Log.Intervals, 16)
	for i := 1; i < len(m.Log.Intervals); i++ {
		assert.False(t, m.Log.Intervals[i].Start.Before(m.Log.Intervals[i-1].Start), "sorted by time")
	}
	// The merged log, written and read, keeps every value.
	var buf bytes.Buffer
	require.NoError(t, loadgen.WriteHlog(&buf, &m.Log))
	back, err := loadgen.ReadHlog(&buf)
	require.NoError(t, err)
	total, _, _ := back.Total(loadgen.TagCorrected)
	assert.True(t, total.Equals(m.Total))

	_, err = loadgen.MergeHlogs(loadgen.TagLag, mk(0, 1, 1))
	require.ErrorContains(t, err, `log 1 has no interval tagged "lag"`)
}

func FuzzReadHlog(f *testing.F) {
	var buf bytes.Buffer
	w, _ := loadgen.NewHlogWriter(&buf, time.Unix(1764691200, 0), "seed")
	w.Write(loadgen.Interval{Tag: loadgen.TagCorrected, Start: time.Unix(1764691200, 0), End: time.Unix(1764691201, 0), Hist: hist(1, 2, 3)})
	f.Add(buf.String())
	f.Add("Tag=,0,0,0,\n")
	f.Add("#[StartTime: 9e999]\n1,2,3,HISTFAAAAA==\n")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := loadgen.ReadHlog(strings.NewReader(s))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := loadgen.WriteHlog(&out, l); err != nil {
			return // e.g. a tag with a space read from a foreign log
		}
		back, err := loadgen.ReadHlog(&out)
		if err != nil {
			t.Fatalf("re-read of own output: %v\n%s", err, out.String())
		}
		if len(back.Intervals) != len(l.Intervals) {
			t.Fatalf("%d intervals became %d", len(l.Intervals), len(back.Intervals))
		}
		for i := range l.Intervals {
			if l.Intervals[i].Hist.TotalCount() != back.Intervals[i].Hist.TotalCount() {
				t.Fatalf("interval %d count changed", i)
			}
		}
	})
}
