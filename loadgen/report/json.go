package report

import (
	"encoding/json"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/nettune/nettune/loadgen"
)

// histogramJSON is a histogram's summary in JSON, in microseconds, with
// the whole histogram in HdrHistogram's compressed V2 encoding (base64,
// the form .hlog files and HdrHistogram's tools read), so no number is
// lost.
type histogramJSON struct {
	Count       int64            `json:"count"`
	Min         int64            `json:"min_us"`
	Max         int64            `json:"max_us"`
	Mean        float64          `json:"mean_us"`
	StdDev      float64          `json:"stdev_us"`
	Percentiles map[string]int64 `json:"percentiles_us"`
	Encoded     string           `json:"hdr_base64"`
}

var jsonPercentiles = []struct {
	name string
	q    float64
}{{"50", 50}, {"75", 75}, {"90", 90}, {"99", 99}, {"99.9", 99.9}, {"99.99", 99.99}, {"99.999", 99.999}, {"100", 100}}

// summarizeHistogram returns h's JSON form.
func summarizeHistogram(h *hdrhistogram.Histogram) (histogramJSON, error) {
	out := histogramJSON{Count: h.TotalCount(), Percentiles: map[string]int64{}}
	if h.TotalCount() > 0 {
		out.Min, out.Max, out.Mean, out.StdDev = h.Min(), h.Max(), h.Mean(), h.StdDev()
	}
	for _, p := range jsonPercentiles {
		out.Percentiles[p.name] = h.ValueAtQuantile(p.q)
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return out, err
	}
	out.Encoded = string(enc)
	return out, nil
}

// resultJSON is the JSON form of a Result: every count, rate and
// histogram.
type resultJSON struct {
	URL                string                   `json:"url"`
	Method             string                   `json:"method"`
	Connections        int                      `json:"connections"`
	Threads            int                      `json:"threads"`
	KeepAlive          bool                     `json:"keep_alive"`
	Pacer              string                   `json:"pacer,omitempty"`
	OfferedRate        float64                  `json:"offered_rate"`
	AchievedRate       float64                  `json:"achieved_rate"`
	Start              time.Time                `json:"start"`
	ElapsedSeconds     float64                  `json:"elapsed_s"`
	WarmupSeconds      float64                  `json:"warmup_s"`
	Requests           uint64                   `json:"requests"`
	Sent               uint64                   `json:"sent"`
	Bytes              uint64                   `json:"bytes"`
	BodyBytes          uint64                   `json:"body_bytes"`
	KeepAliveResponses uint64                   `json:"keep_alive_responses"`
	LengthMismatches   uint64                   `json:"length_mismatches"`
	DocumentLength     int64                    `json:"document_length"`
	Server             string                   `json:"server"`
	Errors             loadgen.Errors           `json:"errors"`
	Statuses           loadgen.StatusClasses    `json:"status_classes"`
	OKStatus           string                   `json:"ok_status,omitempty"`
	Targets            []targetResultJSON       `json:"targets,omitempty"`
	Connects           uint64                   `json:"connects"`
	Reconnects         uint64                   `json:"reconnects"`
	Incomplete         uint64                   `json:"incomplete"`
	Missed             uint64                   `json:"missed"`
	Drain              drainJSON                `json:"drain"`
	TLS                *loadgen.TLSStats        `json:"tls,omitempty"`
	Dropped            int64                    `json:"dropped"`
	OpenFiles          loadgen.RlimitChange     `json:"open_files"`
	Generator          loadgen.GeneratorUse     `json:"generator,omitzero"`
	RateSamples        []float64                `json:"rate_samples"`
	Histograms         map[string]histogramJSON `json:"histograms"`
}

// targetResultJSON is a TargetResult in JSON form; its latency is in
// microseconds, as every histogram's.
type targetResultJSON struct {
	Method   string                `json:"method"`
	URL      string                `json:"url"`
	Requests uint64                `json:"requests"`
	Errors   uint64                `json:"errors"`
	Statuses loadgen.StatusClasses `json:"status_classes"`
	Latency  histogramJSON         `json:"latency"`
}

// drainJSON is Result.Drain in JSON form.
type drainJSON struct {
	Requests       uint64        `json:"requests"`
	Errors         uint64        `json:"errors"`
	Timeouts       uint64        `json:"timeouts"`
	ElapsedSeconds float64       `json:"elapsed_s"`
	Latency        histogramJSON `json:"latency"`
}

// jsonOf returns res in its JSON form.
func jsonOf(res *loadgen.Result) (resultJSON, error) {
	out := resultJSON{
		URL: res.URL, Method: res.Method, Connections: res.Connections, Threads: res.Threads,
		KeepAlive: res.KeepAlive, Pacer: res.Pacer, OfferedRate: res.OfferedRate, AchievedRate: res.AchievedRate,
		Start: res.Start, ElapsedSeconds: res.Elapsed.Seconds(), WarmupSeconds: res.Warmup.Seconds(),
		Requests: res.Requests, Sent: res.Sent, Bytes: res.Bytes, BodyBytes: res.BodyBytes,
		KeepAliveResponses: res.KeepAliveResponses, LengthMismatches: res.LengthMismatches,
		DocumentLength: res.DocumentLength, Server: res.Server, Errors: res.Errors,
		Statuses: res.Statuses, OKStatus: res.OKStatus,
		Connects: res.Connects, Reconnects: res.Reconnects, Incomplete: res.Incomplete, Missed: res.Missed,
		Dropped: res.Dropped, OpenFiles: res.OpenFiles, Generator: res.Generator, RateSamples: res.RateSamples,
		Histograms: map[string]histogramJSON{},
	}
	out.Drain = drainJSON{Requests: res.Drain.Requests, Errors: res.Drain.Errors, Timeouts: res.Drain.Timeouts,
		ElapsedSeconds: res.Drain.Elapsed.Seconds()}
	if res.Drain.Latency != nil {
		s, err := summarizeHistogram(res.Drain.Latency)
		if err != nil {
			return out, err
		}
		out.Drain.Latency = s
	}
	for _, t := range res.Targets {
		tj := targetResultJSON{Method: t.Method, URL: t.URL, Requests: t.Requests, Errors: t.Errors, Statuses: t.Statuses}
		if t.Latency != nil {
			s, err := summarizeHistogram(t.Latency)
			if err != nil {
				return out, err
			}
			tj.Latency = s
		}
		out.Targets = append(out.Targets, tj)
	}
	if res.TLS != (loadgen.TLSStats{}) {
		ts := res.TLS
		out.TLS = &ts
	}
	if out.RateSamples == nil {
		out.RateSamples = []float64{}
	}
	if out.Errors.Errnos == nil {
		out.Errors.Errnos = []loadgen.ErrnoCount{}
	}
	h := res.Histograms
	for name, hist := range map[string]*hdrhistogram.Histogram{
		"latency": h.Latency, "service": h.Service, "lag": h.Lag, "own_lag": h.OwnLag,
		"connect": h.Connect, "processing": h.Processing, "waiting": h.Waiting,
	} {
		if hist == nil {
			continue
		}
		s, err := summarizeHistogram(hist)
		if err != nil {
			return out, err
		}
		out.Histograms[name] = s
	}
	return out, nil
}

// WriteJSON writes res as indented JSON.
func WriteJSON(w io.Writer, res *loadgen.Result) error {
	j, err := jsonOf(res)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
