//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/nspawn"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tuning"
)

// defaultJournal is the journal of testPersistDefaultSteps inside the
// container.
const defaultJournal = "/var/lib/nettune/default.journal"

// defaultPersistArgs is -apply -persist with the default step list, the
// shortest measurements (one 1 s run a step, no warm-up, no search) and
// -persist keeping what it keeps by default: with one run a side no step
// can be a significant gain, so the baseline's steps, cpus and open-files.
var defaultPersistArgs = []string{"-apply", "-persist", "-cpu-method", "affinity", "-cpus", "1", "-search=false",
	"-repeat", "1", "-duration", "1s", "-warmup", "0s", "-latency-rate", "200", "-connections", "8", "-journal", defaultJournal}

// buildStatic builds the study as a static binary, to run inside a
// container.
func buildStatic(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tomcat-tuning")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// relTreeState is treeState keyed by the path relative to dir.
func relTreeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	for p, v := range treeState(t, dir) {
		st[strings.TrimPrefix(p, dir)] = v
	}
	return st
}

// placeStudy puts the study's binary bin in the container's
// /usr/local/bin and gives its services a default open-files limit below
// the study's. Otherwise that limit is PID 1's own hard limit here (the
// host's, 20000), which is also all the study's LimitNOFILE= can reach
// (it caps it there), and the JVM raises its soft limit to the hard one
// (HotSpot's MaxFDLimit): the default JVM would show the drop-in's
// figure, and a test could not tell them apart.
func placeStudy(c *nspawn.Container, bin string) error {
	conf := filepath.Join(c.Upper, "etc", "systemd", "system.conf.d", "limits.conf")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(conf, []byte("[Manager]\nDefaultLimitNOFILE=4096:8192\n"), 0o644); err != nil {
		return err
	}
	return copyFileMode(bin, filepath.Join(c.Upper, "usr", "local", "bin", "tomcat-tuning"), 0o755)
}

// readJournalIn reads the journal at path inside the container.
func readJournalIn(c *nspawn.Container, path string) ([]tuning.JournalEntry, error) {
	return tuning.ReadJournal(filepath.Join(c.Root(), path))
}

// dropInPaths runs `systemctl show -p DropInPaths tomcat10` inside.
func dropInPaths(t *testing.T, ctx context.Context, c *nspawn.Container) string {
	t.Helper()
	out, err := c.Run(ctx, nil, "systemctl", "show", "-p", "DropInPaths", "tomcat10.service", "--no-pager")
	require.NoError(t, err, "%s", out)
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "DropInPaths="))
}

// testPersistDefaultSteps is issue 31's "done when": with the default
// step list under systemd, -apply -persist keeps the unit's persistent
// drop-in (the cpus and open-files steps) across a reboot, and the JVM
// runs on its CPUs; -revert and another reboot leave the unit's files,
// server.xml and /etc as before the study. The same run's drift guard
// applies the baseline's runtime drop-in again, journaled, measures, and
// reverts it before -persist writes the persistent one.
func testPersistDefaultSteps(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.StableCPUs(t)
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := buildStatic(t)
	c := nspawn.ForTestContainer(t, func(c *nspawn.Container) error {
		return placeStudy(c, bin)
	})
	reboot := func(n int) {
		t.Helper()
		took, err := c.Reboot(ctx, 0, nil)
		require.NoError(t, err)
		t.Logf("reboot %d took %s", n, took.Round(time.Millisecond))
	}
	// The container's root as the host sees it changes at each boot.
	unitDir := func() string { return filepath.Join(c.Root(), "etc", "systemd", "system") }
	runDropIns := func() string { return filepath.Join(c.Root(), unitDropInDir) }
	dropIn := "/etc/systemd/system/tomcat10.service.d/nettune.conf"

	// --- boot 1: as found, then the study ---
	before := unitJVM(t, ctx, c)
	unitsBefore := relTreeState(t, unitDir())
	pathsBefore := dropInPaths(t, ctx, c)
	origXML, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)
	etcBefore := nettuneUnderEtc(t, c)
	require.NoDirExists(t, runDropIns())
	t.Logf("boot 1, before the study: %s; DropInPaths=%s", before, pathsBefore)

	ts := time.Now()
	out, err := c.Run(ctx, nil, append([]string{"/usr/local/bin/tomcat-tuning"}, defaultPersistArgs...)...)
	t.Logf("the study inside (%s):\n%s", time.Since(ts).Round(time.Millisecond), out)
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "== keep: cpus, open-files ==")
	assert.Regexp(t, `== measure the baseline again \(drift guard\): its steps applied again \(iommu, cpus, open-files\), journaled, then reverted ==\n`, s)
	assert.Contains(t, s, "drift guard: reverted again: cpus, open-files\n")
	assert.NotContains(t, s, "drift guard: not measured")
	assert.Regexp(t, `(?m)^drift: measured again, `, s, "the table's drift line")
	assert.Contains(t, s, "made persistent: persist-drop-in (undo them with -revert -journal "+defaultJournal+")")

	entries, err := readJournalIn(c, defaultJournal)
	require.NoError(t, err)
	count := map[string]int{}
	var pending []string
	for _, e := range entries {
		count[e.Step]++
		if !e.Reverted {
			pending = append(pending, e.Step)
		}
	}
	assert.Equal(t, 2, count["cpus"], "the study's cpus step and the drift guard's")
	assert.Equal(t, 2, count["open-files"], "the study's open-files step and the drift guard's")
	assert.Equal(t, []string{"persist-drop-in"}, pending, "only the persistent drop-in is in force")
	assert.Equal(t, dropIn, persistedFiles(t, entries)["persist-drop-in"])
	assert.NoDirExists(t, runDropIns(), "the runtime drop-in reverted")
	data, err := os.ReadFile(filepath.Join(c.Root(), dropIn))
	require.NoError(t, err)
	t.Logf("%s:\n%s", dropIn, data)
	wantNoFile, wantCPUs := dropInValue(t, string(data), "LimitNOFILE"), dropInValue(t, string(data), "CPUAffinity")
	assert.Equal(t, "0", wantCPUs, "-cpus 1: Tomcat on CPU 0")

	// --- boot 2: the persistent drop-in in force ---
	reboot(1)
	after := unitJVM(t, ctx, c)
	paths := dropInPaths(t, ctx, c)
	t.Logf("boot 2, after -persist: %s; DropInPaths=%s", after, paths)
	assert.FileExists(t, filepath.Join(c.Root(), dropIn))
	assert.Contains(t, strings.Fields(paths), dropIn, "systemd reads the drop-in")
	assert.True(t, after.Answers)
	assert.Equal(t, wantCPUs, after.CPUs, "the new JVM runs on the persisted CPUs")
	assert.NotEqual(t, before.CPUs, after.CPUs)
	assert.Equal(t, "Max open files "+wantNoFile+" "+wantNoFile+" files", after.NoFile, "the drop-in's LimitNOFILE")

	// -verify after the reboot: the persisted drop-in holds (exit 0);
	// changed by hand, it does not (exit 1, naming the record).
	out, err = c.Run(ctx, nil, "/usr/local/bin/tomcat-tuning", "-verify", "-journal", defaultJournal)
	t.Logf("-verify:\n%s", out)
	require.NoError(t, err, "-verify exits 0 when every persisted setting holds")
	assert.Contains(t, string(out), "ok    persist-drop-in (systemd-drop-in)")
	assert.Contains(t, string(out), "verification succeeded: the host holds all 1 setting(s)")
	edited := strings.Replace(string(data), "LimitNOFILE="+wantNoFile, "LimitNOFILE=1234", 1)
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(filepath.Join(c.Root(), dropIn), []byte(edited), 0o644))
	out, err = c.Run(ctx, nil, "/usr/local/bin/tomcat-tuning", "-verify", "-journal", defaultJournal)
	t.Logf("-verify of a drop-in changed by hand:\n%s", out)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "-verify fails once a persisted setting is changed")
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, string(out), "FAIL  persist-drop-in (systemd-drop-in)")
	assert.Contains(t, string(out), "LimitNOFILE=1234")
	require.NoError(t, os.WriteFile(filepath.Join(c.Root(), dropIn), data, 0o644))

	// --- -revert, then boot 3: as found ---
	out, err = c.Run(ctx, nil, "/usr/local/bin/tomcat-tuning", "-revert", "-journal", defaultJournal)
	t.Logf("-revert:\n%s", out)
	require.NoError(t, err)
	assert.Contains(t, string(out), "reverted persist-drop-in\n")
	reboot(2)
	again := unitJVM(t, ctx, c)
	t.Logf("boot 3, after -revert: %s; DropInPaths=%s", again, dropInPaths(t, ctx, c))
	assert.True(t, again.Answers)
	assert.Equal(t, before.CPUs, again.CPUs)
	assert.Equal(t, before.NoFile, again.NoFile)
	assert.Equal(t, pathsBefore, dropInPaths(t, ctx, c))
	assert.Equal(t, unitsBefore, relTreeState(t, unitDir()), "/etc/systemd/system as found")
	assert.NoDirExists(t, runDropIns())
	got, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)
	assert.Equal(t, string(origXML), string(got), "server.xml byte-identical")
	assert.Equal(t, etcBefore, nettuneUnderEtc(t, c), "no nettune file left under /etc")
	entries, err = readJournalIn(c, defaultJournal)
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, e.Reverted, "%s reverted", e.Step)
	}
	t.Logf("wall time of the test: %s", time.Since(t0).Round(time.Second))
}
