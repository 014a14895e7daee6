package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// readHlogFile reads an interval log from a file; errors name the file.
func readHlogFile(path string) (*report.IntervalLog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l, err := report.ReadHlog(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// mergeHlogFiles reads the logs of several load generators and merges
// them (see report.MergeHlogs); when out is not empty it writes the merged log
// there.
func mergeHlogFiles(out, tag string, paths ...string) (*report.MergedLogs, error) {
	var logs []*report.IntervalLog
	for _, p := range paths {
		l, err := readHlogFile(p)
		if err != nil {
			return nil, err
		}
		if h, _, _ := l.Total(tag); h == nil {
			return nil, fmt.Errorf("merge: %s has no interval tagged %q", p, tag)
		}
		logs = append(logs, l)
	}
	m, err := report.MergeHlogs(tag, logs...)
	if err != nil {
		return nil, err
	}
	if out != "" {
		var b bytes.Buffer
		if err := report.WriteHlog(&b, &m.Log); err != nil {
			return nil, err
		}
		if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// writeRunPlot draws a run's corrected and uncorrected latency
// percentiles into an SVG file.
func writeRunPlot(path, title string, r *loadgen.Result) error {
	series := []report.PercentileSeries{{Name: "corrected", Points: report.Spectrum(r.Histograms.Latency, 5)}}
	if r.Pacer != "" {
		series = append(series, report.PercentileSeries{Name: "uncorrected (service)", Points: report.Spectrum(r.Histograms.Service, 5)})
	}
	var b bytes.Buffer
	if err := report.PlotPercentiles(&b, title, series); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// writeSweepPlots draws a sweep into two SVG files: the latency
// percentiles of every level at path, and the throughput of every level,
// with its change against the first and the previous, at path with
// "-throughput" before the extension. It returns the files written.
func writeSweepPlots(path, title string, s *loadgen.SweepResult) ([]string, error) {
	return writeComparePlots(path, title, s.Comparison(), report.SweepSeries(s))
}

// namedFile is one input of a comparison.
type namedFile struct{ Name, Path string }

// compareFiles reads the runs' JSON results and compares them against the
// first; it also returns each run's latency percentile spectrum.
func compareFiles(runs []namedFile, cpu []float64) (loadgen.Comparison, []report.PercentileSeries, error) {
	var figs []loadgen.Figures
	var series []report.PercentileSeries
	for i, r := range runs {
		f, err := os.Open(r.Path)
		if err != nil {
			return loadgen.Comparison{}, nil, err
		}
		res, err := report.ReadResultJSON(f)
		f.Close()
		if err != nil {
			return loadgen.Comparison{}, nil, fmt.Errorf("%s: %w", r.Path, err)
		}
		fig := loadgen.FiguresOf(r.Name, res)
		if cpu != nil {
			fig.CPU = cpu[i]
		}
		figs = append(figs, fig)
		if res.Histograms.Latency.TotalCount() > 0 {
			series = append(series, report.PercentileSeries{Name: r.Name, Points: report.Spectrum(res.Histograms.Latency, 5)})
		}
	}
	return loadgen.Compare(figs...), series, nil
}

// writeComparePlots draws a comparison into two SVG files: the runs'
// latency percentiles overlaid at path, and their throughput with uplift
// labels at path with "-throughput" before the extension.
func writeComparePlots(path, title string, c loadgen.Comparison, series []report.PercentileSeries) ([]string, error) {
	var p, t bytes.Buffer
	if err := report.PlotPercentiles(&p, title+": latency by percentile", series); err != nil {
		return nil, err
	}
	if err := report.PlotThroughput(&t, title+": throughput", c); err != nil {
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
