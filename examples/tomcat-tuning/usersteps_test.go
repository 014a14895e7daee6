package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tuning"
)

// testApplyUserSteps runs the user's own steps on Debian's tomcat10 as
// installed (/var/lib/tomcat10, run as tomcat): a sysctl
// (net.core.somaxconn), a JVM option (-XX:+UseSerialGC, which the JVM of
// that step runs with) and an attribute of the Connector (acceptCount).
// Each is measured with a verdict in -json, and afterwards the sysctl
// reads as found, server.xml is byte-identical and the jvm step's
// setenv.sh and the bin directory it made are gone.
func testApplyUserSteps(t *testing.T) {
	testutil.RequireHostTests(t) // a sysctl of this host, restored after
	testutil.StableCPUs(t)
	h := tuning.NewDefault()
	before, err := h.Sysctl("net.core.somaxconn")
	require.NoError(t, err)
	want := "4099"
	if before == want {
		want = "4098"
	}
	t.Cleanup(func() {
		// The study restores it; this is the net under a failed run.
		if now, err := h.Sysctl("net.core.somaxconn"); err == nil && now != before {
			_, _ = h.SetSysctl("net.core.somaxconn", before)
		}
	})
	in, _ := packagedStudy(t)
	orig, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	jsonOut := filepath.Join(t.TempDir(), "steps.json")
	sysctlStep, jvmStep, connectorStep := "sysctl:net.core.somaxconn="+want, "jvm:-XX:+UseSerialGC", "connector:acceptCount=333"
	setenv := filepath.Join(in.Base, "bin", "setenv.sh")
	require.NoFileExists(t, setenv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := runProgramWhenHostFree(t, ctx, "-apply", "-cpu-method", "affinity", "-journal", filepath.Join(t.TempDir(), "j"),
		"-steps", sysctlStep+","+jvmStep+","+connectorStep,
		"-repeat", "2", "-duration", "500ms", "-warmup", "0s", "-latency-rate", "200", "-connections", "4", "-json", jsonOut)
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "net.core.somaxconn: "+before+" -> "+want)
	assert.Contains(t, out, `+               acceptCount="333"`, "the Connector's diff")
	assert.Regexp(t, regexp.QuoteMeta(jvmStep)+`: the JVM \d+ runs with -XX:\+UseSerialGC\n`, out)
	assert.Contains(t, out, "every change reverted")

	_, steps := readDocument(t, jsonOut)
	assertMeasured(t, steps, 50, "baseline", sysctlStep, jvmStep, connectorStep)
	for _, name := range []string{sysctlStep, jvmStep, connectorStep} {
		st := steps[name]
		assert.Equal(t, string(tuning.StatusReverted), st.Runner, name)
		if assert.NotNil(t, st.VsPrevious, name) {
			assert.NotEmpty(t, st.VsPrevious.Verdict, name)
		}
	}
	after, err := h.Sysctl("net.core.somaxconn")
	require.NoError(t, err)
	assert.Equal(t, before, after, "the sysctl as found")
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, string(orig), string(got), "server.xml byte-identical")
	assert.False(t, strings.Contains(string(got), "acceptCount=\"333\""))
	assert.NoFileExists(t, setenv, "the jvm step's file removed")
	assert.NoDirExists(t, filepath.Dir(setenv), "and the bin directory it made")
}

// runProgramWhenHostFree runs the program as runProgram does, again every
// 2 s while it refuses because another lane's study holds this host's
// lock (it changes nothing before it has the lock), until ctx ends.
// A gate run saw that refusal: two lanes' host studies overlapped.
func runProgramWhenHostFree(t *testing.T, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	for {
		out, err := runProgram(t, ctx, args...)
		if err == nil || !strings.Contains(out, "is changing the host's CPUs and NIC channels") {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(2 * time.Second):
		}
	}
}
