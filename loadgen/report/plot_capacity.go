package report

import (
	"fmt"
	"html"
	"io"
	"math"

	"github.com/nettune/nettune/loadgen"
)

// PlotCapacity writes an SVG bar chart of a step comparison: a bar per
// step at its capacity's median, a whisker over the runs' min–max, and a
// label with the median and its change against the baseline and the
// previous step as StepComparison.Text writes it (Uplift.String).
func PlotCapacity(w io.Writer, title string, c loadgen.StepComparison) error {
	s := newSVG(panelWidth, panelHeight, title)
	s.capacityPanel(0, c)
	return s.close(w)
}

// StackedBars are the data of a stacked bar chart: a bar per step, each
// the sum of its parts, drawn bottom to top in Parts' order.
type StackedBars struct {
	// Axis is the y axis's legend, its unit included: "CPU µs per
	// request".
	Axis string
	// Parts names the parts, bottom to top: "user", "system", ….
	Parts []string
	// Bars are the steps' bars, in the order of the steps.
	Bars []StackedBar
}

// StackedBar is one step's bar: Values in StackedBars.Parts' order. A bar
// with no values is drawn as its name alone (nothing was read).
type StackedBar struct {
	Name   string
	Values []float64
}

// PlotSteps writes PlotCapacity's chart and, to its right, bars's stacked
// bar per step (where each step's time went), in one SVG file; with no
// bars it is PlotCapacity's.
func PlotSteps(w io.Writer, title string, c loadgen.StepComparison, bars StackedBars) error {
	if len(bars.Bars) == 0 {
		return PlotCapacity(w, title, c)
	}
	if len(bars.Parts) > len(palette) {
		return fmt.Errorf("loadgen: a stacked chart of %d parts: at most %d", len(bars.Parts), len(palette))
	}
	for _, b := range bars.Bars {
		if len(b.Values) != 0 && len(b.Values) != len(bars.Parts) {
			return fmt.Errorf("loadgen: stacked bar %q has %d values for %d parts", b.Name, len(b.Values), len(bars.Parts))
		}
	}
	s := newSVG(2*panelWidth, panelHeight, title)
	s.capacityPanel(0, c)
	s.stackedPanel(panelWidth, bars)
	return s.close(w)
}

// A chart panel's size and margins; PlotSteps puts two side by side.
const (
	panelWidth, panelHeight                              = 800, 480
	panelLeft, panelRight, panelTop, panelBottom         = 90, 20, 50, 80
	plotWidth, plotHeight                        float64 = panelWidth - panelLeft - panelRight, panelHeight - panelTop - panelBottom
)

// axes draws a panel's grid, its axes and the y legend, from 0 to ymax,
// and returns the panel's y of a value.
func (s *svg) axes(x0, ymax float64, legend string) (y func(float64) float64) {
	left := x0 + panelLeft
	y = func(v float64) float64 { return panelTop + plotHeight - plotHeight*v/ymax }
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		s.line(left, y(v), left+plotWidth, y(v), "#dddddd", 1)
		s.text(left-6, y(v)+4, "end", "11", trimFloat(v))
	}
	s.line(left, panelTop+plotHeight, left+plotWidth, panelTop+plotHeight, "black", 1)
	s.line(left, panelTop, left, panelTop+plotHeight, "black", 1)
	fmt.Fprintf(&s.b, `<text transform="translate(%.1f,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n",
		x0+18, panelTop+plotHeight/2, html.EscapeString(legend))
	return y
}

// capacityPanel draws PlotCapacity's bars in the panel at x0.
func (s *svg) capacityPanel(x0 float64, c loadgen.StepComparison) {
	var maxV float64
	for _, r := range c.Rows {
		maxV = math.Max(maxV, math.Max(r.Capacity.Median, r.Capacity.Max))
	}
	y := s.axes(x0, niceMax(maxV*1.15), "capacity, requests/s (median, min-max)")
	slot := plotWidth / float64(max(len(c.Rows), 1))
	for i, r := range c.Rows {
		med := r.Capacity.Median
		bx := x0 + panelLeft + slot*float64(i) + slot*0.15
		bw := slot * 0.7
		cx := bx + bw/2
		fmt.Fprintf(&s.b, `<rect class="bar" data-name="%s" data-value="%.2f" data-min="%.2f" data-max="%.2f" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
			html.EscapeString(r.Name), med, r.Capacity.Min, r.Capacity.Max, bx, y(med), bw, panelTop+plotHeight-y(med), palette[0])
		labelY := y(med)
		if r.Capacity.N > 1 {
			s.line(cx, y(r.Capacity.Min), cx, y(r.Capacity.Max), "black", 1.5)
			s.line(cx-bw/6, y(r.Capacity.Min), cx+bw/6, y(r.Capacity.Min), "black", 1.5)
			s.line(cx-bw/6, y(r.Capacity.Max), cx+bw/6, y(r.Capacity.Max), "black", 1.5)
			labelY = math.Min(labelY, y(r.Capacity.Max))
		}
		s.text(cx, labelY-20, "middle", "11", fmt.Sprintf("%.0f (%d runs)", med, r.Capacity.N))
		if i > 0 {
			s.text(cx, labelY-6, "middle", "10", fmt.Sprintf("%s base, %s prev", r.VsBaseline, r.VsPrevious))
		}
		s.text(cx, panelTop+plotHeight+16, "middle", "11", r.Name)
	}
}

// stackedPanel draws bars in the panel at x0: a segment per part, its
// total above the bar, and a legend of the parts under the axis.
func (s *svg) stackedPanel(x0 float64, bars StackedBars) {
	var maxV float64
	for _, b := range bars.Bars {
		maxV = math.Max(maxV, sum(b.Values))
	}
	y := s.axes(x0, niceMax(maxV*1.15), bars.Axis)
	slot := plotWidth / float64(len(bars.Bars))
	for i, b := range bars.Bars {
		bx := x0 + panelLeft + slot*float64(i) + slot*0.15
		bw := slot * 0.7
		var base float64
		for j, v := range b.Values {
			if v <= 0 {
				continue
			}
			fmt.Fprintf(&s.b, `<rect class="part" data-name="%s" data-part="%s" data-value="%.3f" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
				html.EscapeString(b.Name), html.EscapeString(bars.Parts[j]), v, bx, y(base+v), bw, y(base)-y(base+v), palette[j])
			base += v
		}
		label := "not read"
		if len(b.Values) > 0 {
			label = trimFloat(math.Round(base*10) / 10)
		}
		s.text(bx+bw/2, y(base)-6, "middle", "11", label)
		s.text(bx+bw/2, panelTop+plotHeight+16, "middle", "11", b.Name)
	}
	step := plotWidth / float64(len(bars.Parts))
	for j, p := range bars.Parts {
		lx := x0 + panelLeft + step*float64(j)
		fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/>`+"\n", lx, panelTop+plotHeight+38, palette[j])
		s.text(lx+14, panelTop+plotHeight+47, "start", "11", p)
	}
}

func sum(vs []float64) float64 {
	var t float64
	for _, v := range vs {
		t += max(v, 0)
	}
	return t
}
