//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
)

// twoCPUTree builds this machine's shape: cpu0 without an online file,
// cpu1 hot-pluggable, one node.
func twoCPUTree(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"sys/devices/system/cpu/possible":       "0-1\n",
		"sys/devices/system/cpu/present":        "0-1\n",
		"sys/devices/system/cpu/online":         "0-1\n",
		"sys/devices/system/cpu/offline":        "\n",
		"sys/devices/system/cpu/cpu0/uevent":    "",
		"sys/devices/system/cpu/cpu1/online":    "1\n",
		"sys/devices/system/node/node0/cpulist": "0-1\n",
	}
	for p, s := range files {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(s), 0o644))
	}
	return dir
}

func runCmd(t *testing.T, args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), args, &out)
	return out.String(), err
}

func TestSummary(t *testing.T) {
	out, err := runCmd(t, "-root", twoCPUTree(t))
	require.NoError(t, err)
	assert.Equal(t, `CPU(s):                      2
  On-line CPU(s) list:       0,1
NUMA:
  NUMA node(s):              1
  NUMA node0 CPU(s):         0,1
not hot-pluggable: 0
`, out)
}

func TestDryRunWritesNothing(t *testing.T) {
	dir := twoCPUTree(t)
	out, err := runCmd(t, "-root", dir, "-online", "0")
	require.NoError(t, err)
	assert.Contains(t, out, "take offline: 1\ndry run: pass -apply")
	b, err := os.ReadFile(filepath.Join(dir, "sys/devices/system/cpu/cpu1/online"))
	require.NoError(t, err)
	assert.Equal(t, "1\n", string(b))

	out, err = runCmd(t, "-root", dir, "-online", "1")
	require.NoError(t, err)
	assert.Contains(t, out, "cannot take cpu0 offline")
	assert.Contains(t, out, "-apply refuses this change")
}

func TestBadInput(t *testing.T) {
	dir := twoCPUTree(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"online":"0-x"}`), 0o644))
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"malformed list", []string{"-online", "0-x"}, `"0-x"`},
		{"negative", []string{"-online", "-1"}, "negative"},
		{"out of range", []string{"-online", "0-7"}, "cpu(s) 2-7 not present"},
		{"empty", []string{"-online", ","}, "empty element"},
		{"no snapshot", []string{"-restore", filepath.Join(dir, "nope.json")}, "no such file"},
		{"bad snapshot", []string{"-restore", bad}, "bad.json"},
		{"both", []string{"-online", "0", "-restore", bad}, "exclude"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCmd(t, append([]string{"-root", dir}, tt.args...)...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

// The check on this machine: -online 0 -apply, then -restore.
func TestIntegrationApplyAndRestore(t *testing.T) {
	testutil.RequireHostTests(t)
	testutil.LockHotplug(t)
	const cpu1 = "/sys/devices/system/cpu/cpu1/online"
	b, err := os.ReadFile(cpu1)
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("skipped: no online, hot-pluggable cpu1 here")
	}
	t.Cleanup(func() {
		if b, _ := os.ReadFile(cpu1); strings.TrimSpace(string(b)) != "1" {
			if err := os.WriteFile(cpu1, []byte("1"), 0); err != nil {
				t.Errorf("CLEANUP FAILED: bring cpu1 back online: %v", err)
			}
		}
	})
	snap := filepath.Join(t.TempDir(), "snap.json")
	out, err := runCmd(t, "-online", "0", "-apply", "-save", snap)
	require.NoError(t, err)
	assert.Contains(t, out, "  Off-line CPU(s) list:      1\n")
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	require.NoError(t, err)
	out2, err := runCmd(t, "-restore", snap, "-apply")
	require.NoError(t, err)
	assert.Equal(t, "0\n", string(online))
	assert.Contains(t, out2, "bring online: 1")
	assert.NotContains(t, out2, "Off-line")
	out3, err := runCmd(t, "-restore", snap, "-apply")
	require.NoError(t, err)
	assert.Contains(t, out3, "no change")
}

// A change the host refuses is an error, also with -best-effort, and the
// state is unchanged (cpu0 here cannot go offline).
func TestApplyRefusedIsAnError(t *testing.T) {
	dir := twoCPUTree(t)
	snap := filepath.Join(t.TempDir(), "snap.json")
	for _, extra := range [][]string{nil, {"-best-effort"}} {
		_, err := runCmd(t, append([]string{"-root", dir, "-online", "1", "-apply", "-save", snap}, extra...)...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not hot-pluggable")
		b, err := os.ReadFile(snap)
		require.NoError(t, err)
		assert.JSONEq(t, `{"online":"0-1","present":"0-1","hotpluggable":"1"}`, string(b))
	}
}
