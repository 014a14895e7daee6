package loadgen

import (
	"fmt"
	"html"
	"io"
	"math"
)

// PlotCapacity writes an SVG bar chart of a step comparison: a bar per
// step at its capacity's median, a whisker over the runs' min–max, and a
// label with the median and its change against the baseline and the
// previous step as StepComparison.Text writes it (Uplift.String).
func PlotCapacity(w io.Writer, title string, c StepComparison) error {
	const width, height, left, right, top, bottom = 800, 480, 90, 20, 50, 80
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	var maxV float64
	for _, r := range c.Rows {
		maxV = math.Max(maxV, math.Max(r.Capacity.Median, r.Capacity.Max))
	}
	ymax := niceMax(maxV * 1.15)
	y := func(v float64) float64 { return top + ph - ph*v/ymax }
	s := newSVG(width, height, title)
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		s.line(left, y(v), left+pw, y(v), "#dddddd", 1)
		s.text(left-6, y(v)+4, "end", "11", trimFloat(v))
	}
	s.line(left, top+ph, left+pw, top+ph, "black", 1)
	s.line(left, top, left, top+ph, "black", 1)
	fmt.Fprintf(&s.b, `<text transform="translate(18,%.1f) rotate(-90)" text-anchor="middle">capacity, requests/s (median, min-max)</text>`+"\n", top+ph/2)
	slot := pw / float64(max(len(c.Rows), 1))
	for i, r := range c.Rows {
		med := r.Capacity.Median
		bx := left + slot*float64(i) + slot*0.15
		bw := slot * 0.7
		cx := bx + bw/2
		fmt.Fprintf(&s.b, `<rect class="bar" data-name="%s" data-value="%.2f" data-min="%.2f" data-max="%.2f" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
			html.EscapeString(r.Name), med, r.Capacity.Min, r.Capacity.Max, bx, y(med), bw, top+ph-y(med), palette[0])
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
		s.text(cx, top+ph+16, "middle", "11", r.Name)
	}
	return s.close(w)
}
