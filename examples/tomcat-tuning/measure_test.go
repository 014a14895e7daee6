//go:build linux

package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/jsonschema"
	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/internal/testutil"
)

// TestMeasureFlags: the measurement flags are checked before anything
// runs.
func TestMeasureFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-repeat", "0"}, "-repeat 0: want 1 or more"},
		{[]string{"-capacity-rate", "0"}, "-capacity-rate 0: want requests/s > 0"},
		{[]string{"-latency-rate", "-5"}, "-latency-rate -5: want requests/s > 0, or 0 for 60% of the baseline's capacity"},
		{[]string{"-duration", "0s"}, "-duration 0s: want > 0"},
		{[]string{"-warmup-interval", "0s"}, "-warmup-interval 0s: want > 0"},
	} {
		out, err := runProgram(t, ctx, tc.args...)
		assert.Error(t, err)
		assert.Contains(t, out, tc.want)
	}
}

// testApplyCapacityTable runs the study on a copy of Debian's Tomcat: each
// step is warmed up, measured by saturating runs (capacity with its
// spread) and at one rate common to every step (latency), in the step
// table and in -json's steps.
func testApplyCapacityTable(t *testing.T) {
	testutil.StableCPUs(t)
	in, port, orig := tomcatBase(t)
	dir := t.TempDir()
	jsonOut, plot := filepath.Join(dir, "steps.json"), filepath.Join(dir, "steps.svg")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-apply", "-cpu-method", "affinity",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
		"-journal", filepath.Join(dir, "j"), "-steps", "access-log",
		"-repeat", "2", "-duration", "1s", "-warmup", "2s", "-warmup-interval", "1s", "-connections", "16",
		"-json", jsonOut, "-plot", plot)
	require.NoError(t, err)
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got)

	assert.Regexp(t, `(?m)^baseline: warm-up \S+, closed loop on 16 connections: (\d+ )+req/s, (the last 3 within|still changing)`, out)
	assert.Regexp(t, `(?m)^access-log: capacity runs at 500000 req/s offered: \d+ \d+ req/s$`, out)
	i := strings.Index(out, "== Step table ==")
	require.GreaterOrEqual(t, i, 0, "no step table")
	table := out[i:]
	assert.Regexp(t, `(?m)^step\s+capacity\s+min-max\s+vs baseline\s+vs previous\s+Arm guide\s+p99\s+errors$`, table)
	for _, l := range strings.Split(table, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), study.TableWidth, "too wide: %q", l)
	}
	// Two runs a side can never be significant: the uplift says so.
	pct := `([+-]?\d+\.\d+ % few runs)`
	base := regexp.MustCompile(`(?m)^baseline\s+(\d+)\s+(\d+)-(\d+)\s+\S+\s+\d+$`).FindStringSubmatch(table)
	require.NotNil(t, base, "baseline row")
	step := regexp.MustCompile(`(?m)^access-log\s+(\d+)\s+(\d+)-(\d+)\s+` + pct + `\s+` + pct + `\s+\+11\.1 %\s+\S+\s+\d+$`).FindStringSubmatch(table)
	require.NotNil(t, step, "access-log row")
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		return v
	}
	for _, r := range [][]string{base, step} {
		med, lo, hi := num(r[1]), num(r[2]), num(r[3])
		assert.Greater(t, med, 50.0, "%s capacity", r[0])
		assert.LessOrEqual(t, lo, med)
		assert.LessOrEqual(t, med, hi)
	}
	// Latency at one rate, common to both: 60 % of the baseline's capacity.
	m := regexp.MustCompile(`(?m)^latency: one 1s run at (\d+) req/s for every step \(60 % of the baseline's capacity\)`).FindStringSubmatch(table)
	require.NotNil(t, m, "the legend's common rate")
	rate := num(m[1])
	assert.InDelta(t, 0.6*num(base[1]), rate, 1)
	assert.Regexp(t, `(?m)^drift: measured again, `, table, "the drift guard measured the baseline again")

	js, err := os.ReadFile(jsonOut)
	require.NoError(t, err)
	var doc study.Document
	require.NoError(t, json.Unmarshal(js, &doc))
	assert.Equal(t, rate, doc.CommonRate)
	require.Len(t, doc.Steps, 2)
	for i, name := range []string{"baseline", "access-log"} {
		st := doc.Steps[i]
		assert.Equal(t, name, st.Step)
		assert.Equal(t, "measured", st.Status)
		require.NotNil(t, st.Capacity, name)
		c := st.Capacity
		assert.True(t, c.Min <= c.Median && c.Median <= c.Max, "%s: %v in %v-%v", name, c.Median, c.Min, c.Max)
		assert.Equal(t, 2, c.Runs)
		assert.Len(t, c.RunsRPS, 2)
		require.NotNil(t, st.Latency, name)
		assert.Equal(t, rate, st.Latency.Rate)
		assert.True(t, st.Latency.P50 > 0 && st.Latency.P50 <= st.Latency.P99 && st.Latency.P99 <= st.Latency.Max, "%s latency %+v", name, *st.Latency)
	}
	require.NotNil(t, doc.Steps[1].VsBaseline)
	assert.Equal(t, "too few runs", doc.Steps[1].VsBaseline.Verdict)
	require.NotNil(t, doc.Drift, "the drift guard")
	assert.Equal(t, 2, doc.Drift.Capacity.Runs)
	assertConformsToSchema(t, js)
	assert.False(t, math.IsNaN(doc.CommonRate))
	svg, err := os.ReadFile(plot)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(svg), `class="bar"`), "a capacity bar per measured step")
	assert.Contains(t, string(svg), `data-name="access-log"`)
	assert.Contains(t, string(svg), "(2 runs)")
}

// assertConformsToSchema checks a -json document the program wrote
// against the schema file that documents it.
func assertConformsToSchema(t *testing.T, doc []byte) {
	t.Helper()
	assert.NoError(t, jsonschema.Validate(filepath.Join("docs", "tomcat-tuning.schema.json"), doc), "%s", doc)
}
