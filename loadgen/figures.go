package loadgen

import (
	"fmt"
	"io"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/nettune/nettune/loadgen/internal/format"
)

// FiguresOf returns the headline figures of a run, for Compare, sweeps and
// bar charts: latencies from the corrected histogram, errors of every
// class (connect, read, write, timeout, status), throughput as the
// achieved rate. Load is the offered rate of an open-model run, else the
// connections. CPU is left 0: the run does not measure the server.
func FiguresOf(name string, r *Result) Figures {
	f := Figures{
		Name:       name,
		Load:       float64(r.Connections),
		Requests:   int64(r.Requests),
		Errors:     int64(r.Errors.Socket() + r.Errors.Status),
		Throughput: r.AchievedRate,
	}
	if r.Pacer != "" {
		f.Load = r.OfferedRate
	}
	if h := r.Histograms.Latency; h != nil && h.TotalCount() > 0 {
		f.Mean = format.Micros(h.Mean())
		f.P50 = format.Micros(float64(h.ValueAtQuantile(50)))
		f.P90 = format.Micros(float64(h.ValueAtQuantile(90)))
		f.P99 = format.Micros(float64(h.ValueAtQuantile(99)))
		f.P999 = format.Micros(float64(h.ValueAtQuantile(99.9)))
		f.Max = format.Micros(float64(h.Max()))
	}
	return f
}

// HlogRecorder writes a run's interval snapshots as an HdrHistogram
// interval log: per interval (one second by default) a corrected, an
// uncorrected and, in an open model, a lag histogram, each tagged. Use its
// Record method as Config.OnInterval (or call it from one).
type HlogRecorder struct {
	mu      sync.Mutex
	out     io.Writer
	comment string
	w       *HlogWriter
	err     error
}

// NewHlogRecorder returns a recorder writing to w; comment (e.g. the
// command line) goes in the log's header, written with the first interval.
func NewHlogRecorder(w io.Writer, comment string) *HlogRecorder {
	return &HlogRecorder{out: w, comment: comment}
}

// Record writes one snapshot's histograms. After an error it does nothing;
// Err returns the error.
func (h *HlogRecorder) Record(s Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return
	}
	if h.w == nil {
		h.w, h.err = NewHlogWriter(h.out, s.RunStart, h.comment)
		if h.err != nil {
			return
		}
	}
	start, end := s.RunStart.Add(s.Start), s.RunStart.Add(s.End)
	for _, iv := range []struct {
		tag  string
		hist *hdrhistogram.Histogram
	}{{TagCorrected, s.Latency}, {TagUncorrected, s.Service}, {TagLag, s.Lag}} {
		if iv.hist == nil {
			continue
		}
		if err := h.w.Write(Interval{Tag: iv.tag, Start: start, End: end, Hist: iv.hist}); err != nil {
			h.err = fmt.Errorf("loadgen: hlog interval %d: %w", s.Index, err)
			return
		}
	}
}

// Err returns the first error writing the log, or an error when no
// interval was recorded.
func (h *HlogRecorder) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil && h.w == nil {
		return fmt.Errorf("loadgen: hlog: no interval was recorded")
	}
	return h.err
}
