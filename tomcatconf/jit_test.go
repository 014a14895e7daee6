//go:build linux

package tomcatconf_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tomcatconf"
)

// jvmTree is a fake /proc with one JVM: its process stat line and one
// stat line per thread.
type jvmTree struct {
	root string
	pid  int
}

// statLine is a /proc stat line with the given name, utime, stime and
// start time (fields 2, 14, 15 and 22).
func statLine(pid int, comm string, utime, stime, start uint64) string {
	return fmt.Sprintf("%d (%s) S 1 1 1 0 -1 4194368 0 0 0 0 %d %d 0 0 20 0 37 0 %d 9213693952 64475\n", pid, comm, utime, stime, start)
}

func (j jvmTree) process(t *testing.T, utime, stime, start uint64) {
	t.Helper()
	dir := filepath.Join(j.root, "proc", strconv.Itoa(j.pid))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "task"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(statLine(j.pid, "java", utime, stime, start)), 0o644))
}

func (j jvmTree) thread(t *testing.T, tid int, comm string, utime, stime uint64) {
	t.Helper()
	dir := filepath.Join(j.root, "proc", strconv.Itoa(j.pid), "task", strconv.Itoa(tid))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(statLine(tid, comm, utime, stime, 154381)), 0o644))
}

func (j jvmTree) end(t *testing.T, tid int) {
	t.Helper()
	require.NoError(t, os.RemoveAll(filepath.Join(j.root, "proc", strconv.Itoa(j.pid), "task", strconv.Itoa(tid))))
}

// TestJITMeter follows a JVM through four intervals: compiling hard,
// a compiler thread started and one ended, a TID reused, then quiet; and
// the errors when it is gone or its PID is another process's.
func TestJITMeter(t *testing.T) {
	j := jvmTree{root: t.TempDir(), pid: 4242}
	const start = 154381
	j.process(t, 1000, 200, start)
	j.thread(t, 4242, "java", 50, 20)
	j.thread(t, 4250, "C2 CompilerThre", 300, 10)
	j.thread(t, 4251, "C1 CompilerThre", 120, 5)
	j.thread(t, 4260, "http-nio-8080-e", 400, 100)
	m, err := tomcatconf.NewJITMeter(j.pid, &tomcatconf.JITOptions{Root: j.root})
	require.NoError(t, err)

	// Interval 1: the JVM used 2 s, the compilers 0.8 s of it.
	j.process(t, 1150, 250, start)
	j.thread(t, 4250, "C2 CompilerThre", 350, 12) // +52 ticks
	j.thread(t, 4251, "C1 CompilerThre", 148, 5)  // +28
	j.thread(t, 4260, "http-nio-8080-e", 470, 110)
	s, err := m.Sample()
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, s.Process)
	assert.Equal(t, 800*time.Millisecond, s.Compiler)
	assert.Equal(t, 2, s.Threads)
	assert.InDelta(t, 0.4, s.Share(), 1e-12)
	assert.Positive(t, s.Interval)

	// Interval 2: C1 ended, a second C2 started (HotSpot's dynamic
	// compiler threads): the new one counts from zero.
	j.process(t, 1300, 300, start)
	j.end(t, 4251)
	j.thread(t, 4250, "C2 CompilerThre", 360, 12) // +10
	j.thread(t, 4252, "C2 CompilerThre", 6, 0)    // +6, new
	share, err := m.CompilerShare()
	require.NoError(t, err)
	assert.InDelta(t, 0.08, share, 1e-12, "16 of 200 ticks")

	// Interval 3: TID 4252 ended and was reused by a new compiler thread
	// with less CPU time: it counts from zero.
	j.process(t, 1400, 300, start)
	j.thread(t, 4252, "C2 CompilerThre", 2, 0)
	s, err = m.Sample()
	require.NoError(t, err)
	assert.Equal(t, 20*time.Millisecond, s.Compiler)
	assert.Equal(t, time.Second, s.Process)

	// Interval 4: quiet compilers.
	j.process(t, 1600, 300, start)
	s, err = m.Sample()
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), s.Compiler)
	assert.Equal(t, 0.0, s.Share())

	// An idle JVM: no CPU, share 0.
	s, err = m.Sample()
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), s.Process)
	assert.Equal(t, 0.0, s.Share())

	// The PID is another process's now.
	j.process(t, 5, 1, start+999)
	_, err = m.Sample()
	assert.ErrorContains(t, err, "PID 4242 is another process now")

	// The JVM is gone.
	require.NoError(t, os.RemoveAll(filepath.Join(j.root, "proc", "4242")))
	_, err = m.Sample()
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = tomcatconf.NewJITMeter(j.pid, &tomcatconf.JITOptions{Root: j.root})
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = tomcatconf.NewJITMeter(1, &tomcatconf.JITOptions{Root: filepath.Join(j.root, "missing")})
	assert.Error(t, err)
}

// The captured Debian tomcat10 JVM's threads: the meter finds its two
// compiler threads by their kernel names.
func TestJITMeterCaptured(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(tomcatRoot(t), "proc", "6083", "task")
	ents, err := os.ReadDir(src)
	require.NoError(t, err)
	j := jvmTree{root: root, pid: 6083}
	j.process(t, 90000, 9000, 154381)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name(), "stat"))
		require.NoError(t, err)
		dir := filepath.Join(root, "proc", "6083", "task", e.Name())
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), data, 0o644))
	}
	m, err := tomcatconf.NewJITMeter(6083, &tomcatconf.JITOptions{Root: root})
	require.NoError(t, err)
	j.process(t, 90100, 9000, 154381)
	s, err := m.Sample()
	require.NoError(t, err)
	assert.Equal(t, 2, s.Threads, "C1 CompilerThre and C2 CompilerThre")
	assert.Equal(t, time.Duration(0), s.Compiler)
	assert.Equal(t, time.Second, s.Process)
}
