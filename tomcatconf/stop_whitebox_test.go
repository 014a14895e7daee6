package tomcatconf

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaitExitUntilGone: while a JVM exits, the kernel empties its
// command line and takes its root directory away before the process is
// gone. waitExit must wait for the process itself (gone, a zombie, or its
// PID taken by a process with another start time), not for the moment it
// stops looking like the JVM: an early return let Stop report a JVM gone
// that still flushed its files (CI: the access log not yet written, the
// plan-mode JVM still in /proc after the study returned).
func TestWaitExitUntilGone(t *testing.T) {
	root := t.TempDir()
	procDir := filepath.Join(root, "proc", "4242")
	require.NoError(t, os.MkdirAll(procDir, 0o755))
	in := &Instance{Home: "/usr/share/tomcat10", Base: "/var/lib/tomcat10", Root: root}
	stat := func(state string, start string) {
		line := "4242 (java) " + state + " 1 4242 4242 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 40 0 " + start + " 1 1\n"
		require.NoError(t, os.WriteFile(filepath.Join(procDir, "stat"), []byte(line), 0o644))
	}
	// Running, identified by its command line.
	stat("S", "777")
	require.NoError(t, os.WriteFile(filepath.Join(procDir, "cmdline"),
		[]byte("java\x00-Dcatalina.base=/var/lib/tomcat10\x00org.apache.catalina.startup.Bootstrap\x00start\x00"), 0o644))
	require.True(t, in.alive(4242))
	started, err := in.startTime(4242)
	require.NoError(t, err)
	assert.Equal(t, uint64(777), started)

	ctx := context.Background()
	// Exiting: no command line any more, still in /proc.
	require.NoError(t, os.WriteFile(filepath.Join(procDir, "cmdline"), nil, 0o644))
	assert.False(t, in.alive(4242))
	assert.False(t, in.waitExit(ctx, 4242, started, 250*time.Millisecond), "still exiting: not gone")

	stat("Z", "777")
	assert.True(t, in.waitExit(ctx, 4242, started, time.Second), "a zombie has exited")
	stat("S", "999")
	assert.True(t, in.waitExit(ctx, 4242, started, time.Second), "another process with this PID")
	require.NoError(t, os.Remove(filepath.Join(procDir, "stat")))
	assert.True(t, in.waitExit(ctx, 4242, started, time.Second), "gone")

	_, err = in.startTime(4242)
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, os.WriteFile(filepath.Join(procDir, "stat"), []byte("4242 (java S 1\n"), 0o644))
	_, err = in.startTime(4242)
	assert.ErrorContains(t, err, `want "pid (comm) state ..."`, "no \")\" after the command name")
}
