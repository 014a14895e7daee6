package nspawn

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	if err := passJVMOptions(c.Upper); err != nil {
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

// passJVMOptions gives the container's services the test process's
// JDK_JAVA_OPTIONS, when it is set, as the host's JVMs get it from the
// test's environment: a systemd manager drop-in in upper
// (etc/systemd/system.conf.d, DefaultEnvironment=), which the units'
// environment (tomcat10.service's, its EnvironmentFile) does not show.
// A package's tests set it to make their JVMs cheaper to start
// (examples/tomcat-tuning compiles with C1 only); without it the
// container is as the image built it.
func passJVMOptions(upper string) error {
	v := os.Getenv("JDK_JAVA_OPTIONS")
	if v == "" {
		return nil
	}
	if strings.ContainsAny(v, "\"\\\n") {
		return fmt.Errorf("nspawn: JDK_JAVA_OPTIONS %q: want options without quotes, backslashes or newlines", v)
	}
	dir := filepath.Join(upper, "etc", "systemd", "system.conf.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("nspawn: %w", err)
	}
	body := "# The test's JVM options (internal/nspawn.ForTest), for every service.\n[Manager]\nDefaultEnvironment=\"JDK_JAVA_OPTIONS=" + v + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "test-jvm-options.conf"), []byte(body), 0o644); err != nil {
		return fmt.Errorf("nspawn: %w", err)
	}
	return nil
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
