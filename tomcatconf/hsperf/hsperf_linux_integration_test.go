//go:build linux

package hsperf_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf/hsperf"
)

// aliveJVM is testdata/java/Alloc.java running: its stdin asks it to
// allocate, its stdout says when it has.
type aliveJVM struct {
	pid  int
	in   io.WriteCloser
	out  *bufio.Scanner
	done chan struct{}
}

// alloc makes the JVM allocate for d and waits until it has.
func (j *aliveJVM) alloc(t *testing.T, d time.Duration) {
	t.Helper()
	_, err := io.WriteString(j.in, "alloc "+strconv.FormatInt(d.Milliseconds(), 10)+"\n")
	require.NoError(t, err)
	require.True(t, j.out.Scan(), "the JVM ended: %v", j.out.Err())
	require.Equal(t, "done", j.out.Text())
}

// startAlloc compiles Alloc.java and runs it as user nobody in a mount
// namespace of its own whose /tmp is a fresh tmpfs (what a systemd unit
// with PrivateTmp=yes gets): its hsperfdata file is in no /tmp this
// process sees but its /proc/PID/root/tmp. t.Cleanup ends the JVM by its
// PID and checks from /proc that it is gone.
func startAlloc(t *testing.T, javaArgs ...string) *aliveJVM {
	t.Helper()
	testutil.RequireRoot(t)
	for _, tool := range []string{"java", "javac", "jstat", "unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s not installed (.ci/setup installs openjdk-17-jdk-headless and util-linux)", tool)
		}
	}
	classes := t.TempDir()
	require.NoError(t, os.Chmod(classes, 0o755))
	out, err := exec.Command("javac", "-d", classes, filepath.Join("testdata", "java", "Alloc.java")).CombinedOutput()
	require.NoError(t, err, "javac: %s", out)
	// The shell opens the classes' folder (the tmpfs hides it, and nobody
	// may not enter the test's temporary folder: the JVM reaches it by the
	// descriptor), mounts the private /tmp, then becomes the JVM (exec):
	// the PID started is the JVM's.
	script := `exec 3<"$0" && mount -t tmpfs -o mode=1777 nettune-hsperf /tmp && exec setpriv --reuid=nobody --regid=nogroup --clear-groups java "$@"`
	args := append([]string{"-m", "--propagation", "private", "sh", "-c", script, classes}, javaArgs...)
	cmd := exec.Command("unshare", append(args, "-Xmx64m", "-cp", "/proc/self/fd/3", "Alloc")...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	j := &aliveJVM{pid: cmd.Process.Pid, in: in, out: bufio.NewScanner(stdout), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(j.done) }()
	t.Cleanup(func() {
		_ = in.Close()
		select {
		case <-j.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-j.done
		}
		_, err := os.Stat("/proc/" + strconv.Itoa(j.pid))
		assert.True(t, os.IsNotExist(err), "the JVM %d is gone", j.pid)
	})
	require.True(t, j.out.Scan(), "the JVM did not start: %v", j.out.Err())
	require.Equal(t, "ready", j.out.Text())
	return j
}

// jstatSnap is what jstat -snap prints of the hsperfdata bytes data
// (written to a file first: the same bytes this package parsed).
func jstatSnap(t *testing.T, data []byte) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "hsperfdata")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "jstat", "-J-Djstat.showUnsupported=true", "-snap", "file://"+file).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	sort.Strings(lines)
	return lines
}

// TestIntegrationReadLiveJVM: a JVM run as nobody behind a private /tmp
// is found through its /proc/PID/root, reads as jstat reads the same
// bytes, and its figures count the collections of an allocation between
// two snapshots.
func TestIntegrationReadLiveJVM(t *testing.T) {
	j := startAlloc(t, "-XX:+UseParallelGC")
	_, err := os.Stat(filepath.Join("/tmp", "hsperfdata_nobody", strconv.Itoa(j.pid)))
	require.True(t, os.IsNotExist(err), "the JVM's /tmp is its own")

	var path string
	require.Eventually(t, func() bool { path, err = hsperf.Find(j.pid, nil); return err == nil }, 10*time.Second, 20*time.Millisecond, "%v", err)
	assert.Equal(t, filepath.Join("/proc", strconv.Itoa(j.pid), "root", "tmp", "hsperfdata_nobody", strconv.Itoa(j.pid)), path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	s, err := hsperf.Parse(data)
	require.NoError(t, err)
	assert.Equal(t, jstatSnap(t, data), snapLines(s))
	before, err := s.Figures()
	require.NoError(t, err)

	j.alloc(t, 500*time.Millisecond)
	s2, err := hsperf.Read(j.pid, nil)
	require.NoError(t, err)
	after, err := s2.Figures()
	require.NoError(t, err)
	d, err := after.Sub(before)
	require.NoError(t, err)
	n, pause := d.GC()
	t.Logf("500 ms of allocation: %d collections, %s paused (%+v)", n, pause, d.Collectors)
	assert.Positive(t, n, "allocating 64 KiB arrays for 500 ms in a 64 MiB heap collects")
	assert.Positive(t, pause)
	assert.Equal(t, "Parallel young collection pauses", d.Collectors[0].Name)
	_, err = before.Sub(after)
	assert.ErrorContains(t, err, "went down")
}

// TestIntegrationFindNoJVM: a process that is no JVM has no counters.
func TestIntegrationFindNoJVM(t *testing.T) {
	_, err := hsperf.Find(os.Getpid(), nil)
	assert.ErrorIs(t, err, hsperf.ErrNoCounters)
	_, err = hsperf.Find(1<<30, nil)
	assert.ErrorContains(t, err, "process 1073741824")
}
