package report_test

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

	"github.com/nettune/nettune/loadgen/report"
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
	w, err := report.NewHlogWriter(&buf, start, "loadgen -c64 -R15000 -d10 http://127.0.0.1:8080/")
	require.NoError(t, err)
	var want []report.Interval
	for i := 0; i < 3; i++ {
		s := start.Add(time.Duration(i) * time.Second)
		for _, tag := range []string{report.TagCorrected, report.TagUncorrected, report.TagLag} {
			iv := report.Interval{Tag: tag, Start: s, End: s.Add(time.Second), Hist: hist(120, 130, int64(1000*(i+1)), 250_000)}
			require.NoError(t, w.Write(iv))
			want = append(want, iv)
		}
	}
	text := buf.String()
	assert.True(t, strings.HasPrefix(text, "#[loadgen -c64 -R15000 -d10 http://127.0.0.1:8080/]\n#[Histogram log format version 1.3]\n#[StartTime: 1796227200.250 (seconds since epoch), 2026-12-02T16:00:00Z]\n#[BaseTime: 1796227200.250 (seconds since epoch)]\n\"StartTimestamp\""), text)
	assert.Contains(t, text, "\nTag=lag,2.000,1.000,250.111,HISTF")

	got, err := report.ReadHlog(strings.NewReader(text))
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
	total, first, last := got.Total(report.TagCorrected)
	assert.Equal(t, int64(12), total.TotalCount())
	assert.Equal(t, 3*time.Second, last.Sub(first))

	// Bad input names the line.
	_, err = report.ReadHlog(strings.NewReader("#[StartTime: 1.0 (x)]\n0.1,1.0,2.0,NOTBASE64\n"))
	require.ErrorContains(t, err, "hlog line 2: histogram payload")
	_, err = report.ReadHlog(strings.NewReader("0.1,1.0\n"))
	require.ErrorContains(t, err, "hlog line 1: expected StartTimestamp,Interval_Length,Interval_Max,Interval_Compressed_Histogram")
	require.Error(t, w.Write(report.Interval{Tag: "a b", Hist: hist(1)}))
}

// An interval that began before the log's StartTime (a log edited or
// merged by hand, or HdrHistogram's readers taking a small timestamp as
// absolute) is kept with its time: the writer gives it a negative start,
// which the reader accepts as HdrHistogram's Java reader does, and a whole
// log is written with a BaseTime early enough that no start is negative.
func TestHlogIntervalBeforeStartTime(t *testing.T) {
	// FuzzReadHlog's finding: StartTime 10 s, an interval at 0 s absolute.
	in := "#[StartTime: 10\n0,0.5,0,HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZMQ4uASkhIR4nrxg9v2lMaxhvMekILGZkKmcCAEf2CsI=\n"
	l, err := report.ReadHlog(strings.NewReader(in))
	require.NoError(t, err)
	require.Len(t, l.Intervals, 1)
	assert.Equal(t, time.Unix(10, 0).UTC(), l.StartTime)
	assert.Equal(t, time.Unix(0, 0).UTC(), l.Intervals[0].Start)
	assert.Equal(t, time.Unix(0, 500_000_000).UTC(), l.Intervals[0].End)
	var buf bytes.Buffer
	require.NoError(t, report.WriteHlog(&buf, l))
	assert.Contains(t, buf.String(), "#[BaseTime: 0.000 (seconds since epoch)]\n")
	back, err := report.ReadHlog(strings.NewReader(buf.String()))
	require.NoError(t, err, buf.String())
	assert.Equal(t, l.StartTime, back.StartTime)
	require.Len(t, back.Intervals, 1)
	assert.Equal(t, l.Intervals[0].Start, back.Intervals[0].Start)
	assert.Equal(t, l.Intervals[0].End, back.Intervals[0].End)
	assert.True(t, l.Intervals[0].Hist.Equals(back.Intervals[0].Hist))

	// A streamed log: StartTime is the base, the early interval negative.
	start := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	buf.Reset()
	w, err := report.NewHlogWriter(&buf, start, "")
	require.NoError(t, err)
	early := report.Interval{Tag: report.TagCorrected, Start: start.Add(-2500 * time.Millisecond), End: start.Add(-1500 * time.Millisecond), Hist: hist(100, 200)}
	require.NoError(t, w.Write(early))
	assert.Contains(t, buf.String(), "\nTag=corrected,-2.500,1.000,0.200,HIST")
	back, err = report.ReadHlog(strings.NewReader(buf.String()))
	require.NoError(t, err, buf.String())
	assert.Equal(t, start, back.StartTime)
	require.Len(t, back.Intervals, 1)
	assert.Equal(t, early.Start, back.Intervals[0].Start)
	assert.Equal(t, early.End, back.Intervals[0].End)

	// Written whole, HdrHistogram's own Go reader (which reads "-2.500" as
	// 2.500) gets the early interval's time right.
	buf.Reset()
	require.NoError(t, report.WriteHlog(&buf, back))
	assert.NotContains(t, buf.String(), ",-")
	h, err := hdrhistogram.NewHistogramLogReader(strings.NewReader(buf.String())).NextIntervalHistogram()
	require.NoError(t, err)
	require.NotNil(t, h)
	assert.Equal(t, early.Start.UnixMilli(), h.StartTimeMs())
	assert.Equal(t, early.End.UnixMilli(), h.EndTimeMs())

	// A length or max below zero is still refused, and names the line.
	_, err = report.ReadHlog(strings.NewReader("#[StartTime: 10]\n0,-1,0,HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZMQ4uASkhIR4nrxg9v2lMaxhvMekILGZkKmcCAEf2CsI=\n"))
	require.ErrorContains(t, err, `hlog line 2: field 2 "-1" is not a non-negative number`)
	before := buf.Len()
	require.ErrorContains(t, w.Write(report.Interval{Tag: "x", Start: start, End: start.Add(-time.Second), Hist: hist(1)}), "ends")
	assert.Equal(t, before, buf.Len(), "a refused interval writes nothing")
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
			l, err := report.ReadHlog(f)
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
			require.NoError(t, report.WriteHlog(&buf, l))
			back, err := report.ReadHlog(&buf)
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
	mk := func(offset time.Duration, seconds int, perSecond int) *report.IntervalLog {
		l := &report.IntervalLog{StartTime: start.Add(offset)}
		for i := 0; i < seconds; i++ {
			s := start.Add(offset + time.Duration(i)*time.Second)
			h := hdrhistogram.New(1, 60_000_000, 3)
			h.RecordValues(100+int64(i), int64(perSecond))
			l.Intervals = append(l.Intervals, report.Interval{Tag: report.TagCorrected, Start: s, End: s.Add(time.Second), Hist: h})
		}
		return l
	}
	// Three shards of 1000 req/s each; the third started 2 s late and ran
	// 4 s. Over the union of spans (6 s) the rate would read 2666 req/s.
	m, err := report.MergeHlogs(report.TagCorrected, mk(0, 6, 1000), mk(0, 6, 1000), mk(2*time.Second, 4, 1000))
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
	require.NoError(t, report.WriteHlog(&buf, &m.Log))
	back, err := report.ReadHlog(&buf)
	require.NoError(t, err)
	total, _, _ := back.Total(report.TagCorrected)
	assert.True(t, total.Equals(m.Total))

	_, err = report.MergeHlogs(report.TagLag, mk(0, 1, 1))
	require.ErrorContains(t, err, `log 1 has no interval tagged "lag"`)
}

func FuzzReadHlog(f *testing.F) {
	var buf bytes.Buffer
	w, _ := report.NewHlogWriter(&buf, time.Unix(1764691200, 0), "seed")
	w.Write(report.Interval{Tag: report.TagCorrected, Start: time.Unix(1764691200, 0), End: time.Unix(1764691201, 0), Hist: hist(1, 2, 3)})
	f.Add(buf.String())
	f.Add("Tag=,0,0,0,\n")
	f.Add("#[StartTime: 9e999]\n1,2,3,HISTFAAAAA==\n")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := report.ReadHlog(strings.NewReader(s))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := report.WriteHlog(&out, l); err != nil {
			return // e.g. a tag with a space read from a foreign log
		}
		back, err := report.ReadHlog(&out)
		if err != nil {
			t.Fatalf("re-read of own output: %v\n%s", err, out.String())
		}
		if !back.StartTime.Equal(l.StartTime) {
			t.Fatalf("StartTime %v became %v\n%s", l.StartTime, back.StartTime, out.String())
		}
		if len(back.Intervals) != len(l.Intervals) {
			t.Fatalf("%d intervals became %d", len(l.Intervals), len(back.Intervals))
		}
		for i, iv := range l.Intervals {
			b := back.Intervals[i]
			if b.Tag != iv.Tag || !b.Start.Equal(iv.Start) || !b.End.Equal(iv.End) {
				t.Fatalf("interval %d %q %v-%v became %q %v-%v\n%s", i, iv.Tag, iv.Start, iv.End, b.Tag, b.Start, b.End, out.String())
			}
			if iv.Hist.TotalCount() != b.Hist.TotalCount() {
				t.Fatalf("interval %d count changed", i)
			}
		}
	})
}
