package loadgen_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
)

// studySteps are three measured steps: a real gain, then one inside the
// spread.
var studySteps = []loadgen.StepFigures{
	{Name: "baseline", Capacity: stats.SpreadOf([]float64{12100, 12400, 12900}),
		Latency: loadgen.Figures{Name: "baseline", Load: 7400, P50: 900 * time.Microsecond, P99: 12 * time.Millisecond, Max: 40 * time.Millisecond, CPU: 71.5}},
	{Name: "access-log", Capacity: stats.SpreadOf([]float64{14900, 15200, 15300}), CapacityErrors: 3,
		Latency: loadgen.Figures{Name: "access-log", Load: 7400, P50: 700 * time.Microsecond, P99: 6 * time.Millisecond, Max: 30 * time.Millisecond, Errors: 1, CPU: 60}},
	{Name: "threads", Capacity: stats.SpreadOf([]float64{14800, 15400, 15600}),
		Latency: loadgen.Figures{Name: "threads", Load: 7400, P50: 650 * time.Microsecond, P99: 9 * time.Millisecond, Max: 25 * time.Millisecond, CPU: 58}},
}

func TestCompareSteps(t *testing.T) {
	c := loadgen.CompareSteps(studySteps...)
	require.Len(t, c.Rows, 3)
	assert.Equal(t, stats.Uplift{}, c.Rows[0].VsBaseline)
	assert.InDelta(t, 22.58, c.Rows[1].VsBaseline.Percent, 0.01)
	assert.False(t, c.Rows[1].VsBaseline.Noise, "ranges 12100-12900 and 14900-15300 are apart")
	assert.InDelta(t, 1.32, c.Rows[2].VsPrevious.Percent, 0.01)
	assert.True(t, c.Rows[2].VsPrevious.Noise, "15400 against 15200 inside the ranges")
	assert.False(t, c.Rows[2].VsBaseline.Noise)
	assert.InDelta(t, -50, c.Rows[1].P99VsBaseline, 0.01)
	goldenText(t, "compare_steps.txt", c.Text())

	b, err := c.JSON()
	require.NoError(t, err)
	var back loadgen.StepComparison
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, c, back)

	// The capacity medians drive the throughput bars.
	tp := c.Throughput()
	require.Len(t, tp.Rows, 3)
	assert.Equal(t, 15200.0, tp.Rows[1].Throughput)
	assert.InDelta(t, 24.19, tp.Rows[2].VsBaseline, 0.01)
	var svg bytes.Buffer
	require.NoError(t, loadgen.PlotThroughput(&svg, "steps", tp))
	assert.Contains(t, svg.String(), "15200")
}

func TestPlotCapacity(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, loadgen.PlotCapacity(&buf, "steps", loadgen.CompareSteps(studySteps...)))
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
	c := loadgen.CompareSteps(studySteps...)
	bars := loadgen.StackedBars{Axis: "CPU µs per request", Parts: []string{"user", "system", "interrupts"},
		Bars: []loadgen.StackedBar{
			{Name: "baseline", Values: []float64{75, 20, 10}},
			{Name: "access-log", Values: []float64{52, 14, 0}},
			{Name: "threads"},
		}}
	var buf bytes.Buffer
	require.NoError(t, loadgen.PlotSteps(&buf, "steps", c, bars))
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
	bad.Bars = []loadgen.StackedBar{{Name: "baseline", Values: []float64{1, 2}}}
	assert.ErrorContains(t, loadgen.PlotSteps(&buf, "steps", c, bad), `stacked bar "baseline" has 2 values for 3 parts`)

	// No bars: PlotCapacity's chart, byte for byte.
	var only, steps bytes.Buffer
	require.NoError(t, loadgen.PlotCapacity(&only, "steps", c))
	require.NoError(t, loadgen.PlotSteps(&steps, "steps", c, loadgen.StackedBars{}))
	assert.Equal(t, only.String(), steps.String())
}
