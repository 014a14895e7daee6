package nspawn

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// ForTest boots a fresh container of TomcatImage for the test t and
// returns it running; prepare (nil: none) may place files in Upper
// first. The root file system comes from DefaultCacheDir, built on first
// use (debootstrap's output goes to t.Log). Cleanup stops the container,
// also when the test fails, and fails the test if systemd-nspawn or any
// process of the container is left in /proc. The test is skipped when
// not root or when debootstrap, systemd-nspawn, nsenter or mount is
// missing; under CI=true a missing tool fails it instead.
func ForTest(t testing.TB, prepare func(upper string) error) *Container {
	t.Helper()
	var p func(*Container) error
	if prepare != nil {
		p = func(c *Container) error { return prepare(c.Upper) }
	}
	return ForTestContainer(t, p)
}

// ForTestContainer is ForTest with a prepare that gets the Container
// before Boot: it may place files in Upper and name Interfaces to move in.
func ForTestContainer(t testing.TB, prepare func(c *Container) error) *Container {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: booting a systemd container needs root")
	}
	for _, tool := range []string{"debootstrap", "systemd-nspawn", "nsenter", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI must install %s (.ci/setup: systemd-container, debootstrap): %v", tool, err)
			}
			t.Skipf("skipped: %s not installed (Debian: systemd-container, debootstrap): %v", tool, err)
		}
	}
	ctx := context.Background()
	br, err := Ensure(ctx, DefaultCacheDir, TomcatImage, tlogWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	if br.Built {
		t.Logf("nspawn: built %s in %s", br.Dir, br.Took.Round(time.Second))
	}
	c, err := New(br.Dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		if err := prepare(c); err != nil {
			t.Fatalf("nspawn: prepare the container: %v", err)
		}
	}
	took, err := c.Boot(ctx, DefaultCacheDir, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("nspawn: %s booted in %s after %s waiting for the boot lock (systemd-nspawn PID %d, container PID 1 is host PID %d)",
		c.Machine, took.Round(time.Millisecond), c.LockWait.Round(time.Millisecond), c.NspawnPID(), c.Leader())
	t.Cleanup(func() {
		t0 := time.Now()
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("cleanup: %v\n--- console ---\n%s", err, c.Console())
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", c.NspawnPID())); err == nil {
			t.Errorf("cleanup: systemd-nspawn %d still in /proc", c.NspawnPID())
		}
		if left := c.Leftovers(); len(left) > 0 {
			t.Errorf("cleanup: container processes left: %v", left)
		}
		t.Logf("nspawn: %s stopped in %s", c.Machine, time.Since(t0).Round(time.Millisecond))
	})
	return c
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
