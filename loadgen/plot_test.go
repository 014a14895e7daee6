package loadgen_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
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
	series := []loadgen.PercentileSeries{
		{Name: "baseline <tomcat>", Points: loadgen.Spectrum(slow, 5)},
		{Name: "threads=7", Points: loadgen.Spectrum(fast, 5)},
	}
	require.NotEmpty(t, series[0].Points)
	last := series[0].Points[len(series[0].Points)-1]
	assert.Equal(t, 100.0, last.Percentile)
	assert.InDelta(t, float64(11*time.Millisecond), float64(last.Latency), float64(20*time.Microsecond))

	var buf bytes.Buffer
	require.NoError(t, loadgen.PlotPercentiles(&buf, "Latency by percentile", series))
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
	c := loadgen.Compare(seedSteps...)
	var buf bytes.Buffer
	require.NoError(t, loadgen.PlotThroughput(&buf, "Requests/s per tuning step", c))
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
