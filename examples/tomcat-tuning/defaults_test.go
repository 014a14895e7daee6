//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/tuning"
)

// testApplyPackagedStopped runs plain -apply on Debian's tomcat10 as
// installed and stopped, with every default but short runs (two of 1 s a
// step, and a journal and -json of the test's own, which change nothing
// of the run): it finds the unit, runs Tomcat as user tomcat through the
// unit's start script, -cpu-method auto splits the CPUs by affinity, the
// baseline sizes the load from Tomcat's CPU, and the whole study
// completes, reverts and leaves Tomcat stopped (issue 30, part 4).
func testApplyPackagedStopped(t *testing.T) {
	in, _ := packagedStudy(t)
	if on, err := tuning.NewDefault().OnlineCPUs(); err != nil || on.Len() < 2 {
		t.Skipf("needs two online CPUs, one for Tomcat and one for the load: %s %v", on, err)
	}
	dir := t.TempDir()
	jsonOut := filepath.Join(dir, "steps.json")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-apply", "-journal", filepath.Join(dir, "study.journal"), "-json", jsonOut,
		"-duration", "1", "-repeat", "2", "-warmup", "2", "-warmup-interval", "1")
	require.NoError(t, err)
	assert.Contains(t, out, "runs as       tomcat: /bin/sh /usr/libexec/tomcat10/tomcat-start.sh (as the tomcat10.service unit does)")
	assert.Contains(t, out, "not running\n")
	assert.NotEmpty(t, studyJVMs(t, out), "the study started Tomcat")
	assert.Contains(t, out, "CPU method: affinity (-cpu-method auto: the load runs on this host (in this process)")
	assert.Regexp(t, `pinned JVM \d+ to CPUs \S+`, out)
	assert.Contains(t, out, "== size the load: from 7 connections for Tomcat's 1 CPU(s)")
	m := regexp.MustCompile(`(?m)^load: (\d+) connections, (saturated|not confirmed saturated): `).FindStringSubmatch(out)
	require.NotNil(t, m, "the sizing's outcome")
	conns, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.Contains(t, out, "on "+m[1]+" connections, over the time they took", "the legend names the count used")
	assert.Regexp(t, `(?m)^baseline: warm-up \S+, closed loop on `+m[1]+` connections`, out, "the baseline runs on the count chosen")
	assert.Contains(t, out, "every change reverted")
	assert.Empty(t, jvmsOf(t, in), "a Tomcat that did not run is left stopped")
	for _, pid := range studyJVMs(t, out) {
		assertGone(t, pid)
	}

	js, err := os.ReadFile(jsonOut)
	require.NoError(t, err)
	var doc study.Document
	require.NoError(t, json.Unmarshal(js, &doc))
	require.NotNil(t, doc.CPUMethod)
	assert.Equal(t, study.CPUMethodChoice{Requested: "auto", Chosen: "affinity", Why: doc.CPUMethod.Why}, *doc.CPUMethod)
	require.NotNil(t, doc.Load)
	assert.Equal(t, conns, doc.Load.Connections)
	assert.Equal(t, conns, doc.Connections, "every load used the count chosen")
	assert.Equal(t, m[2] == "saturated", doc.Load.Saturated)
	require.NotEmpty(t, doc.Load.Tried)
	assert.Equal(t, 7, doc.Load.Tried[0].Connections)
	var tried []int
	for _, tr := range doc.Load.Tried {
		tried = append(tried, tr.Connections)
		assert.NotEmpty(t, tr.Capacity.RunsRPS, "%d connections", tr.Connections)
	}
	assert.Contains(t, tried, conns, "the count chosen was one tried")
	require.NotEmpty(t, doc.Steps)
	assert.Equal(t, study.StatusMeasured, doc.Steps[0].Status, "the baseline")
}
