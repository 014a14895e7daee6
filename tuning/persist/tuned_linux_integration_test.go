//go:build linux

package persist_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// waitFile polls path (bounded) until it holds want and returns the last
// value read.
func waitFile(t *testing.T, path, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, err := os.ReadFile(path)
		got := strings.TrimSpace(string(b))
		if err == nil && got == want {
			return got
		}
		if time.Now().After(deadline) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The real tuned on this host, without systemd: a profile written by
// WriteTunedProfile whose [sysfs] line takes cpu1 offline is chosen with
// `tuned-adm profile` (tuned-adm, finding no daemon, records it in
// /etc/tuned/active_profile), then `tuned --no-dbus` in the foreground,
// started and ended by this test, applies it: the real
// /sys/devices/system/cpu/cpu1/online reads 0 (within a second on a warm
// run here; the first run of tuned took about 10 s). Then the profile is
// switched off (active_profile as it was, SIGHUP: tuned reloads, rolls the
// profile back and applies none) and cpu1 is online again. Cleanup puts
// cpu1 online, active_profile back, and removes the profile, whatever
// happened.
func TestIntegrationTunedSysfsCPU1(t *testing.T) {
	testutil.RequireHostTests(t)
	for _, tool := range []string{"tuned", "tuned-adm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI must install tuned (.ci/setup): %v", err)
			}
			t.Skipf("skipped: %s not installed (Debian: tuned): %v", tool, err)
		}
	}
	testutil.LockHotplug(t)
	const cpu1 = "/sys/devices/system/cpu/cpu1/online"
	if b, err := os.ReadFile(cpu1); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skipf("skipped: cpu1 is not a hot-pluggable online CPU here (%q, %v)", b, err)
	}
	h := tuning.NewDefault()
	ph := persist.NewDefault()
	t.Cleanup(func() {
		if b, _ := os.ReadFile(cpu1); strings.TrimSpace(string(b)) != "1" {
			if err := h.SetOnline(1, true); err != nil {
				t.Errorf("CLEANUP FAILED: bring cpu1 back online: %v", err)
			}
		}
	})
	// tuned-adm rewrites these; put them back as they were.
	for _, name := range []string{"active_profile", "profile_mode", "post_loaded_profile"} {
		p := filepath.Join("/etc/tuned", name)
		old, err := os.ReadFile(p)
		existed := err == nil
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if existed {
				if err := os.WriteFile(p, old, 0o644); err != nil {
					t.Errorf("cleanup: restore %s: %v", p, err)
				}
			} else {
				os.Remove(p)
			}
		})
	}
	// tuned makes /run/tuned for its state; a directory it made goes
	// again (os.Remove leaves it when something is still in it).
	if _, err := os.Stat("/run/tuned"); errors.Is(err, os.ErrNotExist) {
		t.Cleanup(func() { _ = os.Remove("/run/tuned") })
	}
	before, err := ph.ActiveTunedProfile()
	require.NoError(t, err)

	name := "nettune-test-" + strconv.Itoa(os.Getpid())
	w, err := ph.WriteTunedProfile(persist.TunedProfile{
		Name:    name,
		Summary: "nettune integration test: cpu1 offline",
		Sysfs:   []persist.Setting{{Key: "/sys/devices/system/cpu/cpu1/online", Value: "0"}},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := w.Undo(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	td := &persist.Tuned{}
	require.NoError(t, td.Activate(ctx, name))
	got, err := ph.ActiveTunedProfile()
	require.NoError(t, err)
	require.Equal(t, []string{name}, got, "tuned-adm recorded the profile")
	active, running, err := td.Active(ctx)
	require.NoError(t, err)
	require.False(t, running, "no tuned daemon yet")
	require.Equal(t, []string{name}, active)

	log := filepath.Join(t.TempDir(), "tuned.log")
	cmd := exec.Command("tuned", "--no-dbus", "--no-socket", "--log="+log)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := cmd.Process.Pid
	t.Logf("tuned --no-dbus started, PID %d", pid)
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		// Only the tuned this test started, by its PID.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			t.Logf("tuned %d ended: %v", pid, err)
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("tuned %d did not end within 30 s of SIGTERM: killed", pid)
		}
	}
	t.Cleanup(stop)
	tunedLog := func() string { b, _ := os.ReadFile(log); return string(b) }

	if v := waitFile(t, cpu1, "0", 60*time.Second); v != "0" {
		t.Fatalf("tuned did not take cpu1 offline within 60 s: %s holds %q\n--- tuned log ---\n%s", cpu1, v, tunedLog())
	}
	t.Logf("tuned applied [sysfs]: %s = 0", cpu1)

	// Switch the profile off: active_profile as before, and SIGHUP, which
	// tuned answers by stopping (rolling back), re-reading its
	// configuration and starting with no profile.
	require.NoError(t, os.WriteFile("/etc/tuned/active_profile", []byte(strings.Join(before, " ")+"\n"), 0o644))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	if v := waitFile(t, cpu1, "1", 60*time.Second); v != "1" {
		t.Fatalf("tuned did not bring cpu1 back when its profile was switched off: %s holds %q\n--- tuned log ---\n%s", cpu1, v, tunedLog())
	}
	t.Logf("profile switched off: %s = 1 again", cpu1)
	stop()
	if v := waitFile(t, cpu1, "1", time.Second); v != "1" {
		t.Fatalf("%s = %q after tuned ended", cpu1, v)
	}
}
