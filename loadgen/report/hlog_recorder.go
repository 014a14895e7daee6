package report

import (
	"fmt"
	"io"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/nettune/nettune/loadgen"
)

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
func (h *HlogRecorder) Record(s loadgen.Snapshot) {
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
