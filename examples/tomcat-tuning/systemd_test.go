//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/nspawn"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// The study inside a container with a real systemd, where Debian's
// tomcat10.service runs Tomcat (internal/nspawn).
const (
	unitDropInDir  = "run/systemd/system/tomcat10.service.d"
	unitServerXML  = "etc/tomcat10/server.xml"
	unitJournal    = "/var/lib/nettune/t.journal"
	unitHelloWorld = "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample"
)

// unitStudyArgs is a short -apply run of the steps that touch the unit.
var unitStudyArgs = []string{"-apply", "-cpu-method", "affinity", "-steps", "cpus,open-files,access-log",
	"-repeat", "1", "-duration", "1s", "-warmup", "0s", "-latency-rate", "200", "-connections", "8", "-journal", unitJournal}

// containerStudy builds the study as a static binary and boots a fresh
// container with it in /usr/local/bin, tomcat10.service active.
func containerStudy(t *testing.T) (*nspawn.Container, int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: booting a systemd container needs root")
	}
	// The study inside pins Tomcat to CPU 0 and loads from CPU 1: no
	// other test may take a CPU offline meanwhile.
	testutil.StableCPUs(t)
	bin := buildStatic(t)
	c := nspawn.ForTest(t, func(upper string) error {
		return copyFileMode(bin, filepath.Join(upper, "usr", "local", "bin", "tomcat-tuning"), 0o755)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	st := waitUnit(t, ctx, c)
	if st["ActiveState"] != "active" {
		t.Logf("tomcat10.service is %s after boot: starting it", st["ActiveState"])
		_, err := c.Run(ctx, nil, "systemctl", "start", "tomcat10.service")
		require.NoError(t, err)
		st = waitUnit(t, ctx, c)
	}
	require.Equal(t, "active", st["ActiveState"], "%v", st)
	pid, err := strconv.Atoi(st["MainPID"])
	require.NoError(t, err)
	require.NotZero(t, pid)
	waitAnswers(t, ctx, c)
	t.Logf("tomcat10.service active, MainPID %d, answering after %s", pid, time.Since(t0).Round(time.Millisecond))
	return c, pid
}

// waitUnit polls `systemctl show tomcat10.service` until the unit is no
// longer on its way (activating, deactivating) and the container's boot
// is done, for at most ctx.
func waitUnit(t *testing.T, ctx context.Context, c *nspawn.Container) map[string]string {
	t.Helper()
	for {
		st := unitShow(t, ctx, c)
		if st["ActiveState"] == "active" || st["ActiveState"] == "failed" || st["ActiveState"] == "inactive" && !booting(ctx, c) {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("tomcat10.service still %v", st)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func booting(ctx context.Context, c *nspawn.Container) bool {
	out, _ := c.Run(ctx, nil, "systemctl", "is-system-running")
	s := strings.TrimSpace(string(out))
	return s == "initializing" || s == "starting"
}

func unitShow(t *testing.T, ctx context.Context, c *nspawn.Container) map[string]string {
	t.Helper()
	out, err := c.Run(ctx, nil, "systemctl", "show", "tomcat10.service", "-p", "ActiveState,MainPID,LimitNOFILE,CPUAffinity", "--no-pager")
	require.NoError(t, err, "%s", out)
	st := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		st[k] = v
	}
	return st
}

// waitAnswers polls HelloWorldExample with curl inside the container (its
// network is its own) until it answers, for at most ctx.
func waitAnswers(t *testing.T, ctx context.Context, c *nspawn.Container) string {
	t.Helper()
	for {
		out, err := c.Run(ctx, nil, "curl", "-sf", "--max-time", "5", unitHelloWorld)
		if err == nil {
			return string(out)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s does not answer inside the container: %v", unitHelloWorld, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func copyFileMode(src, dst string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// assertUnitAsFound checks the container after the study: the unit active
// with a main process other than before, the JVM as tomcat, answering, no
// drop-in, server.xml as it was.
func assertUnitAsFound(t *testing.T, ctx context.Context, c *nspawn.Container, before int, origXML []byte) {
	t.Helper()
	st := unitShow(t, ctx, c)
	assert.Equal(t, "active", st["ActiveState"], "%v", st)
	pid, err := strconv.Atoi(st["MainPID"])
	require.NoError(t, err)
	assert.NotZero(t, pid)
	assert.NotEqual(t, before, pid, "restarted: a new MainPID")
	cmdline, err := os.ReadFile(filepath.Join(c.Root(), "proc", strconv.Itoa(pid), "cmdline"))
	require.NoError(t, err)
	assert.Contains(t, string(cmdline), "-Dcatalina.base=/var/lib/tomcat10\x00", "MainPID is the JVM")
	user, err := c.Run(ctx, nil, "ps", "-o", "user=", "-p", strconv.Itoa(pid))
	require.NoError(t, err)
	assert.Equal(t, "tomcat", strings.TrimSpace(string(user)))
	assert.Contains(t, waitAnswers(t, ctx, c), "Hello World!")
	entries, err := os.ReadDir(filepath.Join(c.Root(), unitDropInDir))
	if err == nil {
		assert.Empty(t, entries, "no file left in /%s", unitDropInDir)
	} else {
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	assert.Empty(t, st["CPUAffinity"], "daemon-reload dropped the drop-in's CPUAffinity=: %v", st)
	got, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)
	assert.Equal(t, string(origXML), string(got), "server.xml byte-identical")
}

// journalOf reads the run's journal from the container.
func journalOf(t *testing.T, c *nspawn.Container) []tuning.JournalEntry {
	t.Helper()
	entries, err := tuning.ReadJournal(filepath.Join(c.Root(), unitJournal))
	require.NoError(t, err)
	return entries
}

// assertJournalUnit checks the journal's records: the tomcat record
// controls the unit, and each drop-in step holds the drop-in as it was.
func assertJournalUnit(t *testing.T, entries []tuning.JournalEntry, wasRunning bool) {
	t.Helper()
	steps := map[string]tuning.JournalEntry{}
	for _, e := range entries {
		steps[e.Step] = e
	}
	require.Contains(t, steps, "tomcat")
	require.Len(t, steps["tomcat"].Undo, 1)
	var tu tomcatconf.RestartChange
	require.NoError(t, json.Unmarshal(steps["tomcat"].Undo[0].Data, &tu))
	assert.Equal(t, tomcatconf.ControlSystemd, tu.Control)
	assert.Equal(t, "tomcat10.service", tu.Service)
	assert.Equal(t, wasRunning, tu.WasRunning)
	for _, name := range []string{"cpus", "open-files"} {
		require.Contains(t, steps, name)
		require.Len(t, steps[name].Undo, 1, name)
		assert.Equal(t, tomcatconf.DropInChange{}.Kind(), steps[name].Undo[0].Kind, name)
		var d tomcatconf.DropInChange
		require.NoError(t, json.Unmarshal(steps[name].Undo[0].Data, &d))
		assert.Equal(t, "/"+unitDropInDir+"/nettune.conf", d.Path)
		if name == "cpus" {
			assert.False(t, d.Existed, "no drop-in before the study")
		} else {
			assert.True(t, d.Existed, "open-files comes after cpus wrote the drop-in")
			assert.Contains(t, d.Previous, "CPUAffinity=0\n")
		}
	}
}

// TestIntegrationContainer runs the tests that boot the Debian container,
// one after another: one of the package's lanes (lanes_test.go). The
// container has its own network, root and unit, and Debian's tomcat10 on
// the host is not in it, so it shares only the CPUs with the other lanes.
// Run one on its own with -run 'TestIntegrationContainer/UnderSystemd$'.
func TestIntegrationContainer(t *testing.T) {
	t.Parallel()
	t.Run("UnderSystemd", testUnderSystemd)
	t.Run("UnderSystemdKillThenRevert", testUnderSystemdKillThenRevert)
	t.Run("UnderSystemdStopped", testUnderSystemdStopped)
	t.Run("UnderSystemdRefusesJVMBeside", testUnderSystemdRefusesJVMBeside)
	t.Run("PersistSurvivesReboot", testPersistSurvivesReboot)
	t.Run("PersistDefaultSteps", testPersistDefaultSteps)
	t.Run("TunedStep", testTunedStep)
}

// testUnderSystemd runs the study inside a container where
// systemd runs tomcat10.service: restarts go through systemctl, the CPUs
// and the open-files limit through a runtime drop-in, and the unit is
// left active as found, with a new main process and no drop-in.
func testUnderSystemd(t *testing.T) {
	c, before := containerStudy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	origXML, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)

	t0 := time.Now()
	out, err := c.Run(ctx, nil, append([]string{"/usr/local/bin/tomcat-tuning"}, unitStudyArgs...)...)
	t.Logf("the study inside (%s):\n%s", time.Since(t0).Round(time.Millisecond), out)
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "controlled by systemd: tomcat10.service")
	assert.Contains(t, s, "restarted Tomcat through systemd (systemctl restart tomcat10.service): MainPID ")
	assert.Regexp(t, `drop-in /run/systemd/system/tomcat10\.service\.d/nettune\.conf written \(CPUAffinity=0\)`, s)
	assert.Regexp(t, `drop-in /run/systemd/system/tomcat10\.service\.d/nettune\.conf written \(LimitNOFILE=20000 CPUAffinity=0\); LimitNOFILE=65535 capped to 20000`, s)
	assert.Regexp(t, `restarted Tomcat through systemd .* as tomcat, ready in .*, open files 20000, CPUs 0\n`, s,
		"the JVM got the drop-in's limit and CPU")
	assert.NotContains(t, s, "pinned JVM", "CPUAffinity= pinned it, not sched_setaffinity")
	assert.Contains(t, s, "Tomcat started again as found, through systemd (systemctl start tomcat10.service)")
	assert.Contains(t, s, "every change reverted")

	entries := journalOf(t, c)
	assertJournalUnit(t, entries, true)
	for _, e := range entries {
		assert.True(t, e.Reverted, "%s reverted", e.Step)
	}
	assertUnitAsFound(t, ctx, c, before, origXML)
}

// testUnderSystemdKillThenRevert kills the study inside
// the container while it measures the access-log step, then runs
// -revert: the drop-in goes, server.xml comes back, and the unit is
// restarted through systemd with the files as found.
func testUnderSystemdKillThenRevert(t *testing.T) {
	c, before := containerStudy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	origXML, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)

	// sh prints its PID and execs the study in it: the PID to kill, in
	// the container's namespace.
	line := c.Command(nil, append([]string{"/bin/sh", "-c", `echo "study pid $$"; exec /usr/local/bin/tomcat-tuning "$@"`, "sh"}, unitStudyArgs...)...)
	cmd := exec.CommandContext(ctx, line[0], line[1:]...)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	cmd.Stdout, cmd.Stderr = w, w
	require.NoError(t, cmd.Start())
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var log bytes.Buffer
	sc := bufio.NewScanner(r)
	pid := 0
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if rest, ok := strings.CutPrefix(sc.Text(), "study pid "); ok {
			pid, err = strconv.Atoi(rest)
			require.NoError(t, err)
		}
		if strings.HasPrefix(sc.Text(), "== measure access-log") {
			break
		}
	}
	require.NotZero(t, pid, "no PID line:\n%s", log.String())
	require.Contains(t, log.String(), "== measure access-log", "the run reached the access-log step")
	_, err = c.Run(ctx, nil, "kill", "-KILL", strconv.Itoa(pid))
	require.NoError(t, err)
	_ = cmd.Wait()
	t.Logf("killed run (study PID %d in the container):\n%s", pid, log.String())

	dropIn := filepath.Join(c.Root(), unitDropInDir, "nettune.conf")
	b, err := os.ReadFile(dropIn)
	require.NoError(t, err, "the killed run left its drop-in")
	assert.Equal(t, "# Written by nettune (tomcatconf.Unit.SetDropIn); RemoveDropIn deletes it.\n[Service]\nLimitNOFILE=20000\nCPUAffinity=0\n", string(b))
	entries := journalOf(t, c)
	assertJournalUnit(t, entries, true)
	for _, e := range entries {
		assert.False(t, e.Reverted, "%s still pending after the kill", e.Step)
	}

	out, err := c.Run(ctx, nil, "/usr/local/bin/tomcat-tuning", "-revert", "-journal", unitJournal)
	t.Logf("-revert:\n%s", out)
	require.NoError(t, err)
	assert.Regexp(t, `(?s)reverted access-log\nreverted open-files\nreverted cpus\nreverted tomcat\n`, string(out),
		"the files and the drop-in first, then Tomcat through its unit")
	assert.Contains(t, string(out), "(tomcat10.service stopped with systemctl, and started again with systemctl if it was active before the run)")
	for _, e := range journalOf(t, c) {
		assert.True(t, e.Reverted, "%s reverted", e.Step)
	}
	assertUnitAsFound(t, ctx, c, before, origXML)
}

// testUnderSystemdStopped runs the study while the enabled
// tomcat10.service is stopped: the study starts it through systemd and
// stops it again at the end.
func testUnderSystemdStopped(t *testing.T) {
	c, _ := containerStudy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	_, err := c.Run(ctx, nil, "systemctl", "stop", "tomcat10.service")
	require.NoError(t, err)
	require.Equal(t, "inactive", unitShow(t, ctx, c)["ActiveState"])
	origXML, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)

	out, err := c.Run(ctx, nil, append([]string{"/usr/local/bin/tomcat-tuning"}, unitStudyArgs...)...)
	t.Logf("the study inside:\n%s", out)
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "controlled by systemd: tomcat10.service (tomcat10.service is inactive and enabled)")
	assert.Contains(t, s, "tomcat10.service is inactive (enabled); the study starts it with systemctl and stops it at the end")
	assert.Contains(t, s, "restarted Tomcat through systemd (systemctl restart tomcat10.service): MainPID ")
	assert.NotContains(t, s, "Tomcat started again")
	assertJournalUnit(t, journalOf(t, c), false)

	st := unitShow(t, ctx, c)
	assert.Equal(t, "inactive", st["ActiveState"], "left stopped, as found: %v", st)
	assert.Equal(t, "0", st["MainPID"])
	ps, err := c.Run(ctx, nil, "ps", "-eo", "args")
	require.NoError(t, err)
	assert.NotContains(t, string(ps), "-Dcatalina.base=/var/lib/tomcat10 ", "no JVM left")
	_, err = os.Stat(filepath.Join(c.Root(), unitDropInDir, "nettune.conf"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	got, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)
	assert.Equal(t, string(origXML), string(got), "server.xml byte-identical")
}

// testUnderSystemdRefusesJVMBeside: a JVM of the base that
// is not the unit's main process would fight the unit for the port: -apply
// refuses before it creates the journal, and changes nothing.
func testUnderSystemdRefusesJVMBeside(t *testing.T) {
	c, _ := containerStudy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, err := c.Run(ctx, nil, "systemctl", "stop", "tomcat10.service")
	require.NoError(t, err)
	// A stand-in JVM: its command line holds -Dcatalina.base (sh's $0),
	// run by systemd as a unit of its own, so it outlives nsenter.
	out, err := c.Run(ctx, nil, "systemd-run", "--unit=beside", "--property=User=tomcat",
		"/bin/sh", "-c", "while :; do sleep 0.05; done", "-Dcatalina.base=/var/lib/tomcat10")
	require.NoError(t, err, "%s", out)
	out, err = c.Run(ctx, nil, "systemctl", "show", "beside.service", "-p", "MainPID", "--value")
	require.NoError(t, err)
	beside := strings.TrimSpace(string(out))
	require.NotEqual(t, "0", beside)

	out, err = c.Run(ctx, nil, append([]string{"/usr/local/bin/tomcat-tuning"}, unitStudyArgs...)...)
	t.Logf("the study inside:\n%s", out)
	require.Error(t, err)
	assert.Contains(t, string(out), "JVM "+beside+" (user tomcat) runs with -Dcatalina.base=/var/lib/tomcat10 beside tomcat10.service (MainPID 0): stop it before -apply")
	_, err = os.Stat(filepath.Join(c.Root(), unitJournal))
	assert.ErrorIs(t, err, os.ErrNotExist, "refused before the journal")
	_, err = os.Stat(filepath.Join(c.Root(), unitDropInDir, "nettune.conf"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, "inactive", unitShow(t, ctx, c)["ActiveState"], "the unit untouched")
	_, err = os.Stat(filepath.Join(c.Root(), "proc", beside))
	assert.NoError(t, err, "the other JVM untouched")
}
