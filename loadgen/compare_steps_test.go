package loadgen_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/internal/fixture"
	"github.com/nettune/nettune/loadgen/report"
	"github.com/nettune/nettune/loadgen/stats"
)

func TestCompareSteps(t *testing.T) {
	c := loadgen.CompareSteps(fixture.StudySteps()...)
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
	require.NoError(t, report.PlotThroughput(&svg, "steps", tp))
	assert.Contains(t, svg.String(), "15200")
}
