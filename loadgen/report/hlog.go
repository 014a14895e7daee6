package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Tags of the three histograms nettune writes for each interval of a run.
// Values are microseconds.
const (
	// TagCorrected is latency from each request's intended send time
	// (coordinated-omission corrected).
	TagCorrected = "corrected"
	// TagUncorrected is service time, from the actual send (wrk2's -U).
	TagUncorrected = "uncorrected"
	// TagLag is how late the generator sent each request.
	TagLag = "lag"
)

// hlogFormatVersion is the HdrHistogram interval log format written.
const hlogFormatVersion = "1.3"

// Interval is one histogram of an interval log: the values recorded
// between Start and End under one tag.
type Interval struct {
	Tag   string
	Start time.Time
	End   time.Time
	Hist  *hdrhistogram.Histogram
}

// IntervalLog is a parsed HdrHistogram interval log (.hlog).
type IntervalLog struct {
	// StartTime is the log's #[StartTime: …]. Interval starts are relative
	// to its BaseTime in the file (or to StartTime) and absolute here.
	StartTime time.Time
	// Comments are the log's comment lines without the leading '#', other
	// than the format version, StartTime and BaseTime lines.
	Comments  []string
	Intervals []Interval
}

// HlogWriter writes an HdrHistogram interval log, format 1.3, readable by
// HdrHistogram's own tools (HistogramLogProcessor, the Go and Java log
// readers): a header with the version, StartTime, a BaseTime equal to it
// and the legend, then one line per interval histogram with its start
// relative to BaseTime in seconds, its length, the interval's max in
// milliseconds, and the compressed V2 histogram. Times are written to the
// millisecond. An interval that began before StartTime (a merged or edited
// log) gets a negative start, as HdrHistogram's own writers give it; the
// BaseTime line tells every reader that starts are relative.
type HlogWriter struct {
	w    io.Writer
	base time.Time
	err  error
}

// NewHlogWriter writes the log header to w. start is the run's start time
// (the base of every interval timestamp); comment, when not empty, is
// written as a comment line (e.g. the command line).
func NewHlogWriter(w io.Writer, start time.Time, comment string) (*HlogWriter, error) {
	return newHlogWriter(w, start, start, comment)
}

// newHlogWriter writes interval starts relative to base.
func newHlogWriter(w io.Writer, start, base time.Time, comment string) (*HlogWriter, error) {
	hw := &HlogWriter{w: w, base: base}
	if comment != "" {
		hw.printf("#[%s]\n", strings.ReplaceAll(comment, "\n", " "))
	}
	hw.printf("#[Histogram log format version %s]\n", hlogFormatVersion)
	hw.printf("#[StartTime: %s (seconds since epoch), %s]\n", seconds(unixMilli(start)), start.UTC().Format(time.RFC3339))
	hw.printf("#[BaseTime: %s (seconds since epoch)]\n", seconds(unixMilli(base)))
	hw.printf("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n")
	return hw, hw.err
}

func (hw *HlogWriter) printf(format string, args ...any) {
	if hw.err == nil {
		_, hw.err = fmt.Fprintf(hw.w, format, args...)
	}
}

// Write appends one interval. The tag must not hold commas, spaces or
// line breaks (the format's rule); "" writes an untagged line. An interval
// that ends before it starts is refused; one that starts before the base
// time is written with a negative start. A refused interval writes
// nothing.
func (hw *HlogWriter) Write(iv Interval) error {
	if strings.ContainsAny(iv.Tag, ", \r\n") {
		return fmt.Errorf("loadgen: hlog tag %q: must not contain commas, spaces or line breaks", iv.Tag)
	}
	if iv.Hist == nil {
		return errors.New("loadgen: hlog interval without a histogram")
	}
	if iv.End.Before(iv.Start) {
		return fmt.Errorf("loadgen: hlog interval ends (%s) before it starts (%s)", iv.End.Format(time.RFC3339Nano), iv.Start.Format(time.RFC3339Nano))
	}
	enc, err := iv.Hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("loadgen: encode interval histogram: %w", err)
	}
	if iv.Tag != "" {
		hw.printf("Tag=%s,", iv.Tag)
	}
	begin := unixMilli(iv.Start)
	off := seconds(begin - unixMilli(hw.base))
	length := seconds(unixMilli(iv.End) - begin)
	maxMs := float64(iv.Hist.Max()) / 1000 // values are µs
	hw.printf("%s,%s,%.3f,%s\n", off, length, maxMs, enc)
	return hw.err
}

// unixMilli is t to the nearest millisecond, the log's resolution.
func unixMilli(t time.Time) int64 { return t.Round(time.Millisecond).UnixMilli() }

// seconds formats a count of milliseconds as seconds with three decimals,
// negative ones too ("-1.500").
func seconds(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return fmt.Sprintf("%s%d.%03d", sign, ms/1000, ms%1000)
}

// ReadHlog parses an interval log: nettune's own, and those written by
// HdrHistogram's Java and Go writers (versions 1.2 and 1.3, tagged or not,
// with or without StartTime and BaseTime). An interval's start may be
// negative: it began before the base time (HdrHistogram's readers accept
// it too). Without a BaseTime line, starts more than a year before
// StartTime are relative to it and others absolute, as in HdrHistogram's
// readers; without a StartTime line, the log starts at its first interval.
// Times are kept to the millisecond. Errors name the line.
func ReadHlog(r io.Reader) (*IntervalLog, error) {
	log := &IntervalLog{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	var startMs, baseMs int64
	haveStart, haveBase := false, false
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		switch {
		case text == "":
			continue
		case strings.HasPrefix(text, "#"):
			c := text[1:]
			if v, ok := headerNumber(c, "[StartTime: "); ok {
				startMs, haveStart = v, true
			} else if v, ok := headerNumber(c, "[BaseTime: "); ok {
				baseMs, haveBase = v, true
			} else if !strings.HasPrefix(c, "[Histogram log format version") {
				log.Comments = append(log.Comments, strings.TrimSuffix(strings.TrimPrefix(c, "["), "]"))
			}
			continue
		case strings.HasPrefix(text, `"StartTimestamp"`):
			continue
		}
		iv, tsMs, lengthMs, err := parseIntervalLine(text)
		if err != nil {
			return nil, fmt.Errorf("loadgen: hlog line %d: %w", line, err)
		}
		if !haveBase {
			// As HdrHistogram's readers: timestamps more than a year before
			// StartTime are relative to it.
			if haveStart && tsMs < startMs-365*24*3600*1000 {
				baseMs = startMs
			}
			haveBase = true
		}
		abs := tsMs + baseMs
		if !haveStart {
			startMs, haveStart = abs, true
		}
		iv.Start = time.UnixMilli(abs).UTC()
		iv.End = time.UnixMilli(abs + lengthMs).UTC()
		log.Intervals = append(log.Intervals, iv)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("loadgen: hlog: %w", err)
	}
	if haveStart {
		log.StartTime = time.UnixMilli(startMs).UTC()
	}
	return log, nil
}

// maxHlogSeconds bounds every time in a log (±31 700 years), so sums of
// them stay exact in milliseconds.
const maxHlogSeconds = 1e12

// headerNumber reads the seconds after prefix in a header comment, in
// milliseconds.
func headerNumber(c, prefix string) (int64, bool) {
	if !strings.HasPrefix(c, prefix) {
		return 0, false
	}
	f := strings.Fields(c[len(prefix):])
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "]"), 64)
	if err != nil || math.IsNaN(v) || math.Abs(v) > maxHlogSeconds {
		return 0, false
	}
	return int64(math.Round(v * 1000)), true
}

// parseIntervalLine parses "[Tag=T,]start,length,max,payload" and returns
// the interval (without times) and its start and length in milliseconds.
// The start may be negative (before the base time); length and max not.
func parseIntervalLine(text string) (Interval, int64, int64, error) {
	var iv Interval
	if strings.HasPrefix(text, "Tag=") {
		tag, rest, ok := strings.Cut(text[4:], ",")
		if !ok {
			return iv, 0, 0, fmt.Errorf("tag without interval: %q", text)
		}
		iv.Tag, text = tag, rest
	}
	f := strings.SplitN(text, ",", 4)
	if len(f) != 4 {
		return iv, 0, 0, fmt.Errorf("expected StartTimestamp,Interval_Length,Interval_Max,Interval_Compressed_Histogram, got %d fields", len(f))
	}
	// Start and length are seconds, kept in milliseconds; the max (in the
	// values' unit) is informative only: the histogram holds it.
	var ms [2]int64
	for i := range f[:3] {
		v, err := strconv.ParseFloat(f[i], 64)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			return iv, 0, 0, fmt.Errorf("field %d %q is not a number", i+1, f[i])
		case v < 0 && i > 0:
			return iv, 0, 0, fmt.Errorf("field %d %q is not a non-negative number", i+1, f[i])
		case i < 2 && math.Abs(v) > maxHlogSeconds:
			return iv, 0, 0, fmt.Errorf("field %d %q is not a number of seconds within ±%g", i+1, f[i], maxHlogSeconds)
		case i < 2:
			ms[i] = int64(math.Round(v * 1000))
		}
	}
	h, err := hdrhistogram.Decode([]byte(f[3]))
	if err != nil {
		return iv, 0, 0, fmt.Errorf("histogram payload: %w", err)
	}
	iv.Hist = h
	return iv, ms[0], ms[1], nil
}

// Total merges every interval of the log with the given tag into one
// histogram and returns it with the active window: from the first
// interval's start to the last one's end. It returns nil when the log has
// no interval with that tag.
func (l *IntervalLog) Total(tag string) (*hdrhistogram.Histogram, time.Time, time.Time) {
	var total *hdrhistogram.Histogram
	var first, last time.Time
	for _, iv := range l.Intervals {
		if iv.Tag != tag {
			continue
		}
		if total == nil {
			total = hdrhistogram.New(iv.Hist.LowestTrackableValue(), iv.Hist.HighestTrackableValue(), int(iv.Hist.SignificantFigures()))
			first, last = iv.Start, iv.End
		}
		total.Merge(iv.Hist)
		if iv.Start.Before(first) {
			first = iv.Start
		}
		if iv.End.After(last) {
			last = iv.End
		}
	}
	return total, first, last
}

// MergedLogs is the union of interval logs from several load generators
// (shards of one load) that ran at the same time.
type MergedLogs struct {
	// Log holds every input interval, unchanged, sorted by start time and
	// tag, so a merged log written out loses nothing.
	Log IntervalLog
	// Total is every generator's histogram of the tag, merged.
	Total *hdrhistogram.Histogram
	// Dropped counts values Merge could not hold (out of range).
	Dropped int64
	// Throughput is the sum over generators of each one's count divided
	// by its own active window, not count over the union of time spans, so
	// a generator that started late does not dilute the rate.
	Throughput float64
	// Windows is each generator's active window, and Counts its number of
	// values of the tag, in input order.
	Windows []time.Duration
	Counts  []int64
}

// MergeHlogs unions interval logs from several generators for one tag
// (usually TagCorrected).
func MergeHlogs(tag string, logs ...*IntervalLog) (*MergedLogs, error) {
	if len(logs) == 0 {
		return nil, errors.New("loadgen: merge: no logs")
	}
	m := &MergedLogs{}
	for i, l := range logs {
		if m.Log.StartTime.IsZero() || (!l.StartTime.IsZero() && l.StartTime.Before(m.Log.StartTime)) {
			m.Log.StartTime = l.StartTime
		}
		m.Log.Comments = append(m.Log.Comments, l.Comments...)
		m.Log.Intervals = append(m.Log.Intervals, l.Intervals...)
		h, first, last := l.Total(tag)
		if h == nil {
			return nil, fmt.Errorf("loadgen: merge: log %d has no interval tagged %q", i+1, tag)
		}
		if m.Total == nil {
			m.Total = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		}
		m.Dropped += m.Total.Merge(h)
		w := last.Sub(first)
		m.Windows = append(m.Windows, w)
		m.Counts = append(m.Counts, h.TotalCount())
		if w > 0 {
			m.Throughput += float64(h.TotalCount()) / w.Seconds()
		}
	}
	sort.SliceStable(m.Log.Intervals, func(a, b int) bool {
		x, y := m.Log.Intervals[a], m.Log.Intervals[b]
		if !x.Start.Equal(y.Start) {
			return x.Start.Before(y.Start)
		}
		return x.Tag < y.Tag
	})
	return m, nil
}

// WriteHlog writes a whole log (for instance a merged one) with w. Its
// BaseTime is StartTime, or the start of an earlier interval, so that no
// interval start is written negative (HdrHistogram's Go reader misreads
// those).
func WriteHlog(w io.Writer, l *IntervalLog) error {
	start := l.StartTime
	if start.IsZero() && len(l.Intervals) > 0 {
		start = l.Intervals[0].Start
	}
	base := start
	for _, iv := range l.Intervals {
		if iv.Start.Before(base) {
			base = iv.Start
		}
	}
	hw, err := newHlogWriter(w, start, base, strings.Join(l.Comments, "; "))
	if err != nil {
		return err
	}
	for _, iv := range l.Intervals {
		if err := hw.Write(iv); err != nil {
			return err
		}
	}
	return nil
}
