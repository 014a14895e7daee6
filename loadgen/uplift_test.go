package loadgen_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
	"github.com/nettune/nettune/loadgen/stats"
)

var guideSteps = []loadgen.StepFigures{
	runsStep("baseline", nil, false, 12100, 12400, 12900, 12650, 12300, 12500),
	runsStep("access-log", &loadgen.Reference{Source: "guide", VsPrevious: 11.1}, false, 13300, 13500, 13900, 13650, 13100, 13400),
	runsStep("threads", &loadgen.Reference{Source: "guide", VsPrevious: 31.7}, true, 14800, 15400, 15600, 15100, 14900, 15300),
	runsStep("nic-queues", &loadgen.Reference{Source: "guide", VsPrevious: 5.9}, false, 15000, 15350, 15500, 15200, 14950, 15250),
}

func runsStep(name string, ref *loadgen.Reference, unsettled bool, runs ...float64) loadgen.StepFigures {
	return loadgen.StepFigures{Name: name, Capacity: stats.SpreadOf(runs), CapacityRuns: runs, Unsettled: unsettled, Reference: ref,
		Latency: loadgen.Figures{Name: name, Load: 7400, P50: 900 * time.Microsecond, P99: 12 * time.Millisecond, Max: 40 * time.Millisecond}}
}

func TestCompareStepsSignificance(t *testing.T) {
	c := loadgen.CompareSteps(guideSteps...)
	require.Len(t, c.Rows, 4)
	assert.Equal(t, stats.UpliftOptions{Alpha: 0.05, Confidence: 0.95, NoiseBand: 1}, c.Options)
	assert.Equal(t, stats.VerdictGain, c.Rows[1].VsBaseline.Verdict)
	assert.Equal(t, stats.VerdictGain, c.Rows[1].VsPrevious.Verdict)
	// threads is unsettled: a clear gain on its runs, never called one.
	assert.Equal(t, stats.VerdictUnsettled, c.Rows[2].VsBaseline.Verdict)
	assert.Less(t, c.Rows[2].VsBaseline.P, 0.05)
	assert.Equal(t, stats.VerdictUnsettled, c.Rows[2].VsPrevious.Verdict)
	// nic-queues against the unsettled threads: unsettled too.
	assert.Equal(t, stats.VerdictUnsettled, c.Rows[3].VsPrevious.Verdict)
	assert.Equal(t, stats.VerdictGain, c.Rows[3].VsBaseline.Verdict)
	goldenText(t, "compare_steps_significance.txt", c.Text()+c.Legend())

	b, err := c.JSON()
	require.NoError(t, err)
	var back loadgen.StepComparison
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, c, back)
	var raw struct {
		Rows []map[string]any `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(b, &raw))
	assert.Equal(t, true, raw.Rows[2]["unsettled"])
	assert.Equal(t, map[string]any{"source": "guide", "vs_previous_percent": 31.7}, raw.Rows[2]["reference"])
	assert.Len(t, raw.Rows[1]["capacity_runs_rps"], 6)
	vb := raw.Rows[1]["vs_baseline"].(map[string]any)
	for _, k := range []string{"percent", "ci_low_percent", "ci_high_percent", "p", "verdict", "alpha", "noise_band_percent", "n_from", "n_to"} {
		assert.Contains(t, vb, k)
	}
	assert.Equal(t, "gain", vb["verdict"])

	// A settable α: at 0.001, 6 runs a side are too few.
	strict, err := loadgen.CompareStepsWith(&stats.UpliftOptions{Alpha: 0.001}, guideSteps...)
	require.NoError(t, err)
	assert.Equal(t, stats.VerdictTooFewRuns, strict.Rows[1].VsBaseline.Verdict)
	assert.Equal(t, 0.001, strict.Options.Alpha)
	_, err = loadgen.CompareStepsWith(&stats.UpliftOptions{Alpha: 1.5}, guideSteps...)
	assert.ErrorContains(t, err, "alpha 1.5")
	bad := append([]loadgen.StepFigures(nil), guideSteps[:2]...)
	bad[1].CapacityRuns = []float64{1, -1}
	_, err = loadgen.CompareStepsWith(nil, bad...)
	assert.ErrorContains(t, err, "access-log against baseline")

	// The bar chart labels carry the same cells.
	var svg bytes.Buffer
	require.NoError(t, report.PlotCapacity(&svg, "steps", c))
	assert.Contains(t, svg.String(), "+8.0 % [+4.8, +11.2] p=0.002 base")
}

func TestSignificantAndDrift(t *testing.T) {
	steps := []loadgen.StepFigures{
		runsStep("baseline", nil, false, 12100, 12400, 12900, 12650, 12300, 12500),
		runsStep("access-log", nil, false, 13300, 13500, 13900, 13650, 13100, 13400), // +8.0 %
		runsStep("threads", nil, false, 13900, 14050, 14400, 14200, 13700, 14000),    // +4.3 % on access-log
	}
	c := loadgen.CompareSteps(steps...)
	sig := c.Significant()
	require.Len(t, sig, 4)
	assert.Equal(t, loadgen.UpliftRef{Step: "threads", Against: "previous", Uplift: c.Rows[2].VsPrevious}, sig[0], "smallest first")
	assert.InDelta(t, 4.28, sig[0].Uplift.Percent, 0.01)

	// The baseline again, 5 % slower: larger than threads' +4.3 %.
	slower := runsStep("baseline again", nil, false, 11500, 11780, 12250, 12020, 11690, 11880)
	d, err := c.Drift(slower)
	require.NoError(t, err)
	assert.Equal(t, stats.VerdictLoss, d.Uplift.Verdict)
	assert.InDelta(t, -5.0, d.Uplift.Percent, 0.05)
	require.Len(t, d.Untrusted, 1)
	assert.Equal(t, "threads", d.Untrusted[0].Step)
	assert.Equal(t, "previous", d.Untrusted[0].Against)
	assert.Equal(t, "drift: measured again, -5.0 % [-7.9, -2.0] p=0.004 against the first measurement; "+
		"these uplifts are no larger and cannot be trusted: threads +4.3 % [+1.5, +6.9] p=0.006 against the previous step\n", d.Text())

	// The same configuration again, within the noise: nothing untrusted.
	same := runsStep("baseline again", nil, false, 12150, 12380, 12850, 12700, 12250, 12550)
	d, err = c.Drift(same)
	require.NoError(t, err)
	assert.Equal(t, stats.VerdictNoChange, d.Uplift.Verdict)
	assert.Empty(t, d.Untrusted)
	assert.Contains(t, d.Text(), "smaller than every uplift called significant")

	_, err = loadgen.StepComparison{}.Drift(same)
	assert.ErrorContains(t, err, "no baseline")
}

func TestStepComparisonJSONOptions(t *testing.T) {
	c, err := loadgen.CompareStepsWith(&stats.UpliftOptions{Alpha: 0.01}, guideSteps[:2]...)
	require.NoError(t, err)
	b, err := c.JSON()
	require.NoError(t, err)
	var raw struct {
		Options map[string]float64 `json:"options"`
	}
	require.NoError(t, json.Unmarshal(b, &raw))
	assert.Equal(t, map[string]float64{"alpha": 0.01, "confidence": 0.95, "noise_band_percent": 1}, raw.Options)
}
