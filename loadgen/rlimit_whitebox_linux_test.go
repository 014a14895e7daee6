package loadgen

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/rlimit"
)

// TestRaiseNoFile raises the soft limit to the hard one, and past the hard
// one: either the process may (CAP_SYS_RESOURCE) or the error says why and
// matches ErrOpenFiles and the errno. The limit is restored.
func TestRaiseNoFile(t *testing.T) {
	orig, err := rlimit.Get(0)
	require.NoError(t, err)
	if orig.Hard < 2048 || orig.Hard == ^uint64(0) {
		t.Skipf("skipped: hard RLIMIT_NOFILE %d", orig.Hard)
	}
	t.Cleanup(func() { require.NoError(t, rlimit.Set(0, orig)) })

	require.NoError(t, rlimit.Set(0, rlimit.Limit{Soft: 256, Hard: orig.Hard}))
	ch, err := raiseNoFile(512)
	require.NoError(t, err)
	assert.Equal(t, RlimitChange{Before: 256, After: orig.Hard, Max: orig.Hard}, ch)

	ch, err = raiseNoFile(orig.Hard)
	require.NoError(t, err)
	assert.Equal(t, RlimitChange{Before: orig.Hard, After: orig.Hard, Max: orig.Hard}, ch, "enough already: unchanged")

	ch, err = raiseNoFile(orig.Hard + 1)
	if err != nil {
		require.ErrorIs(t, err, ErrOpenFiles)
		require.ErrorIs(t, err, syscall.EPERM)
		assert.Equal(t, RlimitChange{Before: orig.Hard, After: orig.Hard, Max: orig.Hard}, ch)
		t.Log(err)
		return
	}
	assert.Equal(t, RlimitChange{Before: orig.Hard, After: orig.Hard + 1, Max: orig.Hard + 1}, ch)
}
