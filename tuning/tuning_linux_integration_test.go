package tuning_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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

	"github.com/nettune/nettune/internal/rlimit"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tuning"
)

func readSys(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// Offline cpu1 of this machine, check /sys/devices/system/cpu/online and
// the real lscpu, and bring it back, also when the test fails.
func TestIntegrationHotplugCPU1(t *testing.T) {
	testutil.RequireHostTests(t)
	testutil.LockHotplug(t)
	h := tuning.NewDefault()
	st, err := h.CPUState()
	require.NoError(t, err)
	c1, ok := st.CPU(1)
	if !ok || !c1.Hotpluggable {
		t.Skip("skipped: this host has no hot-pluggable cpu1")
	}
	if !c1.Online {
		t.Skip("skipped: cpu1 is already offline (another test is using it)")
	}
	const onlineFile = "/sys/devices/system/cpu/online"
	const cpu1Online = "/sys/devices/system/cpu/cpu1/online"
	t.Cleanup(func() {
		// Whatever happened, cpu1 goes back online.
		if readSys(t, cpu1Online) != "1" {
			if err := os.WriteFile(cpu1Online, []byte("1"), 0); err != nil {
				t.Errorf("CLEANUP FAILED: bring cpu1 back online: %v", err)
			}
		}
	})
	ctx := context.Background()
	before := readSys(t, onlineFile)

	zero, err := tuning.ParseCPUList("0")
	require.NoError(t, err)
	snap, err := h.KeepOnline(ctx, zero, nil)
	require.NoError(t, err)
	offlineView := readSys(t, onlineFile)
	var lscpuOut []byte
	if _, err := exec.LookPath("lscpu"); err == nil {
		lscpuOut, _ = exec.Command("lscpu").Output()
	}
	sum, sumErr := h.Summary()
	require.NoError(t, h.RestoreCPUs(ctx, snap))
	restored := readSys(t, onlineFile)

	assert.Equal(t, "0", offlineView, "only cpu0 online while cpu1 is offline")
	assert.Equal(t, before, restored)
	require.NoError(t, sumErr)
	assert.Equal(t, "1", sum.Offline.Lscpu())
	if lscpuOut != nil {
		assert.Contains(t, string(lscpuOut), "Off-line CPU(s) list:")
		for _, want := range []string{"On-line CPU(s) list:", "Off-line CPU(s) list:", "NUMA node0 CPU(s):"} {
			ours := valueOf(sum.Text(&tuning.SummaryOptions{Flat: true}), want)
			theirs := valueOf(string(lscpuOut), want)
			assert.Equal(t, theirs, ours, want)
		}
	}

	// Restoring again changes nothing.
	require.NoError(t, h.RestoreCPUs(ctx, snap))
	assert.Equal(t, before, readSys(t, onlineFile))

	// The single-CPU calls, and cpu0 which x86 cannot offline.
	require.NoError(t, h.SetOnline(1, false))
	assert.Equal(t, "0", readSys(t, onlineFile))
	require.NoError(t, h.SetOnline(1, true))
	assert.Equal(t, before, readSys(t, onlineFile))
	err = h.SetOnline(0, false)
	if c0, _ := st.CPU(0); !c0.Hotpluggable {
		require.ErrorIs(t, err, tuning.ErrNotHotpluggable)
	}
	assert.Equal(t, before, readSys(t, onlineFile))
}

func valueOf(text, label string) string {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), label); ok {
			return strings.TrimSpace(rest)
		}
	}
	return "(missing)"
}

// The ApacheBench walkthrough's step: raise net.ipv4.tcp_max_tw_buckets,
// read it back, have a bad value refused, restore.
func TestIntegrationSysctlTwBuckets(t *testing.T) {
	testutil.RequireHostTests(t)
	const name = "net.ipv4.tcp_max_tw_buckets"
	const file = "/proc/sys/net/ipv4/tcp_max_tw_buckets"
	h := tuning.NewDefault()
	orig, err := h.Sysctl(name)
	require.NoError(t, err)
	require.Equal(t, readSys(t, file), orig)
	t.Cleanup(func() {
		if readSys(t, file) != orig {
			if err := os.WriteFile(file, []byte(orig), 0); err != nil {
				t.Errorf("CLEANUP FAILED: restore %s=%s: %v", name, orig, err)
			}
		}
	})
	n, err := strconv.Atoi(orig)
	require.NoError(t, err)
	want := strconv.Itoa(n + 12345)
	prev, err := h.SetSysctl(name, want)
	require.NoError(t, err)
	assert.Equal(t, orig, prev)
	assert.Equal(t, want, readSys(t, file))

	_, err = h.SetSysctl(name, "two-million")
	require.ErrorIs(t, err, syscall.EINVAL)
	assert.Contains(t, err.Error(), `"two-million"`)
	assert.Contains(t, err.Error(), file)
	assert.Equal(t, want, readSys(t, file), "a refused value changes nothing")

	back, err := h.SetSysctl(name, prev)
	require.NoError(t, err)
	assert.Equal(t, want, back)
	assert.Equal(t, orig, readSys(t, file))
}

// limitsFile reads "Max open files" from /proc/PID/limits.
func limitsFile(t *testing.T, pid string) tuning.FileLimit {
	t.Helper()
	f, err := os.Open(filepath.Join("/proc", pid, "limits"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Max open files"); ok {
			fs := strings.Fields(rest)
			require.GreaterOrEqual(t, len(fs), 2)
			parse := func(s string) uint64 {
				if s == "unlimited" {
					return ^uint64(0) // RLIM_INFINITY
				}
				v, err := strconv.ParseUint(s, 10, 64)
				require.NoError(t, err)
				return v
			}
			return tuning.FileLimit{Soft: parse(fs[0]), Hard: parse(fs[1])}
		}
	}
	t.Fatal("no Max open files line")
	return tuning.FileLimit{}
}

// capSysResource reports whether this test process has CAP_SYS_RESOURCE
// (bit 24 of CapEff in /proc/self/status). Root in a container often
// does not.
func capSysResource(t *testing.T) bool {
	t.Helper()
	for _, line := range strings.Split(readSys(t, "/proc/self/status"), "\n") {
		if rest, ok := strings.CutPrefix(line, "CapEff:"); ok {
			v, err := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
			require.NoError(t, err)
			return v&(1<<24) != 0
		}
	}
	t.Fatal("no CapEff line")
	return false
}

func TestOpenFilesLimit(t *testing.T) {
	l, err := tuning.OpenFilesLimit(0)
	require.NoError(t, err)
	assert.Equal(t, limitsFile(t, "self"), l)
	assert.LessOrEqual(t, l.Soft, l.Hard)
}

func TestRaiseOpenFilesLimit(t *testing.T) {
	cur, err := tuning.OpenFilesLimit(0)
	require.NoError(t, err)
	t.Cleanup(func() {
		if _, err := tuning.SetOpenFilesLimit(0, cur); err != nil {
			t.Errorf("restore open-files limit: %v", err)
		}
	})
	// Lower the soft limit first (always allowed), then raise it back.
	low := tuning.FileLimit{Soft: 512, Hard: cur.Hard}
	prev, err := tuning.SetOpenFilesLimit(0, low)
	require.NoError(t, err)
	assert.Equal(t, cur, prev)
	prev, err = tuning.RaiseOpenFilesLimit(1000)
	require.NoError(t, err)
	assert.Equal(t, low, prev)
	assert.Equal(t, tuning.FileLimit{Soft: 1000, Hard: cur.Hard}, limitsFile(t, "self"))
	// Never lowered.
	_, err = tuning.RaiseOpenFilesLimit(10)
	require.NoError(t, err)
	assert.Equal(t, uint64(1000), limitsFile(t, "self").Soft)

	_, err = tuning.SetOpenFilesLimit(0, tuning.FileLimit{Soft: 10, Hard: 5})
	require.ErrorIs(t, err, tuning.ErrLimit)
}

// Above fs.nr_open even root is refused, and the limit is unchanged.
func TestIntegrationRaiseOpenFilesAboveNrOpen(t *testing.T) {
	testutil.RequireRoot(t)
	nrOpen, err := tuning.NewDefault().Sysctl("fs.nr_open")
	require.NoError(t, err)
	n, err := strconv.ParseUint(nrOpen, 10, 64)
	require.NoError(t, err)
	before := limitsFile(t, "self")
	_, err = tuning.RaiseOpenFilesLimit(n + 1)
	require.ErrorIs(t, err, os.ErrPermission)
	var le *tuning.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, n+1, le.Want.Hard)
	assert.Contains(t, err.Error(), "fs.nr_open")
	assert.Equal(t, before, limitsFile(t, "self"))
}

// startWithOpenFiles raises this process's limit to n and starts cmd,
// which inherits it, and returns the limit the child started with.
func startWithOpenFiles(cmd *exec.Cmd, n uint64) (tuning.FileLimit, error) {
	if _, err := tuning.RaiseOpenFilesLimit(n); err != nil {
		return tuning.FileLimit{}, err
	}
	if err := cmd.Start(); err != nil {
		return tuning.FileLimit{}, err
	}
	return tuning.OpenFilesLimit(0)
}

// A raised limit reaches a child from its first instruction: the child's
// own shell reports it.
func TestRaiseOpenFilesLimitChildInherits(t *testing.T) {
	cur, err := tuning.OpenFilesLimit(0)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = tuning.SetOpenFilesLimit(0, cur) })
	want := uint64(rlimit.DefaultNoFile)
	if cur.Hard < want && !capSysResource(t) {
		want = cur.Hard
	}
	cmd := exec.Command("/bin/sh", "-c", "ulimit -Sn; ulimit -Hn")
	var out strings.Builder
	cmd.Stdout = &out
	got, err := startWithOpenFiles(cmd, want)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	fields := strings.Fields(out.String())
	require.Len(t, fields, 2)
	soft, err := strconv.ParseUint(fields[0], 10, 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, soft, want)
	assert.Equal(t, fields[0], strconv.FormatUint(got.Soft, 10))
}

// prlimit on a running child, as `prlimit --pid` does.
func TestSetProcessOpenFilesLimit(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "read x")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	pid := cmd.Process.Pid
	before, err := tuning.OpenFilesLimit(pid)
	require.NoError(t, err)
	assert.Equal(t, limitsFile(t, strconv.Itoa(pid)), before)
	want := tuning.FileLimit{Soft: 256, Hard: 512}
	prev, err := tuning.SetOpenFilesLimit(pid, want)
	require.NoError(t, err)
	assert.Equal(t, before, prev)
	assert.Equal(t, want, limitsFile(t, strconv.Itoa(pid)))
	// Raising the child's hard limit back needs privilege.
	_, err = tuning.SetOpenFilesLimit(pid, prev)
	if capSysResource(t) {
		require.NoError(t, err)
		assert.Equal(t, before, limitsFile(t, strconv.Itoa(pid)))
	} else {
		require.ErrorIs(t, err, os.ErrPermission)
		assert.Contains(t, err.Error(), "CAP_SYS_RESOURCE")
	}
	_, err = io.WriteString(stdin, "\n")
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	_, err = tuning.OpenFilesLimit(pid)
	require.ErrorIs(t, err, os.ErrNotExist, "a process that is gone")
}

// An unprivileged process may raise its soft limit up to the hard limit
// but not the hard limit itself. Run as root, the test re-runs itself as
// nobody to see the kernel's EPERM.
func TestIntegrationRaiseOpenFilesUnprivileged(t *testing.T) {
	if os.Getenv("TUNING_HELPER") == "raise" {
		cur, err := tuning.OpenFilesLimit(0)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		_, err = tuning.RaiseOpenFilesLimit(cur.Hard + 1)
		after, _ := tuning.OpenFilesLimit(0)
		fmt.Printf("perm=%v same=%v\n%v\n", errors.Is(err, os.ErrPermission), after == cur, err)
		os.Exit(0)
	}
	testutil.RequireRoot(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "tuning-helper-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "tuning.test")
	data, err := os.ReadFile(exe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestIntegrationRaiseOpenFilesUnprivileged$")
	cmd.Env = append(os.Environ(), "TUNING_HELPER=raise")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "perm=true same=true", "%s", out)
	assert.Contains(t, string(out), "CAP_SYS_RESOURCE")
}

// Go raises its own soft limit at start-up and hands children the
// original one: a plain exec.Command child of a process started with
// soft 1024 gets 1024, a child started after RaiseOpenFilesLimit gets
// what was asked. The test re-runs itself under
// `prlimit --nofile=1024:HARD`.
func TestRaiseOpenFilesLimitBeatsGoDefault(t *testing.T) {
	testutil.SkipUnderUserEmulation(t, "re-executes the test binary, which qemu-user without binfmt_misc cannot start")
	if os.Getenv("TUNING_HELPER") == "child-limit" {
		plain, err := exec.Command("/bin/sh", "-c", "ulimit -Sn").Output()
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		cmd := exec.Command("/bin/sh", "-c", "ulimit -Sn")
		var out strings.Builder
		cmd.Stdout = &out
		if _, err := startWithOpenFiles(cmd, 4096); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		if err := cmd.Wait(); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Printf("plain=%s helper=%s\n", strings.TrimSpace(string(plain)), strings.TrimSpace(out.String()))
		os.Exit(0)
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("skipped: prlimit (util-linux) not installed")
	}
	cur, err := tuning.OpenFilesLimit(0)
	require.NoError(t, err)
	if cur.Hard < 8192 {
		t.Skipf("skipped: hard open-files limit %d is below 8192", cur.Hard)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prlimit, fmt.Sprintf("--nofile=1024:%d", cur.Hard), exe, "-test.run", "^TestRaiseOpenFilesLimitBeatsGoDefault$")
	cmd.Env = append(os.Environ(), "TUNING_HELPER=child-limit")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "plain=1024 helper=", "%s", out)
	var plain, helper uint64
	line := string(out)[strings.Index(string(out), "plain="):]
	_, err = fmt.Sscanf(line, "plain=%d helper=%d", &plain, &helper)
	require.NoError(t, err, "%s", out)
	assert.GreaterOrEqual(t, helper, uint64(4096))
}
