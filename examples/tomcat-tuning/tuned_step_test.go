//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
)

// testTunedStep runs a tuned:PROFILE step inside the container, where
// the real tuned runs (tuned.service): a profile tuned does not have is
// refused before the journal exists; the step switches tuned to the
// profile (tuned-adm profile), is measured with a verdict in -json, and
// afterwards tuned runs the profile it ran before.
func testTunedStep(t *testing.T) {
	c, _ := containerStudy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// tuned-adm verify fails here whatever runs: the container's /sys and
	// /proc/sys/vm are read-only, so the disk plugin's readahead and the
	// vm sysctls stay as the host has them (tuned.log says so).
	before, _ := tunedState(t, ctx, c)
	profile := "throughput-performance"
	if before == profile {
		profile = "network-throughput"
	}
	step := "tuned:" + profile
	args := []string{"/usr/local/bin/tomcat-tuning", "-apply", "-cpu-method", "affinity", "-journal", unitJournal,
		"-repeat", "2", "-duration", "500ms", "-warmup", "0s", "-latency-rate", "200", "-connections", "8"}

	out, err := c.Run(ctx, nil, append(args, "-steps", "access-log,tuned:throughput-perfomance")...)
	t.Logf("a misspelt profile:\n%s", out)
	require.Error(t, err)
	assert.Contains(t, string(out), `-steps tuned:throughput-perfomance: tuned has no profile "throughput-perfomance"`)
	assert.Regexp(t, `installed: .*\bthroughput-performance\b`, string(out), "the error names the installed profiles")
	assert.NoFileExists(t, filepath.Join(c.Root(), unitJournal), "refused before the journal")

	jsonOut := "/var/tmp/steps.json"
	out, err = c.Run(ctx, nil, append(args, "-steps", step, "-json", jsonOut)...)
	t.Logf("the study inside:\n%s", out)
	require.NoError(t, err)
	assert.Contains(t, string(out), "tuned profile: "+before+" -> "+profile)
	assert.Contains(t, string(out), "every change reverted")
	_, steps := readDocument(t, filepath.Join(c.Root(), jsonOut))
	assertMeasured(t, steps, 10, "baseline", step)
	if st, ok := steps[step]; ok {
		assert.Equal(t, string(tuning.StatusReverted), st.Runner)
		if assert.NotNil(t, st.VsPrevious) {
			assert.NotEmpty(t, st.VsPrevious.Verdict)
		}
	}
	var kinds []string
	for _, e := range journalOf(t, c) {
		if e.Step == step {
			for _, u := range e.Undo {
				kinds = append(kinds, u.Kind)
			}
			assert.True(t, e.Reverted, "%s reverted", e.Step)
		}
	}
	assert.Equal(t, []string{"tuned-activation"}, kinds, "the step's journal record")
	after, _ := tunedState(t, ctx, c)
	assert.Equal(t, before, after, "tuned runs the profile it ran before")
	_, err = os.Stat(filepath.Join(c.Root(), "etc/tuned", profile))
	assert.ErrorIs(t, err, os.ErrNotExist, "no profile written")
}
