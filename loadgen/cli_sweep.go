package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultSweepWarmup is the warm-up of each sweep level when none is
// given: a level measured from a cold start (new connections, an idle JIT)
// would understate the first levels.
const DefaultSweepWarmup = time.Second

// SweepArgs is a "loadgen sweep" command line, parsed.
type SweepArgs struct {
	Sweep SweepConfig
	// Process names the server process whose CPU to sample (--process
	// java), when no --pid is given; see FindProcess.
	Process string
	JSON    bool   // --json
	Plot    string // --plot FILE.svg: percentiles of every level, and FILE-throughput.svg
	Help    bool
}

var sweepSpecs = []optSpec{
	{"c", "connections", true}, {"R", "rate", true}, {"t", "threads", true}, {"d", "duration", true},
	{"", "warmup", true}, {"H", "header", true}, {"T", "timeout", true}, {"m", "method", true},
	{"", "body", true}, {"", "pid", true}, {"", "process", true}, {"", "json", false},
	{"", "plot", true}, {"h", "help", false}, {"", "slack", true},
}

// ParseSweepArgs parses "loadgen sweep" options (without "sweep"): closed
// model levels as "-c 8,16,32,64", or open-model levels as "-R 1k,2k,4k"
// with "-c N" connections; -t, -d (per level), --warmup (per level, default
// DefaultSweepWarmup), -H, -T, -m, --body, --slack as in wrk2 mode; --pid N
// or --process NAME for the server's CPU; --json; --plot FILE.svg.
func ParseSweepArgs(args []string) (SweepArgs, error) {
	var a SweepArgs
	base := Config{Threads: DefaultThreads, Timeout: DefaultTimeout, Connections: DefaultConnections}
	a.Sweep.Duration, a.Sweep.Warmup = DefaultDuration, DefaultSweepWarmup
	opts, operands, err := getopt(args, sweepSpecs)
	if err != nil {
		return a, err
	}
	var conns, rates []int64
	for _, o := range opts {
		var err error
		switch o.name {
		case "c":
			conns, err = ParseLevels(o.value)
		case "R":
			rates, err = ParseLevels(o.value)
		case "t":
			var n int64
			n, err = ParseMetric(o.value)
			base.Threads = int(n)
		case "d":
			a.Sweep.Duration, err = ParseTime(o.value)
		case "warmup":
			a.Sweep.Warmup, err = ParseTime(o.value)
		case "T":
			base.Timeout, err = ParseTime(o.value)
		case "slack":
			base.Slack, err = ParseTime(o.value)
		case "H":
			var h Header
			h, err = ParseHeader(o.value)
			base.Headers = append(base.Headers, h)
		case "m":
			base.Method = o.value
		case "body":
			base.Body = []byte(o.value)
		case "pid":
			a.Sweep.PID, err = strconv.Atoi(o.value)
			if err == nil && a.Sweep.PID <= 0 {
				err = fmt.Errorf("%w: want a process id > 0", ErrUsage)
			}
		case "process":
			a.Process = o.value
		case "json":
			a.JSON = true
		case "plot":
			a.Plot = o.value
		case "h":
			a.Help = true
		}
		if err != nil {
			return a, fmt.Errorf("-%s %s: %w", o.name, o.value, err)
		}
	}
	switch {
	case len(rates) > 0:
		if len(conns) > 1 {
			return a, fmt.Errorf("%w: with rate levels (-R), -c is one connection count", ErrUsage)
		}
		if len(conns) == 1 {
			base.Connections = int(conns[0])
		}
		for _, r := range rates {
			a.Sweep.Rates = append(a.Sweep.Rates, float64(r))
		}
	case len(conns) > 0:
		for _, c := range conns {
			a.Sweep.Connections = append(a.Sweep.Connections, int(c))
		}
	case !a.Help:
		return a, fmt.Errorf("%w: sweep: give levels, -c 8,16,32,64 (connections) or -R 1k,2k,4k (requests/s)", ErrUsage)
	}
	if base.Threads <= 0 || a.Sweep.Duration <= 0 {
		return a, fmt.Errorf("%w: threads and duration must be > 0", ErrUsage)
	}
	switch len(operands) {
	case 0:
	case 1:
		base.URL = operands[0]
		if _, err := parseTarget(base.URL); err != nil {
			return a, err
		}
	default:
		return a, fmt.Errorf("%w: one URL expected, got %q", ErrUsage, operands)
	}
	a.Sweep.Base = base
	return a, nil
}

// MergeArgs is a "loadgen merge" command line, parsed.
type MergeArgs struct {
	Out   string   // -o FILE: the merged log; none when empty
	Tag   string   // --tag: the histograms to total (default corrected)
	Files []string // the logs, one per load generator
	Help  bool
}

// ParseMergeArgs parses "loadgen merge [-o merged.hlog] [--tag T] a.hlog b.hlog …".
func ParseMergeArgs(args []string) (MergeArgs, error) {
	a := MergeArgs{Tag: TagCorrected}
	opts, operands, err := getopt(args, []optSpec{{"o", "output", true}, {"", "tag", true}, {"h", "help", false}})
	if err != nil {
		return a, err
	}
	for _, o := range opts {
		switch o.name {
		case "o":
			a.Out = o.value
		case "tag":
			a.Tag = o.value
		case "h":
			a.Help = true
		}
	}
	a.Files = operands
	if len(a.Files) == 0 && !a.Help {
		return a, fmt.Errorf("%w: merge: give the interval logs to merge", ErrUsage)
	}
	return a, nil
}

// ReadHlogFile reads an interval log from a file; errors name the file.
func ReadHlogFile(path string) (*IntervalLog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l, err := ReadHlog(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// MergeHlogFiles reads the logs of several load generators and merges
// them (see MergeHlogs); when out is not empty it writes the merged log
// there.
func MergeHlogFiles(out, tag string, paths ...string) (*MergedLogs, error) {
	var logs []*IntervalLog
	for _, p := range paths {
		l, err := ReadHlogFile(p)
		if err != nil {
			return nil, err
		}
		if h, _, _ := l.Total(tag); h == nil {
			return nil, fmt.Errorf("loadgen: merge: %s has no interval tagged %q", p, tag)
		}
		logs = append(logs, l)
	}
	m, err := MergeHlogs(tag, logs...)
	if err != nil {
		return nil, err
	}
	if out != "" {
		var b bytes.Buffer
		if err := WriteHlog(&b, &m.Log); err != nil {
			return nil, err
		}
		if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Summary renders a merge: each generator's count, active window and
// rate, then the total count, the throughput (sum of each generator's
// rate) and the merged latency percentiles.
func (m *MergedLogs) Summary(names []string, tag string) string {
	rows := [][]string{{"log", "requests", "window", "req/s"}}
	for i := range m.Windows {
		name := fmt.Sprintf("log %d", i+1)
		if i < len(names) {
			name = names[i]
		}
		rows = append(rows, []string{name, fmt.Sprint(m.Counts[i]), fmt.Sprintf("%.3fs", m.Windows[i].Seconds()), fmt.Sprintf("%.2f", rate(m.Counts[i], m.Windows[i]))})
	}
	var b strings.Builder
	b.WriteString(table(rows))
	h := m.Total
	fmt.Fprintf(&b, "\nmerged %q: %d requests, %.2f requests/sec\n", tag, h.TotalCount(), m.Throughput)
	fmt.Fprintf(&b, "  mean %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		FormatDuration(usDuration(h.Mean())), FormatDuration(usDuration(float64(h.ValueAtQuantile(50)))),
		FormatDuration(usDuration(float64(h.ValueAtQuantile(90)))), FormatDuration(usDuration(float64(h.ValueAtQuantile(99)))),
		FormatDuration(usDuration(float64(h.ValueAtQuantile(99.9)))), FormatDuration(usDuration(float64(h.Max()))))
	if m.Dropped > 0 {
		fmt.Fprintf(&b, "  %d values out of range were dropped\n", m.Dropped)
	}
	return b.String()
}

func rate(n int64, w time.Duration) float64 {
	if w <= 0 {
		return 0
	}
	return float64(n) / w.Seconds()
}

// WriteRunPlot draws a run's corrected and uncorrected latency
// percentiles into an SVG file.
func WriteRunPlot(path, title string, r *Result) error {
	series := []PercentileSeries{{Name: "corrected", Points: Spectrum(r.Histograms.Latency, 5)}}
	if r.Pacer != "" {
		series = append(series, PercentileSeries{Name: "uncorrected (service)", Points: Spectrum(r.Histograms.Service, 5)})
	}
	var b bytes.Buffer
	if err := PlotPercentiles(&b, title, series); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// WriteSweepPlots draws a sweep into two SVG files: the latency
// percentiles of every level at path, and the throughput of every level,
// with its change against the first and the previous, at path with
// "-throughput" before the extension. It returns the files written.
func WriteSweepPlots(path, title string, s *SweepResult) ([]string, error) {
	return WriteComparePlots(path, title, s.Comparison(), s.Series())
}
