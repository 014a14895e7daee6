package loadgen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ReadResultJSON rebuilds a Result from WriteJSON's output (the CLI's
// --json): counts, errors, rates, and the histograms decoded from their
// HdrHistogram encoding, so it can be compared or plotted later.
func ReadResultJSON(r io.Reader) (*Result, error) {
	var j ResultJSON
	if err := json.NewDecoder(r).Decode(&j); err != nil {
		return nil, fmt.Errorf("loadgen: result JSON: %w", err)
	}
	res := &Result{
		URL: j.URL, Method: j.Method, Connections: j.Connections, Threads: j.Threads, KeepAlive: j.KeepAlive,
		Pacer: j.Pacer, OfferedRate: j.OfferedRate, AchievedRate: j.AchievedRate, Start: j.Start,
		Elapsed: secs(j.ElapsedSeconds), Warmup: secs(j.WarmupSeconds), Requests: j.Requests, Sent: j.Sent,
		Bytes: j.Bytes, BodyBytes: j.BodyBytes, KeepAliveResponses: j.KeepAliveResponses,
		LengthMismatches: j.LengthMismatches, DocumentLength: j.DocumentLength, Server: j.Server,
		Errors: j.Errors, Connects: j.Connects, Reconnects: j.Reconnects, Incomplete: j.Incomplete,
		Missed: j.Missed, Dropped: j.Dropped, OpenFiles: j.OpenFiles, RateSamples: j.RateSamples,
		Histograms: newHistograms(),
		Drain: Drain{Requests: j.Drain.Requests, Errors: j.Drain.Errors, Timeouts: j.Drain.Timeouts,
			Elapsed: secs(j.Drain.ElapsedSeconds), Latency: NewHistogram()},
	}
	if j.TLS != nil {
		res.TLS = *j.TLS
	}
	if j.Drain.Latency.Encoded != "" {
		h, err := decodeHist(j.Drain.Latency.Encoded)
		if err != nil {
			return nil, fmt.Errorf("loadgen: result JSON: drain latency histogram: %w", err)
		}
		if h.TotalCount() != j.Drain.Latency.Count {
			return nil, fmt.Errorf("loadgen: result JSON: drain latency histogram holds %d values, its count says %d", h.TotalCount(), j.Drain.Latency.Count)
		}
		res.Drain.Latency = h
	}
	for name, dst := range map[string]**hdrhistogram.Histogram{
		"latency": &res.Histograms.Latency, "service": &res.Histograms.Service, "lag": &res.Histograms.Lag,
		"connect": &res.Histograms.Connect, "processing": &res.Histograms.Processing, "waiting": &res.Histograms.Waiting,
	} {
		hj, ok := j.Histograms[name]
		if !ok || hj.Encoded == "" {
			continue
		}
		h, err := decodeHist(hj.Encoded)
		if err != nil {
			return nil, fmt.Errorf("loadgen: result JSON: histogram %q: %w", name, err)
		}
		if h.TotalCount() != hj.Count {
			return nil, fmt.Errorf("loadgen: result JSON: histogram %q holds %d values, its count says %d", name, h.TotalCount(), hj.Count)
		}
		*dst = h
	}
	if res.Histograms.Latency.TotalCount() == 0 && res.Requests > 0 {
		return nil, fmt.Errorf("loadgen: result JSON: %d requests but no latency histogram (hdr_base64)", res.Requests)
	}
	return res, nil
}

func decodeHist(s string) (*hdrhistogram.Histogram, error) {
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	return hdrhistogram.Decode([]byte(s))
}

// CompareArgs is a "loadgen compare" command line, parsed.
type CompareArgs struct {
	// Runs are the results to compare, the baseline first: [NAME=]FILE,
	// FILE being loadgen's --json output; NAME defaults to the file's
	// base name without extension.
	Runs []NamedFile
	// CPU, when given (--cpu 93.1,92.9,…), is each run's server CPU
	// utilisation in percent, for ITR: one per run.
	CPU  []float64
	JSON bool   // --json
	Plot string // --plot FILE.svg: percentiles of every run, and FILE-throughput.svg
	Help bool
}

// NamedFile is one input of a comparison.
type NamedFile struct{ Name, Path string }

// ParseCompareArgs parses "loadgen compare [--cpu P,…] [--json] [-plot
// FILE.svg] [NAME=]base.json [NAME=]step1.json …".
func ParseCompareArgs(args []string) (CompareArgs, error) {
	var a CompareArgs
	opts, operands, err := getopt(args, []optSpec{{"", "cpu", true}, {"", "json", false}, {"", "plot", true}, {"h", "help", false}})
	if err != nil {
		return a, err
	}
	for _, o := range opts {
		switch o.name {
		case "cpu":
			for _, f := range strings.Split(o.value, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || v < 0 || v > 100 {
					return a, fmt.Errorf("%w: --cpu %q: %q: want percentages 0-100, one per run", ErrUsage, o.value, f)
				}
				a.CPU = append(a.CPU, v)
			}
		case "json":
			a.JSON = true
		case "plot":
			a.Plot = o.value
		case "h":
			a.Help = true
		}
	}
	for _, op := range operands {
		name, path, ok := strings.Cut(op, "=")
		if !ok {
			path = op
			name = strings.TrimSuffix(filepath.Base(op), filepath.Ext(op))
		}
		if name == "" || path == "" {
			return a, fmt.Errorf("%w: compare: %q: want [NAME=]FILE", ErrUsage, op)
		}
		a.Runs = append(a.Runs, NamedFile{name, path})
	}
	if len(a.Runs) == 0 && !a.Help {
		return a, fmt.Errorf("%w: compare: give the runs' --json results, the baseline first", ErrUsage)
	}
	if a.CPU != nil && len(a.CPU) != len(a.Runs) {
		return a, fmt.Errorf("%w: --cpu has %d values for %d runs", ErrUsage, len(a.CPU), len(a.Runs))
	}
	return a, nil
}

// CompareFiles reads the runs' JSON results and compares them against the
// first; it also returns each run's latency percentile spectrum.
func CompareFiles(a CompareArgs) (Comparison, []PercentileSeries, error) {
	var figs []Figures
	var series []PercentileSeries
	for i, r := range a.Runs {
		f, err := os.Open(r.Path)
		if err != nil {
			return Comparison{}, nil, err
		}
		res, err := ReadResultJSON(f)
		f.Close()
		if err != nil {
			return Comparison{}, nil, fmt.Errorf("%s: %w", r.Path, err)
		}
		fig := FiguresOf(r.Name, res)
		if a.CPU != nil {
			fig.CPU = a.CPU[i]
		}
		figs = append(figs, fig)
		if res.Histograms.Latency.TotalCount() > 0 {
			series = append(series, PercentileSeries{Name: r.Name, Points: Spectrum(res.Histograms.Latency, 5)})
		}
	}
	return Compare(figs...), series, nil
}

// WriteComparePlots draws a comparison into two SVG files: the runs'
// latency percentiles overlaid at path, and their throughput with uplift
// labels at path with "-throughput" before the extension.
func WriteComparePlots(path, title string, c Comparison, series []PercentileSeries) ([]string, error) {
	var p, t bytes.Buffer
	if err := PlotPercentiles(&p, title+": latency by percentile", series); err != nil {
		return nil, err
	}
	if err := PlotThroughput(&t, title+": throughput", c); err != nil {
		return nil, err
	}
	bars := strings.TrimSuffix(path, ".svg") + "-throughput.svg"
	if err := os.WriteFile(path, p.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(bars, t.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return []string{path, bars}, nil
}
