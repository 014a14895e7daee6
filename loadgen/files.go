// Results, interval logs and plots as files: what the command line reads
// and writes, for programs that do the same.

package loadgen

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

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
		Errors: j.Errors, Statuses: j.Statuses, OKStatus: j.OKStatus, Connects: j.Connects, Reconnects: j.Reconnects, Incomplete: j.Incomplete,
		Missed: j.Missed, Dropped: j.Dropped, OpenFiles: j.OpenFiles, Generator: j.Generator, RateSamples: j.RateSamples,
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
	for i, tj := range j.Targets {
		t := TargetResult{Method: tj.Method, URL: tj.URL, Requests: tj.Requests, Errors: tj.Errors, Statuses: tj.Statuses, Latency: newTargetHistogram()}
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
