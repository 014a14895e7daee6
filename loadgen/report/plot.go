package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/internal/format"
)

// PercentilePoint is one point of a latency distribution: the latency at
// or below which Percentile percent of requests completed.
type PercentilePoint struct {
	Percentile float64       // 0–100
	Latency    time.Duration // at or below
}

// PercentileSeries is one run's latency distribution, for PlotPercentiles.
type PercentileSeries struct {
	Name   string
	Points []PercentilePoint
}

// SweepSeries returns each level's latency percentile spectrum, for
// PlotPercentiles: one series per level that answered, named after it.
func SweepSeries(s *loadgen.SweepResult) []PercentileSeries {
	var out []PercentileSeries
	for _, l := range s.Levels {
		if l.Result != nil && l.Result.Histograms.Latency.TotalCount() > 0 {
			out = append(out, PercentileSeries{Name: l.Name, Points: Spectrum(l.Result.Histograms.Latency, 5)})
		}
	}
	return out
}

// Spectrum returns the percentile spectrum of a histogram of microsecond
// values, with ticksPerHalf points per halving of the remaining
// distance to 100% — the "Detailed Percentile spectrum" wrk2 prints with
// 5 — ending at 100%.
func Spectrum(h *hdrhistogram.Histogram, ticksPerHalf int) []PercentilePoint {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	var pts []PercentilePoint
	for _, b := range h.CumulativeDistributionWithTicks(int32(ticksPerHalf)) {
		pts = append(pts, PercentilePoint{Percentile: b.Quantile, Latency: format.Micros(float64(b.ValueAt))})
	}
	return pts
}

// maxNines bounds the x axis of a percentile plot: 99.9999%.
const maxNines = 6

// nines maps a percentile to the plot's x axis, log10(1/(1−p)), as
// HdrHistogram's plotter does: 90% is 1, 99% is 2, 99.9% is 3.
func nines(p float64) float64 {
	if p >= 100 {
		return maxNines
	}
	return math.Min(maxNines, math.Log10(100/(100-p)))
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// svg accumulates an SVG document.
type svg struct {
	b    strings.Builder
	w, h int
}

func newSVG(w, h int, title string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&s.b, `<title>%s</title>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&s.b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	s.text(float64(w)/2, 22, "middle", "14", title)
	return s
}

func (s *svg) text(x, y float64, anchor, size, t string) {
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%s">%s</text>`+"\n", x, y, anchor, size, html.EscapeString(t))
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64) {
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"/>`+"\n", x1, y1, x2, y2, stroke, width)
}

func (s *svg) close(w io.Writer) error {
	s.b.WriteString("</svg>\n")
	_, err := io.WriteString(w, s.b.String())
	return err
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// PlotPercentiles writes an SVG chart of latency by percentile, one line
// per series, with the x axis in "nines" (log scale in 1/(1−p): 0%, 90%,
// 99%, 99.9%, …) as HdrHistogram's plotter draws it, and latency in
// milliseconds on the y axis.
func PlotPercentiles(w io.Writer, title string, series []PercentileSeries) error {
	const width, height, left, right, top, bottom = 800, 480, 70, 20, 40, 70
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	var maxLat float64
	maxX := 2.0
	for _, s := range series {
		for _, p := range s.Points {
			maxLat = math.Max(maxLat, float64(p.Latency)/float64(time.Millisecond))
			maxX = math.Max(maxX, math.Ceil(nines(p.Percentile)))
		}
	}
	maxX = math.Min(maxX, maxNines)
	ymax := niceMax(maxLat)
	x := func(p float64) float64 { return left + pw*nines(p)/maxX }
	y := func(ms float64) float64 { return top + ph - ph*ms/ymax }

	s := newSVG(width, height, title)
	// Grid and axes.
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		s.line(left, y(v), left+pw, y(v), "#dddddd", 1)
		s.text(left-6, y(v)+4, "end", "11", trimFloat(v))
	}
	for n := 0; n <= int(maxX); n++ {
		p := 100 - 100/math.Pow(10, float64(n))
		xx := left + pw*float64(n)/maxX
		s.line(xx, top, xx, top+ph, "#dddddd", 1)
		s.text(xx, top+ph+16, "middle", "11", trimFloat(p)+"%")
	}
	s.line(left, top+ph, left+pw, top+ph, "black", 1)
	s.line(left, top, left, top+ph, "black", 1)
	s.text(left+pw/2, height-36, "middle", "12", "percentile")
	fmt.Fprintf(&s.b, `<text transform="translate(18,%.1f) rotate(-90)" text-anchor="middle">latency (ms)</text>`+"\n", top+ph/2)
	// Series.
	for i, ser := range series {
		color := palette[i%len(palette)]
		var pts []string
		for _, p := range ser.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.Percentile), y(float64(p.Latency)/float64(time.Millisecond))))
		}
		fmt.Fprintf(&s.b, `<polyline class="series" data-name="%s" fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n",
			html.EscapeString(ser.Name), color, strings.Join(pts, " "))
		ly := float64(height - 14)
		lx := left + float64(i)*160
		s.line(lx, ly-4, lx+20, ly-4, color, 3)
		s.text(lx+24, ly, "start", "11", ser.Name)
	}
	return s.close(w)
}

// PlotThroughput writes an SVG bar chart of requests/s per run of a
// comparison, each bar labelled with its throughput and its change against
// the baseline and the previous run, as the Arm Neoverse Tomcat tuning
// guide reports the uplift of each step.
func PlotThroughput(w io.Writer, title string, c loadgen.Comparison) error {
	const width, height, left, right, top, bottom = 800, 480, 90, 20, 50, 80
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	var maxT float64
	for _, r := range c.Rows {
		maxT = math.Max(maxT, r.Throughput)
	}
	ymax := niceMax(maxT * 1.1)
	y := func(v float64) float64 { return top + ph - ph*v/ymax }
	s := newSVG(width, height, title)
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		s.line(left, y(v), left+pw, y(v), "#dddddd", 1)
		s.text(left-6, y(v)+4, "end", "11", trimFloat(v))
	}
	s.line(left, top+ph, left+pw, top+ph, "black", 1)
	s.line(left, top, left, top+ph, "black", 1)
	fmt.Fprintf(&s.b, `<text transform="translate(18,%.1f) rotate(-90)" text-anchor="middle">requests/s</text>`+"\n", top+ph/2)
	n := float64(max(len(c.Rows), 1))
	slot := pw / n
	for i, r := range c.Rows {
		bx := left + slot*float64(i) + slot*0.15
		bw := slot * 0.7
		fmt.Fprintf(&s.b, `<rect class="bar" data-name="%s" data-value="%.2f" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
			html.EscapeString(r.Name), r.Throughput, bx, y(r.Throughput), bw, top+ph-y(r.Throughput), palette[0])
		cx := bx + bw/2
		s.text(cx, y(r.Throughput)-20, "middle", "11", fmt.Sprintf("%.0f", r.Throughput))
		if i > 0 {
			s.text(cx, y(r.Throughput)-6, "middle", "10", fmt.Sprintf("%s base, %s prev", format.Pct(r.VsBaseline), format.Pct(r.VsPrevious)))
		}
		s.text(cx, top+ph+16, "middle", "11", r.Name)
	}
	return s.close(w)
}

// trimFloat formats an axis value without needless decimals.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
