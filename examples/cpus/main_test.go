//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/internal/statedir"
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

// cli runs the program's run function: its stdout and exit status.
func cli(args ...string) (string, int) {
	var out bytes.Buffer
	err := run(context.Background(), args, &out)
	return out.String(), cliflag.ExitCode(err)
}

// TestCLI: -h, -version and an unknown flag as every example program
// answers them; a contradictory or pointless command line exits 2 with
// one line before anything runs (no snapshot is written).
func TestCLI(t *testing.T) {
	testutil.CheckCLI(t, "cpus", cli, []string{"apply", "best-effort", "flat", "online", "restore", "root", "snapshot-dir"})
	root, snaps := twoCPUTree(t), t.TempDir()
	snap := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(snap, []byte(`{"online":"0-1"}`), 0o644))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-online", "0", "-restore", snap, "-apply"}, "-online and -restore exclude each other"},
		{[]string{"-apply"}, "-apply makes the change of -online or -restore"},
		{[]string{"-restore", snap, "-best-effort", "-apply"}, "-best-effort is about the CPUs -online takes offline"},
		{[]string{"-online", "0", "-snapshot-dir", snaps}, "-snapshot-dir is where -online -apply saves the state before"},
		{[]string{"-restore", snap, "-apply", "-snapshot-dir", snaps}, "-snapshot-dir is where -online -apply saves the state before"},
		{[]string{"-online", "0", "-flat"}, "-flat formats the summary"},
		{[]string{"-online", "0-x", "-apply", "-snapshot-dir", snaps}, `-online: `},
		{[]string{"-apply", "0"}, "unexpected arguments"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := runCmd(t, append([]string{"-root", root}, tt.args...)...)
			assert.Equal(t, cliflag.ExitUsage, cliflag.ExitCode(err), "%v", err)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
			assert.Empty(t, out)
			entries, err := os.ReadDir(snaps)
			require.NoError(t, err)
			assert.Empty(t, entries, "no snapshot written")
		})
	}
	_, err := runCmd(t, "-root", root, "-restore", filepath.Join(t.TempDir(), "missing.json"))
	assert.Equal(t, cliflag.ExitFailure, cliflag.ExitCode(err), "a failure, not a usage error: %v", err)
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
	dir := t.TempDir()
	out, err := runCmd(t, "-online", "0", "-apply", "-snapshot-dir", dir)
	t.Logf("cpus -online 0 -apply:\n%s", out)
	require.NoError(t, err)
	assert.Contains(t, out, "  Off-line CPU(s) list:      1\n")
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	require.NoError(t, err)
	snap := savedPath(t, out)
	assert.Equal(t, dir, filepath.Dir(snap))
	out2, err := runCmd(t, "-restore", snap, "-apply")
	t.Logf("cpus -restore SNAPSHOT -apply:\n%s", out2)
	require.NoError(t, err)
	assert.Equal(t, "0\n", string(online))
	assert.Contains(t, out2, "bring online: 1")
	assert.NotContains(t, out2, "Off-line")
	out3, err := runCmd(t, "-restore", snap, "-apply")
	require.NoError(t, err)
	assert.Contains(t, out3, "no change")
}

// savedPath returns the snapshot path an -apply printed.
func savedPath(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "saved the previous state to ")
	require.True(t, ok, "no snapshot path in:\n%s", out)
	path, _, _ := strings.Cut(rest, "\n")
	assert.Contains(t, out, "put it back with: cpus -restore "+path+" -apply\n")
	return path
}

// Each -apply keeps the state before it in a new file of the snapshot
// folder, not in the current folder, and never overwrites an earlier
// snapshot: the one before the first change is the one to restore.
// (Before, every run wrote ./cpus-snapshot.json, so a second run replaced
// the original state with the already changed one.)
func TestSnapshotPerRun(t *testing.T) {
	root := twoCPUTree(t)
	t.Chdir(t.TempDir())
	dir := filepath.Join(t.TempDir(), "state", "nettune") // created on first use
	// cpu0 cannot go offline, so the change is refused after the snapshot.
	out, err := runCmd(t, "-root", root, "-online", "1", "-apply", "-snapshot-dir", dir)
	require.ErrorContains(t, err, "not hot-pluggable")
	first := savedPath(t, out)
	// The host changed in between (cpu1 went offline).
	cpuDir := filepath.Join(root, "sys/devices/system/cpu")
	require.NoError(t, os.WriteFile(filepath.Join(cpuDir, "online"), []byte("0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(cpuDir, "offline"), []byte("1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(cpuDir, "cpu1/online"), []byte("0\n"), 0o644))
	out, err = runCmd(t, "-root", root, "-online", "1", "-apply", "-snapshot-dir", dir)
	require.Error(t, err)
	second := savedPath(t, out)

	assert.NotEqual(t, first, second)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	for _, e := range entries {
		assert.Regexp(t, `^cpus-snapshot-\d{8}T\d{6}Z-\d+\.json$`, e.Name())
	}
	b, err := os.ReadFile(first)
	require.NoError(t, err)
	assert.JSONEq(t, `{"online":"0-1","present":"0-1","hotpluggable":"1"}`, string(b), "the first snapshot is kept")
	b, err = os.ReadFile(second)
	require.NoError(t, err)
	assert.JSONEq(t, `{"online":"0","present":"0-1","hotpluggable":"1"}`, string(b))
	here, err := os.ReadDir(".")
	require.NoError(t, err)
	assert.Empty(t, here, "nothing is written in the current folder")

	// -restore FILE reads the printed path.
	out, err = runCmd(t, "-root", root, "-restore", first)
	require.NoError(t, err)
	assert.Contains(t, out, "bring online: 1\ndry run")
}

// The default -snapshot-dir is the state directory the study keeps its
// journal in.
func TestDefaultSnapshotDir(t *testing.T) {
	env := func(xdg string) func(string) string {
		return func(k string) string {
			if k == "XDG_STATE_HOME" {
				return xdg
			}
			return ""
		}
	}
	home := func() (string, error) { return "/home/ann", nil }
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	tests := []struct {
		name string
		euid int
		xdg  string
		home func() (string, error)
		want string
	}{
		{"root", 0, "/x", home, "/var/lib/nettune"},
		{"XDG_STATE_HOME", 1000, "/x/state", home, "/x/state/nettune"},
		{"home", 1000, "", home, "/home/ann/.local/state/nettune"},
		{"relative XDG_STATE_HOME is ignored", 1000, "state", home, "/home/ann/.local/state/nettune"},
		{"no home", 1000, "", noHome, filepath.Join(os.TempDir(), "nettune")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, statedir.For(tt.euid, env(tt.xdg), tt.home))
		})
	}
}

func TestSnapshotDirUnusable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := runCmd(t, "-root", twoCPUTree(t), "-online", "0", "-apply", "-snapshot-dir", file)
	require.ErrorContains(t, err, "cpus: snapshot folder")
	assert.ErrorContains(t, err, file)
}

// A change the host refuses is an error, also with -best-effort, and the
// state is unchanged (cpu0 here cannot go offline).
func TestApplyRefusedIsAnError(t *testing.T) {
	dir := twoCPUTree(t)
	snaps := t.TempDir()
	for _, extra := range [][]string{nil, {"-best-effort"}} {
		out, err := runCmd(t, append([]string{"-root", dir, "-online", "1", "-apply", "-snapshot-dir", snaps}, extra...)...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not hot-pluggable")
		b, err := os.ReadFile(savedPath(t, out))
		require.NoError(t, err)
		assert.JSONEq(t, `{"online":"0-1","present":"0-1","hotpluggable":"1"}`, string(b))
	}
}
