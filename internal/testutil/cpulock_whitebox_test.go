package testutil

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCPULockOrder runs the CPU lock in a directory of its own: two
// readers share it, a writer waits for both, and a reader that arrives
// while the writer waits goes after the writer.
func TestCPULockOrder(t *testing.T) {
	dir := t.TempDir()
	const wait = 10 * time.Second
	var (
		mu     sync.Mutex
		events []string
	)
	log := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	r1, err := lockCPUsIn(dir, false, wait)
	require.NoError(t, err)
	r2, err := lockCPUsIn(dir, false, wait)
	require.NoError(t, err, "readers share the lock")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		w, err := lockCPUsIn(dir, true, wait)
		if !assert.NoError(t, err) {
			return
		}
		log("writer in")
		time.Sleep(100 * time.Millisecond)
		log("writer out")
		w()
	}()
	time.Sleep(200 * time.Millisecond) // the writer now waits for r1 and r2
	go func() {
		defer wg.Done()
		r3, err := lockCPUsIn(dir, false, wait)
		if !assert.NoError(t, err) {
			return
		}
		log("late reader in")
		r3()
	}()
	time.Sleep(200 * time.Millisecond)
	log("readers out")
	r1()
	r2()
	wg.Wait()
	assert.Equal(t, []string{"readers out", "writer in", "writer out", "late reader in"}, events)

	w, err := lockCPUsIn(dir, true, wait)
	require.NoError(t, err)
	_, err = lockCPUsIn(dir, false, 100*time.Millisecond)
	require.ErrorContains(t, err, "nettune-cpu-turnstile.lock", "a reader gives up at its deadline and names the lock")
	w()
	r, err := lockCPUsIn(dir, false, wait)
	require.NoError(t, err, "a failed wait leaves nothing held")
	r()
}
