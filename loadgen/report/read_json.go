package report

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/internal/format"
)

// ReadResultJSON rebuilds a Result from WriteJSON's output (the CLI's
// --json): counts, errors, rates, and the histograms decoded from their
// HdrHistogram encoding, so it can be compared or plotted later.
func ReadResultJSON(r io.Reader) (*loadgen.Result, error) {
	var j resultJSON
	if err := json.NewDecoder(r).Decode(&j); err != nil {
		return nil, fmt.Errorf("loadgen: result JSON: %w", err)
	}
	res := &loadgen.Result{
		URL: j.URL, Method: j.Method, Connections: j.Connections, Threads: j.Threads, KeepAlive: j.KeepAlive,
		Pacer: j.Pacer, OfferedRate: j.OfferedRate, AchievedRate: j.AchievedRate, Start: j.Start,
		Elapsed: format.Seconds(j.ElapsedSeconds), Warmup: format.Seconds(j.WarmupSeconds), Requests: j.Requests, Sent: j.Sent,
		Bytes: j.Bytes, BodyBytes: j.BodyBytes, KeepAliveResponses: j.KeepAliveResponses,
		LengthMismatches: j.LengthMismatches, DocumentLength: j.DocumentLength, Server: j.Server,
		Errors: j.Errors, Statuses: j.Statuses, OKStatus: j.OKStatus, Connects: j.Connects, Reconnects: j.Reconnects, Incomplete: j.Incomplete,
		Missed: j.Missed, Dropped: j.Dropped, OpenFiles: j.OpenFiles, Generator: j.Generator, RateSamples: j.RateSamples,
		Histograms: newHistograms(),
		Drain: loadgen.Drain{Requests: j.Drain.Requests, Errors: j.Drain.Errors, Timeouts: j.Drain.Timeouts,
			Elapsed: format.Seconds(j.Drain.ElapsedSeconds), Latency: loadgen.NewHistogram()},
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
	for i, tj := range j.Targets {
		t := loadgen.TargetResult{Method: tj.Method, URL: tj.URL, Requests: tj.Requests, Errors: tj.Errors, Statuses: tj.Statuses, Latency: newTargetHistogram()}
		if tj.Latency.Encoded != "" {
			h, err := decodeHist(tj.Latency.Encoded)
			if err != nil {
				return nil, fmt.Errorf("loadgen: result JSON: target %d latency histogram: %w", i+1, err)
			}
			if h.TotalCount() != tj.Latency.Count {
				return nil, fmt.Errorf("loadgen: result JSON: target %d latency histogram holds %d values, its count says %d", i+1, h.TotalCount(), tj.Latency.Count)
			}
			t.Latency = h
		}
		res.Targets = append(res.Targets, t)
	}
	for name, dst := range map[string]**hdrhistogram.Histogram{
		"latency": &res.Histograms.Latency, "service": &res.Histograms.Service, "lag": &res.Histograms.Lag, "own_lag": &res.Histograms.OwnLag,
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

// newHistograms returns the empty histograms of a Result, as Run makes
// them.
func newHistograms() loadgen.Histograms {
	return loadgen.Histograms{
		Latency: loadgen.NewHistogram(), Service: loadgen.NewHistogram(), Lag: loadgen.NewHistogram(),
		Connect: loadgen.NewHistogram(), Processing: loadgen.NewHistogram(), Waiting: loadgen.NewHistogram(),
	}
}

// newTargetHistogram returns an empty TargetResult.Latency: the range of
// NewHistogram at loadgen.TargetHistSigFigs.
func newTargetHistogram() *hdrhistogram.Histogram {
	h := loadgen.NewHistogram()
	return hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), loadgen.TargetHistSigFigs)
}
