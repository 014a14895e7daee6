package loadgen

import (
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
	if h := r.Histograms.OwnLag; h != nil && h.TotalCount() > 0 && r.Pacer != "" {
		f.OwnLagP99 = format.Micros(float64(h.ValueAtQuantile(99)))
	}
	return f
}
