package lockfile_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/lockfile"
	"github.com/nettune/nettune/internal/testutil"
)

func TestAcquireRefusesSecondOwnerNamingPID(t *testing.T) {
	p := filepath.Join(t.TempDir(), "locks", "host.lock")
	l, err := lockfile.Acquire(p)
	require.NoError(t, err)
	t.Cleanup(func() { l.Unlock() })
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(b), "the owner writes its PID")

	// flock belongs to the open file description: a second Acquire in the
	// same process is refused as another process's would be.
	_, err = lockfile.Acquire(p)
	require.ErrorIs(t, err, lockfile.ErrLocked)
	var held *lockfile.HeldError
	require.True(t, errors.As(err, &held))
	assert.Equal(t, os.Getpid(), held.PID)
	assert.ErrorContains(t, err, p+" is locked by PID "+strconv.Itoa(os.Getpid()))

	require.NoError(t, l.Unlock())
	require.NoError(t, l.Unlock(), "twice is a no-op")
	l2, err := lockfile.Acquire(p)
	require.NoError(t, err, "free again after Unlock")
	require.NoError(t, l2.Unlock())
}

func TestParsePID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"decimal", "4242\n", 4242},
		{"journal open record", `{"seq":0,"op":"open","time":"2026-12-03T00:00:00Z","pid":77}` + "\n{}\n", 77},
		{"empty", "", 0},
		{"zero", "0\n", 0},
		{"negative", "-5\n", 0},
		{"not a pid", "hello\n", 0},
		{"pid on the second line only", "x\n12\n", 0},
		{"json without digits", `{"pid":"x"}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, lockfile.ParsePID([]byte(tt.in)))
		})
	}
}

// TestLockDiesWithOwner takes the lock in a child process, sees it refused
// with the child's PID, kills the child with SIGKILL and takes it: the
// kernel released it.
func TestLockDiesWithOwner(t *testing.T) {
	if p := os.Getenv("NETTUNE_LOCK_CHILD"); p != "" {
		return
	}
	testutil.SkipUnderUserEmulation(t, "re-executes the test binary, which user-mode qemu without binfmt cannot run")
	p := filepath.Join(t.TempDir(), "base.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockChild$")
	cmd.Env = append(os.Environ(), "NETTUNE_LOCK_CHILD="+p)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.Contains(sc.Text(), "locked") {
	}
	require.NoError(t, sc.Err())

	_, err = lockfile.Acquire(p)
	var held *lockfile.HeldError
	require.True(t, errors.As(err, &held), "got %v", err)
	assert.Equal(t, cmd.Process.Pid, held.PID)

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	l, err := lockfile.Acquire(p)
	require.NoError(t, err, "the kernel drops a dead owner's lock")
	require.NoError(t, l.Unlock())
}

// TestLockChild is the child half of TestLockDiesWithOwner: it takes the
// lock, says so, and waits to be killed.
func TestLockChild(t *testing.T) {
	p := os.Getenv("NETTUNE_LOCK_CHILD")
	if p == "" {
		t.Skip("helper process for TestLockDiesWithOwner")
	}
	_, err := lockfile.Acquire(p)
	require.NoError(t, err)
	os.Stdout.WriteString("locked\n")
	time.Sleep(2 * time.Minute) // until SIGKILL
}
