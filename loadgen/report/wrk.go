package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/nettune/nettune/loadgen"
)

// WrkOptions selects the optional parts of the wrk2 report.
type WrkOptions struct {
	// Latency adds the HdrHistogram "Latency Distribution" block and the
	// detailed percentile spectrum (wrk2's --latency, -L).
	Latency bool
	// Uncorrected adds the same block for the service-time histogram
	// (wrk2's -U).
	Uncorrected bool
	// Duration is the configured test length for the "Running 1m test"
	// header. Default: the result's Elapsed, rounded to seconds.
	Duration time.Duration
}

// WriteWrkHeader writes wrk's first two lines ("Running 1m test @ URL",
// "  2 threads and 10 connections"), which wrk prints before the run.
func WriteWrkHeader(w io.Writer, url string, d time.Duration, threads, connections int) error {
	_, err := fmt.Fprintf(w, "Running %s test @ %s\n  %d threads and %d connections\n",
		formatTimeS(math.Round(d.Seconds())), url, threads, connections)
	return err
}

// WriteWrk writes res in wrk2's text layout: the Thread Stats table, the
// optional latency distributions, the request and byte counts, socket
// errors when any, non-2xx/3xx responses when any, Requests/sec and
// Transfer/sec. It does not write the header (see WriteWrkHeader).
func WriteWrk(w io.Writer, res *loadgen.Result, opt WrkOptions) error {
	b := bufio.NewWriter(w)
	h := res.Histograms.Latency
	fmt.Fprintf(b, "  Thread Stats%6s%11s%8s%12s\n", "Avg", "Stdev", "Max", "+/- Stdev")
	mean, sd := h.Mean(), h.StdDev()
	b.WriteString(statsRow("Latency", mean, sd, float64(h.Max()), withinStdevHist(h, mean, sd), FormatTimeUS))
	rmean, rsd, rmax, rwithin := sampleStats(res.RateSamples)
	b.WriteString(statsRow("Req/Sec", rmean, rsd, rmax, rwithin, formatMetric))
	if opt.Latency || opt.Uncorrected {
		writeHdrLatency(b, h, "Recorded Latency")
		fmt.Fprintf(b, "----------------------------------------------------------\n")
	}
	if opt.Uncorrected {
		fmt.Fprintf(b, "\n")
		writeHdrLatency(b, res.Histograms.Service, "Uncorrected Latency (measured without taking delayed starts into account)")
		fmt.Fprintf(b, "----------------------------------------------------------\n")
	}
	e := res.Errors
	fmt.Fprintf(b, "  %d requests in %s, %sB read\n", res.Requests,
		FormatTimeUS(float64(res.Elapsed.Microseconds())), formatBinary(float64(res.Bytes)))
	if e.Socket()-e.TLS > 0 {
		fmt.Fprintf(b, "  Socket errors: connect %d, read %d, write %d, timeout %d\n", e.Connect, e.Read, e.Write, e.Timeout)
	}
	if e.TLS > 0 {
		fmt.Fprintf(b, "  TLS handshake errors: %d\n", e.TLS)
	}
	if e.Status > 0 {
		if res.OKStatus == "" || res.OKStatus == loadgen.DefaultOKStatus {
			fmt.Fprintf(b, "  Non-2xx or 3xx responses: %d\n", e.Status)
		} else {
			fmt.Fprintf(b, "  Responses outside the OK statuses (%s): %d\n", res.OKStatus, e.Status)
		}
	}
	if st := res.Statuses; st != (loadgen.StatusClasses{}) && st.Success != res.Requests {
		fmt.Fprintf(b, "  Status classes: %s\n", st)
	}
	if len(res.Targets) > 0 {
		writeTargets(b, res.Targets)
	}
	if d := res.Drain; d.Requests+d.Errors+d.Timeouts > 0 {
		fmt.Fprintf(b, "  Drained after the window in %s: %d responses, %d errors, %d timeouts (not counted above)\n",
			FormatTimeUS(float64(d.Elapsed.Microseconds())), d.Requests, d.Errors, d.Timeouts)
	}
	secs := res.Elapsed.Seconds()
	var rps, bps float64
	if secs > 0 {
		rps, bps = float64(res.Requests)/secs, float64(res.Bytes)/secs
	}
	fmt.Fprintf(b, "Requests/sec: %9.2f\n", rps)
	fmt.Fprintf(b, "Transfer/sec: %10sB\n", formatBinary(bps))
	return b.Flush()
}

// statsRow is one line of wrk's Thread Stats table.
func statsRow(name string, mean, sd, max, within float64, format func(float64) string) string {
	return fmt.Sprintf("    %-10s%s%s%s%8.2f%%\n", name,
		padUnits(format(mean), 8), padUnits(format(sd), 10), padUnits(format(max), 9), within)
}

var wrkPercentiles = []float64{50, 75, 90, 99, 99.9, 99.99, 99.999, 100}

func writeHdrLatency(b *bufio.Writer, h *hdrhistogram.Histogram, what string) {
	fmt.Fprintf(b, "  Latency Distribution (HdrHistogram - %s)\n", what)
	for _, p := range wrkPercentiles {
		fmt.Fprintf(b, "%7.3f%%%s\n", p, padUnits(FormatTimeUS(float64(h.ValueAtQuantile(p))), 10))
	}
	fmt.Fprintf(b, "\n  Detailed Percentile spectrum:\n")
	writeSpectrum(b, h, 1000)
}

// writeSpectrum writes HdrHistogram's classic percentile distribution
// (hdr_percentiles_print with 5 ticks per half distance), values divided
// by scale.
func writeSpectrum(b *bufio.Writer, h *hdrhistogram.Histogram, scale float64) {
	fmt.Fprintf(b, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	if h.TotalCount() > 0 {
		for _, br := range h.CumulativeDistributionWithTicks(5) {
			q := br.Quantile / 100
			inv := fmt.Sprintf("%12.2f", 1/(1-q))
			if q >= 1 {
				inv = fmt.Sprintf("%12s", "inf")
			}
			fmt.Fprintf(b, "%12.*f %12f %12d %s\n", h.SignificantFigures(), float64(br.ValueAt)/scale, q, br.Count, inv)
		}
	}
	mean, sd := h.Mean(), h.StdDev()
	if h.TotalCount() == 0 {
		mean, sd = math.NaN(), math.NaN()
	}
	fmt.Fprintf(b, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", mean/scale, sd/scale)
	fmt.Fprintf(b, "#[Max     = %12.3f, Total count    = %12d]\n", float64(h.Max())/scale, h.TotalCount())
	fmt.Fprintf(b, "#[Buckets = %12d, SubBuckets     = %12d]\n", bucketCount(h), subBucketCount(h))
}

// subBucketCount and bucketCount recompute the histogram's layout (the Go
// library does not export it) for the spectrum footer.
func subBucketCount(h *hdrhistogram.Histogram) int64 {
	largest := 2 * math.Pow10(int(h.SignificantFigures()))
	return int64(1) << uint(math.Ceil(math.Log2(largest)))
}

func bucketCount(h *hdrhistogram.Histogram) int64 {
	unitMag := uint(math.Floor(math.Log2(float64(h.LowestTrackableValue()))))
	smallest := subBucketCount(h) << unitMag
	n := int64(1)
	for smallest <= h.HighestTrackableValue() {
		if smallest > math.MaxInt64/2 {
			return n + 1
		}
		smallest <<= 1
		n++
	}
	return n
}

// withinStdevHist is the share of recorded values within one standard
// deviation of the mean, counted over histogram buckets as wrk2 does.
func withinStdevHist(h *hdrhistogram.Histogram, mean, sd float64) float64 {
	total := h.TotalCount()
	if total == 0 {
		return 0
	}
	lower, upper := int64(mean-sd), int64(mean+sd)
	var cum, lowerCount, upperCount int64
	found := false
	for _, bar := range h.Distribution() {
		cum += bar.Count
		if lower > bar.From {
			lowerCount = cum
		}
		if upper < bar.To {
			upperCount = cum
			found = true
			break
		}
	}
	if !found {
		upperCount = total
	}
	return 100 * float64(upperCount-lowerCount) / float64(total)
}

// sampleStats returns mean, sample standard deviation, max and the share
// within one standard deviation, as wrk's stats.c computes them.
func sampleStats(xs []float64) (mean, sd, max, within float64) {
	if len(xs) == 0 {
		return 0, 0, 0, 0
	}
	for _, x := range xs {
		mean += x
		if x > max {
			max = x
		}
	}
	mean /= float64(len(xs))
	if len(xs) > 1 {
		var s float64
		for _, x := range xs {
			s += (x - mean) * (x - mean)
		}
		sd = math.Sqrt(s / float64(len(xs)-1))
	}
	n := 0
	for _, x := range xs {
		if x >= mean-sd && x <= mean+sd {
			n++
		}
	}
	return mean, sd, max, 100 * float64(n) / float64(len(xs))
}

// writeTargets writes one line per target: its requests, errors, status
// classes and corrected latency.
func writeTargets(b *bufio.Writer, ts []loadgen.TargetResult) {
	fmt.Fprintf(b, "  Targets:\n")
	for i, t := range ts {
		var p50, p99, max float64
		if h := t.Latency; h != nil && h.TotalCount() > 0 {
			p50, p99, max = float64(h.ValueAtQuantile(50)), float64(h.ValueAtQuantile(99)), float64(h.Max())
		}
		fmt.Fprintf(b, "    %d %s %s: %d requests, %d errors, %s; p50 %s, p99 %s, max %s\n", i+1, t.Method, t.URL,
			t.Requests, t.Errors, t.Statuses, FormatTimeUS(p50), FormatTimeUS(p99), FormatTimeUS(max))
	}
}
