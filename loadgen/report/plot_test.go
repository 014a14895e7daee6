package report_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/internal/fixture"
	"github.com/nettune/nettune/loadgen/report"
)

// svgElements parses an SVG document strictly and returns its elements
// with their attributes.
func svgElements(t *testing.T, b []byte) []xml.StartElement {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	var els []xml.StartElement
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			els = append(els, se.Copy())
		}
	}
	require.NotEmpty(t, els)
	assert.Equal(t, "svg", els[0].Name.Local)
	return els
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestPlotPercentiles(t *testing.T) {
	fast, slow := hdrhistogram.New(1, 60_000_000, 3), hdrhistogram.New(1, 60_000_000, 3)
	for i := int64(1); i <= 10000; i++ {
		fast.RecordValue(100 + i%50)
		slow.RecordValue(1000 + i)
	}
	series := []report.PercentileSeries{
		{Name: "baseline <tomcat>", Points: report.Spectrum(slow, 5)},
		{Name: "threads=7", Points: report.Spectrum(fast, 5)},
	}
	require.NotEmpty(t, series[0].Points)
	last := series[0].Points[len(series[0].Points)-1]
	assert.Equal(t, 100.0, last.Percentile)
	assert.InDelta(t, float64(11*time.Millisecond), float64(last.Latency), float64(20*time.Microsecond))

	var buf bytes.Buffer
	require.NoError(t, report.PlotPercentiles(&buf, "Latency by percentile", series))
	var lines []xml.StartElement
	for _, e := range svgElements(t, buf.Bytes()) {
		if e.Name.Local == "polyline" {
			lines = append(lines, e)
		}
	}
	require.Len(t, lines, 2)
	assert.Equal(t, "baseline <tomcat>", attr(lines[0], "data-name"))
	assert.Equal(t, len(series[0].Points), len(strings.Fields(attr(lines[0], "points"))))
	assert.Contains(t, buf.String(), ">99.99%<", "nines on the x axis")
}

func TestPlotThroughput(t *testing.T) {
	c := loadgen.Compare(fixture.SeedSteps()...)
	var buf bytes.Buffer
	require.NoError(t, report.PlotThroughput(&buf, "Requests/s per tuning step", c))
	var bars []xml.StartElement
	for _, e := range svgElements(t, buf.Bytes()) {
		if e.Name.Local == "rect" && attr(e, "class") == "bar" {
			bars = append(bars, e)
		}
	}
	require.Len(t, bars, 5)
	assert.Equal(t, "nic-queues=8", attr(bars[3], "data-name"))
	assert.Equal(t, "378782.37", attr(bars[3], "data-value"))
	assert.Contains(t, buf.String(), "+54.95% base, +5.85% prev")
}

func TestPlotCapacity(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.PlotCapacity(&buf, "steps", loadgen.CompareSteps(fixture.StudySteps()...)))
	els := svgElements(t, buf.Bytes())
	var bars, whiskers []xml.StartElement
	for _, e := range els {
		switch {
		case e.Name.Local == "rect" && attr(e, "class") == "bar":
			bars = append(bars, e)
		case e.Name.Local == "line" && attr(e, "stroke") == "black" && attr(e, "x1") == attr(e, "x2"):
			whiskers = append(whiskers, e)
		}
	}
	require.Len(t, bars, 3)
	assert.Equal(t, "access-log", attr(bars[1], "data-name"))
	assert.Equal(t, "15200.00", attr(bars[1], "data-value"))
	assert.Equal(t, "14900.00", attr(bars[1], "data-min"))
	assert.Equal(t, "15300.00", attr(bars[1], "data-max"))
	// A whisker per step over min-max (besides the y axis), the top of the
	// tallest range above its bar.
	assert.Len(t, whiskers, 3+1)
	h := func(e xml.StartElement, a string) float64 {
		v, err := strconv.ParseFloat(attr(e, a), 64)
		require.NoError(t, err)
		return v
	}
	assert.Less(t, h(whiskers[3], "y2"), h(bars[2], "y"), "max above the median")
	assert.Greater(t, h(whiskers[3], "y1"), h(bars[2], "y"), "min below the median")
	s := buf.String()
	assert.Contains(t, s, "+24.2 % base, +1.3 % (noise) prev")
	assert.Contains(t, s, "+22.6 % base, +22.6 % prev")
}

// TestPlotSteps: the stacked chart beside the capacity bars stacks each
// step's parts without gaps from the axis up, in Parts' order, labels the
// total, draws a step without values as "not read", and refuses values
// that do not match the parts.
func TestPlotSteps(t *testing.T) {
	c := loadgen.CompareSteps(fixture.StudySteps()...)
	bars := report.StackedBars{Axis: "CPU µs per request", Parts: []string{"user", "system", "interrupts"},
		Bars: []report.StackedBar{
			{Name: "baseline", Values: []float64{75, 20, 10}},
			{Name: "access-log", Values: []float64{52, 14, 0}},
			{Name: "threads"},
		}}
	var buf bytes.Buffer
	require.NoError(t, report.PlotSteps(&buf, "steps", c, bars))
	num := func(e xml.StartElement, a string) float64 {
		v, err := strconv.ParseFloat(attr(e, a), 64)
		require.NoError(t, err)
		return v
	}
	parts := map[string][]xml.StartElement{}
	var capacity int
	for _, e := range svgElements(t, buf.Bytes()) {
		if e.Name.Local == "svg" {
			assert.Equal(t, "1600", attr(e, "width"), "two panels")
		}
		if e.Name.Local != "rect" {
			continue
		}
		switch attr(e, "class") {
		case "bar":
			capacity++
		case "part":
			parts[attr(e, "data-name")] = append(parts[attr(e, "data-name")], e)
		}
	}
	assert.Equal(t, 3, capacity, "the capacity bars are all there")
	require.Len(t, parts["baseline"], 3)
	require.Len(t, parts["access-log"], 2, "a zero part draws nothing")
	assert.Empty(t, parts["threads"])
	for name, ps := range parts {
		// From the axis up: each part's bottom is the top of the one below,
		// and its height is in proportion to its value.
		bottom := num(ps[0], "y") + num(ps[0], "height")
		scale := num(ps[0], "height") / num(ps[0], "data-value")
		for i, p := range ps {
			assert.InDelta(t, bottom, num(p, "y")+num(p, "height"), 0.11, "%s part %d sits on the one below", name, i)
			assert.InDelta(t, scale*num(p, "data-value"), num(p, "height"), 0.11, "%s part %d", name, i)
			bottom = num(p, "y")
		}
		assert.Greater(t, num(ps[0], "x"), 800.0, "%s: the stacked panel is the right one", name)
	}
	assert.Equal(t, "system", attr(parts["baseline"][1], "data-part"))
	s := buf.String()
	assert.Contains(t, s, ">105<", "the baseline's total")
	assert.Contains(t, s, ">66<")
	assert.Contains(t, s, ">not read<")
	assert.Contains(t, s, ">interrupts<", "the legend")

	bad := bars
	bad.Bars = []report.StackedBar{{Name: "baseline", Values: []float64{1, 2}}}
	assert.ErrorContains(t, report.PlotSteps(&buf, "steps", c, bad), `stacked bar "baseline" has 2 values for 3 parts`)

	// No bars: PlotCapacity's chart, byte for byte.
	var only, steps bytes.Buffer
	require.NoError(t, report.PlotCapacity(&only, "steps", c))
	require.NoError(t, report.PlotSteps(&steps, "steps", c, report.StackedBars{}))
	assert.Equal(t, only.String(), steps.String())
}
