//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// packagedDirs hold only the tomcat user's files.
var packagedDirs = []string{"/var/log/tomcat10", "/var/cache/tomcat10"}

// packagedStudy prepares a run of the study on Debian's installed
// tomcat10 itself (/var/lib/tomcat10, as installed): it takes the
// packaged-Tomcat lock, checks that no JVM of the base runs, and registers
// (after the lock) a cleanup that stops any JVM of the base still running
// and checks that server.xml is byte-identical and no root-owned file
// appeared under the package's log and cache folders. It returns the
// instance (for its JVMs) and a short plan's flags.
func packagedStudy(t *testing.T) (*tomcatconf.Instance, []string) {
	t.Helper()
	testutil.RequirePackagedTomcat(t)
	testutil.StableCPUs(t)
	testutil.LockPackagedTomcat(t)
	in := &tomcatconf.Instance{Home: tomcatconf.DefaultHome, Base: tomcatconf.DefaultBase}
	jvms, err := in.JVMs()
	require.NoError(t, err)
	require.Empty(t, jvms, "a JVM of %s runs before the test", in.Base)
	orig, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	rootBefore := testutil.RootOwnedFiles(t, packagedDirs...)
	t.Cleanup(func() {
		jvms, err := in.JVMs()
		require.NoError(t, err)
		for _, j := range jvms {
			if _, err := in.Stop(context.Background(), &tomcatconf.StopOptions{PID: j.PID}); err != nil && !errors.Is(err, tomcatconf.ErrNotRunning) {
				t.Errorf("cleanup: stop JVM %d: %v", j.PID, err)
			}
		}
		got, err := os.ReadFile(in.ServerXML())
		require.NoError(t, err)
		assert.Equal(t, string(orig), string(got), "server.xml byte-identical")
		assert.Equal(t, rootBefore, testutil.RootOwnedFiles(t, packagedDirs...), "no new root-owned files under %v", packagedDirs)
	})
	return in, []string{"-apply", "-cpu-method", "affinity", "-journal", filepath.Join(t.TempDir(), "study.journal"),
		"-steps", "access-log,threads", "-search=false", "-repeat", "2", "-duration", "2s", "-warmup", "1s", "-latency-rate", "500", "-connections", "16"}
}

func jvmsOf(t *testing.T, in *tomcatconf.Instance) []tomcatconf.JVM {
	t.Helper()
	jvms, err := in.JVMs()
	require.NoError(t, err)
	return jvms
}

// answersHello checks that the packaged Tomcat answers its HelloWorld.
func answersHello(t *testing.T) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(testutil.PackagedTomcatURL)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "Hello World!")
}

// studyJVMs returns the PIDs of the JVMs the study says it started.
func studyJVMs(t *testing.T, out string) []int {
	t.Helper()
	var pids []int
	for _, m := range regexp.MustCompile(`(?m)^restarted Tomcat: JVM (\d+) as (\S+),`).FindAllStringSubmatch(out, -1) {
		pid, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		assert.Equal(t, "tomcat", m[2], "the study's JVM %d runs as tomcat", pid)
		pids = append(pids, pid)
	}
	return pids
}

// running reports whether pid is a process that has not exited (a zombie
// waiting for PID 1 to reap it has).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// assertGone checks that the study's JVM pid no longer runs.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	assert.False(t, running(pid), "the study's JVM %d is gone", pid)
}

// TestPackaged runs the tests on Debian's tomcat10 as installed
// (/var/lib/tomcat10), one after another: one of the package's lanes
// (lanes_test.go).
func TestPackaged(t *testing.T) {
	t.Parallel()
	t.Run("ApplyStopped", testApplyPackagedStopped)
	t.Run("ApplyRunning", testApplyPackagedRunning)
	t.Run("KillThenRevert", testKillThenRevertPackaged)
	t.Run("Plan", testPlanPackaged)
	t.Run("ApplyRefusesTwoJVMs", testApplyRefusesTwoJVMs)
	t.Run("KillPlanLeavesNoCopy", testKillPlanLeavesNoCopy)
	t.Run("ApplyUserSteps", testApplyUserSteps)
}

// testApplyPackagedRunning runs the study on Debian's tomcat10 running as
// its unit runs it (user tomcat, no PID file): the study sees it, restarts
// it as tomcat, and at the end starts it again that way, answering.
func testApplyPackagedRunning(t *testing.T) {
	in, args := packagedStudy(t)
	before := testutil.StartPackagedTomcatAsUnit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, args...)
	require.NoError(t, err)
	assert.Contains(t, out, fmt.Sprintf("running       JVM %d as tomcat\n", before))
	assert.Contains(t, out, fmt.Sprintf("Tomcat runs: JVM %d as tomcat; the study restarts it as tomcat", before))
	pids := studyJVMs(t, out)
	assert.NotEmpty(t, pids)
	m := regexp.MustCompile(`Tomcat started again as found: JVM (\d+) as tomcat`).FindStringSubmatch(out)
	require.NotNil(t, m, "Tomcat started again at the end")
	jvms := jvmsOf(t, in)
	require.Len(t, jvms, 1, "one JVM: the Tomcat that ran, started again")
	assert.Equal(t, m[1], strconv.Itoa(jvms[0].PID))
	assert.Equal(t, "tomcat", jvms[0].User)
	assert.NotEqual(t, before, jvms[0].PID)
	for _, pid := range pids {
		assertGone(t, pid)
	}
	answersHello(t)
}

// testKillThenRevertPackaged kills the study with SIGKILL while it
// measures a step on Debian's running tomcat10; -revert then stops the JVM
// the run left (found in /proc) and starts Tomcat again as tomcat.
func testKillThenRevertPackaged(t *testing.T) {
	in, args := packagedStudy(t)
	journal := args[4]
	before := testutil.StartPackagedTomcatAsUnit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd, wait := startUntil(t, ctx, []string{"== measure access-log"}, args...)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	out, _ := wait()
	t.Logf("killed run:\n%s", out)
	left := studyJVMs(t, out)
	require.NotEmpty(t, left, "the run restarted Tomcat before it was killed")
	// The kill may land while the run stops one JVM to start the next:
	// what is left is the run's last JVM or none, never the one before.
	jvms := jvmsOf(t, in)
	t.Logf("JVMs after the kill: %+v", jvms)
	for _, j := range jvms {
		assert.NotEqual(t, before, j.PID)
		left = append(left, j.PID)
	}

	out, err := runProgram(t, ctx, "-revert", "-journal", journal)
	require.NoError(t, err)
	assert.Regexp(t, `(?s)reverted access-log\nreverted tomcat\n`, out)
	for _, pid := range left {
		assertGone(t, pid)
	}
	jvms = jvmsOf(t, in)
	require.Len(t, jvms, 1, "Tomcat ran before the study: -revert starts it again")
	assert.Equal(t, "tomcat", jvms[0].User)
	assert.NotContains(t, left, jvms[0].PID, "a new JVM, with the restored files")
	answersHello(t)
}

// testPlanPackaged: plan mode on Debian's stopped tomcat10 measures a
// temporary copy of its CATALINA_BASE, run as user tomcat (not root), and
// leaves nothing running.
func testPlanPackaged(t *testing.T) {
	in, _ := packagedStudy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-steps", "access-log,threads", "-repeat", "2", "-duration", "1s", "-warmup", "500ms", "-latency-rate", "300", "-connections", "8")
	require.NoError(t, err)
	m := regexp.MustCompile(`started the temporary copy (\S+): JVM (\d+) as (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "the baseline runs on a temporary copy")
	assert.Equal(t, "tomcat", m[3])
	assert.NoDirExists(t, m[1], "the temporary copy is removed")
	pid, err := strconv.Atoi(m[2])
	require.NoError(t, err)
	assertGone(t, pid)
	assert.Regexp(t, `measuring a temporary copy of /var/lib/tomcat10 at http://127\.0\.0\.1:\d+/`, out)
	assert.Empty(t, jvmsOf(t, in))
	// Issue 25: the copy and the local load do not share CPUs (by
	// affinity, under the default -cpu-method hotplug too), and it says so.
	if on, err := tuning.NewDefault().OnlineCPUs(); err == nil && on.Len() > 1 {
		assert.Regexp(t, `CPUs split by affinity: the temporary copy's JVM `+m[2]+` on CPUs \S+, the load generator on CPUs \S+ \(plan mode takes no CPU offline\)`, out)
	} else {
		assert.Contains(t, out, "the temporary copy and the load generator share it")
	}
}

// testApplyRefusesTwoJVMs: two JVMs of one base (stand-ins whose command
// line holds its -Dcatalina.base) make -apply refuse before it creates
// the journal or changes anything; neither is touched.
func testApplyRefusesTwoJVMs(t *testing.T) {
	in, port, orig := tomcatBase(t)
	var pids []int
	for range 2 {
		cmd := exec.Command("sh", "-c", `while :; do sleep 0.05; done`, "-Dcatalina.base="+in.Base)
		require.NoError(t, cmd.Start())
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
		pids = append(pids, cmd.Process.Pid)
	}
	require.Eventually(t, func() bool { return len(jvmsOf(t, in)) == 2 }, 10*time.Second, 10*time.Millisecond)
	journal := filepath.Join(t.TempDir(), "study.journal")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-apply", "-cpu-method", "affinity", "-catalina-home", in.Home, "-catalina-base", in.Base,
		"-port", strconv.Itoa(port), "-journal", journal, "-steps", "access-log")
	require.Error(t, err)
	assert.Contains(t, out, fmt.Sprintf("2 JVMs run with -Dcatalina.base=%s (PIDs %d, %d): stop all but one before -apply", in.Base, pids[0], pids[1]))
	assert.NoFileExists(t, journal)
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got)
	for _, pid := range pids {
		assert.True(t, running(pid), "JVM %d untouched", pid)
	}
}

// testKillPlanLeavesNoCopy: kill -9 of a plan-mode run during its
// baseline takes the temporary copy's JVM with it (PR_SET_PDEATHSIG), and
// the next run removes the copy's folder (issue 24, case 6: the JVM was
// left listening, and the folder behind).
func testKillPlanLeavesNoCopy(t *testing.T) {
	in, _ := packagedStudy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, wait := startUntil(t, ctx, []string{"measuring a temporary copy of"}, "-steps", "access-log", "-repeat", "2", "-duration", "1s",
		"-warmup", "20s", "-warmup-interval", "1s", "-latency-rate", "300", "-connections", "8")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	out, _ := wait()
	m := regexp.MustCompile(`started the temporary copy (\S+): JVM (\d+) as (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "%s", out)
	pid, err := strconv.Atoi(m[2])
	require.NoError(t, err)
	// The kernel's SIGKILL reaches the JVM as its parent dies; it is
	// reaped by init soon after.
	require.Eventually(t, func() bool { return !running(pid) }, 20*time.Second, 50*time.Millisecond, "JVM %d outlived the study", pid)
	assert.Empty(t, jvmsOf(t, in))
	top := filepath.Dir(m[1])
	assert.DirExists(t, top, "kill -9 leaves the folder; the next run removes it")

	out, err = runProgram(t, ctx, "-steps", "access-log", "-duration", "500ms", "-warmup", "0s", "-repeat", "1", "-latency-rate", "200", "-connections", "4")
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "removed "+top+", the temporary copy of a run that did not end")
	assert.NoDirExists(t, top)
}
