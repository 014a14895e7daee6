//go:build linux

package numa

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pin that fails on the second thread puts the first one back: this test
// process (the Go runtime runs several OS threads) is pinned for real, with
// a refusal injected for one thread.
func TestPinUndoesOnFailure(t *testing.T) {
	h := NewDefault()
	pid := os.Getpid()
	before, err := h.Affinity(pid)
	require.NoError(t, err)
	require.Greater(t, len(before.Threads), 1, "the Go runtime runs several threads")
	topo, err := h.Topology()
	require.NoError(t, err)
	target := topo.Online.First(1)

	calls := 0
	h.setAffinity = func(tid int, cpus CPUSet) error {
		calls++
		if calls == 2 {
			return syscall.EBUSY
		}
		return setAffinity(tid, cpus)
	}
	t.Cleanup(func() { _ = NewDefault().RestoreAffinity(before) })
	_, err = h.Pin(pid, target)
	require.ErrorIs(t, err, syscall.EBUSY)
	var ae *AffinityError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, pid, ae.PID)

	after, err := h.Affinity(pid)
	require.NoError(t, err)
	was := map[int]CPUSet{}
	for _, th := range before.Threads {
		was[th.TID] = th.CPUs
	}
	for _, th := range after.Threads {
		if w, ok := was[th.TID]; ok {
			assert.Equal(t, w.String(), th.CPUs.String(), "thread %d put back", th.TID)
		}
	}
	assert.Equal(t, 3, calls, "two pins, then the first thread put back")
}

// When putting the first thread back fails too, Pin's error carries both
// failures: the pin's (EBUSY) and the rollback's (EIO), naming the thread
// left pinned.
func TestPinReportsFailedUndo(t *testing.T) {
	h := NewDefault()
	pid := os.Getpid()
	before, err := h.Affinity(pid)
	require.NoError(t, err)
	require.Greater(t, len(before.Threads), 1, "the Go runtime runs several threads")
	topo, err := h.Topology()
	require.NoError(t, err)
	target := topo.Online.First(1)

	var calls []int
	h.setAffinity = func(tid int, cpus CPUSet) error {
		calls = append(calls, tid)
		switch len(calls) {
		case 2:
			return syscall.EBUSY // the pin of the second thread
		case 3:
			return syscall.EIO // putting the first one back
		}
		return setAffinity(tid, cpus)
	}
	t.Cleanup(func() { _ = NewDefault().RestoreAffinity(before) })
	_, err = h.Pin(pid, target)
	require.ErrorIs(t, err, syscall.EBUSY)
	require.ErrorIs(t, err, syscall.EIO, "the rollback's failure is not dropped")
	require.Len(t, calls, 3)
	assert.Equal(t, calls[0], calls[2], "the rollback is of the first thread")
	var ae *AffinityError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, calls[1], ae.TID, "the first error is the pin's")
	_, undo, ok := strings.Cut(err.Error(), "putting back the threads already pinned")
	require.True(t, ok, err.Error())
	assert.Contains(t, undo, fmt.Sprintf(" %d ", calls[0]), "names the thread left pinned")
}
