//go:build linux

package numa

import (
	"os"
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
	assert.Equal(t, 2, calls)
}
