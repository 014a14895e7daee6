package tuning_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// lockHotplug serialises the tests that hotplug cpu1 across test
// processes (go test runs packages in parallel; examples/cpus has the
// same lock). It waits at most a minute and releases in t.Cleanup.
func lockHotplug(t *testing.T) {
	t.Helper()
	p := filepath.Join(os.TempDir(), "nettune-cpu-hotplug.lock")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("hotplug lock %s: %v", p, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK || time.Now().After(deadline) {
			f.Close()
			t.Fatalf("hotplug lock %s: %v", p, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}
