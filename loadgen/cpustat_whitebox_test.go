package loadgen

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/procstat"
	"github.com/nettune/nettune/internal/testutil"
)

func TestParseProcStat(t *testing.T) {
	// This machine's /proc/stat, captured.
	in := "cpu  36168 0 18524 98768 786 0 350 0 0 0\ncpu0 17492 0 8553 51040 93 0 118 0 0 0\ncpu1 18675 0 9971 47728 693 0 232 0 0 0\nintr 1 2 3\nctxt 5\n"
	got, err := parseProcStat([]byte(in))
	require.NoError(t, err)
	assert.Equal(t, 2, got.CPUs)
	assert.Equal(t, procstat.Ticks(36168+18524+350), got.Busy)
	assert.Equal(t, procstat.Ticks(36168+18524+350+98768+786), got.Total)

	_, err = parseProcStat([]byte("cpu0 1 2 3 4\n"))
	require.ErrorContains(t, err, `no "cpu" summary line`)
	_, err = parseProcStat([]byte("cpu 1 x 3 4\n"))
	require.ErrorContains(t, err, `counter 2 "x" is not a number`)
}

// TestProcessCPUFixture reads /proc/PID/stat lines from a fixture root.
func TestProcessCPUFixture(t *testing.T) {
	root, err := hostfs.New(t.TempDir())
	require.NoError(t, err)
	read := func(line string) (CPUTimes, error) {
		t.Helper()
		require.NoError(t, os.MkdirAll(root.Proc("9"), 0o755))
		require.NoError(t, os.WriteFile(root.Proc("9", "stat"), []byte(line), 0o644))
		return ProcessCPU(root.Dir(), 9)
	}
	got, err := read("4677 (http-nio-8080-P) R 1 2 3 0 -1 4194304 99 0 0 0 7871 420 0 0 20 0 231 0 77546 3133440 412")
	require.NoError(t, err)
	assert.Equal(t, uint64(7871+420), got.busyTicks)
	assert.Equal(t, procstat.Ticks(7871+420), got.Busy)
	// A command name with spaces and a parenthesis.
	got, err = read("9 (a) b (c)) S 1 2 3 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 1 1 1")
	require.NoError(t, err)
	assert.Equal(t, uint64(11), got.busyTicks)
	_, err = read("9 (x) S 1 2")
	require.ErrorContains(t, err, "want at least 13")
	_, err = read("9 (x) S 1 2 3 0 -1 0 0 0 0 0 18446744073709551615 1 0")
	require.ErrorContains(t, err, "pass 2^64 clock ticks")
	_, err = ProcessCPU(filepath.Join(root.Dir(), "missing"), 9)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestParseProcStatLongUptime reads the counters of a big host that has
// been up a while. The Arm guide's 192-CPU host sums 9.2e9 clock ticks, where
// ticks × 1e9 leaves int64, after 5.6 days up: Busy and Total came out
// negative (a fuzzer found "cpu 0 0 0 9300000000 0").
func TestParseProcStatLongUptime(t *testing.T) {
	const day = 86400 * procstat.ClockTicks
	// 192 CPUs, 30 days up, 25% busy.
	idle, user := uint64(192*30*day*3/4), uint64(192*30*day/4)
	line := func(user, idle uint64) []byte {
		return []byte(fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\n", user, idle))
	}
	a, err := parseProcStat(line(user, idle))
	require.NoError(t, err)
	assert.Equal(t, 30*24*time.Hour*192/4, a.Busy)
	assert.Equal(t, 30*24*time.Hour*192, a.Total)

	_, err = parseProcStat([]byte("cpu 0 0 0 9300000000 0\n"))
	require.NoError(t, err)

	// One second later with the CPUs half busy: exactly 50%.
	b, err := parseProcStat(line(user+192*procstat.ClockTicks/2, idle+192*procstat.ClockTicks/2))
	require.NoError(t, err)
	a.CPUs, b.CPUs = 192, 192
	a.At = time.Unix(1000, 0)
	b.At = a.At.Add(time.Second)
	assert.InDelta(t, 50, useOf(a, b, 0).Percent, 1e-9)

	// Past the 292 years a time.Duration holds (1.6 years on 192 CPUs):
	// Busy and Total stay at the largest duration and an interval is
	// still measured exactly from the raw counters.
	big := uint64(math.MaxInt64/uint64(time.Second/procstat.ClockTicks)) + 1000
	a, err = parseProcStat(line(big, big))
	require.NoError(t, err)
	assert.Equal(t, time.Duration(math.MaxInt64), a.Busy)
	assert.Equal(t, time.Duration(math.MaxInt64), a.Total)
	b, err = parseProcStat(line(big+192*procstat.ClockTicks/4, big+192*procstat.ClockTicks*3/4))
	require.NoError(t, err)
	a.CPUs, b.CPUs = 192, 192
	a.At = time.Unix(1000, 0)
	b.At = a.At.Add(time.Second)
	use := useOf(a, b, 0)
	assert.InDelta(t, 25, use.Percent, 1e-9)
	assert.InDelta(t, 48, use.Cores, 1e-9)

	// Counters whose sum does not fit 64 bits are refused.
	_, err = parseProcStat([]byte("cpu 18446744073709551615 0 0 1 0\n"))
	require.ErrorContains(t, err, "counters sum past 2^64 clock ticks")
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("cpu  36168 0 18524 98768 786 0 350 0 0 0\ncpu0 1 2 3 4\n"))
	f.Add([]byte("4677 (java) R 1 2 3 0 -1 4194304 99 0 0 0 7871 420 0 0 20 0 231 0 77546"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := parseProcStat(b); err == nil {
			if c.Busy < 0 || c.Busy > c.Total || c.busyTicks > c.totalTicks {
				t.Fatalf("busy %v (%d ticks), total %v (%d ticks)", c.Busy, c.busyTicks, c.Total, c.totalTicks)
			}
		}
	})
}

// TestCPUOfABusyChild measures a real child process spinning on the CPU.
func TestCPUOfABusyChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("skipped: no /proc")
	}
	root := "/"
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	h0, err := HostCPU(root)
	require.NoError(t, err)
	p0, err := ProcessCPU(root, cmd.Process.Pid)
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	var use CPUUse
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		p1, err := ProcessCPU(root, cmd.Process.Pid)
		require.NoError(t, err)
		if p1.Busy-p0.Busy >= 500*time.Millisecond {
			use = useOf(p0, p1, h0.CPUs)
			break
		}
	}
	h1, err := HostCPU(root)
	require.NoError(t, err)
	// A spinning shell uses at most one core; how much of one depends on
	// what else the machine runs, so only the bounds are checked here and
	// the exact accounting is checked against getrusage below.
	assert.Greater(t, use.Cores, 0.0)
	assert.LessOrEqual(t, use.Cores, 1.1)
	hu := useOf(h0, h1, 0)
	assert.Greater(t, hu.Percent, 0.0, "the host saw the busy child")
	assert.LessOrEqual(t, hu.Percent, 100.0)

	pids, err := FindProcess(root, "while :; do :; done")
	require.NoError(t, err)
	assert.Contains(t, pids, cmd.Process.Pid)

	_, err = ProcessCPU(root, 1<<30)
	require.ErrorIs(t, err, os.ErrNotExist)
	fixture, err := hostfs.New(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(fixture.Proc("stat")), 0o755))
	require.NoError(t, os.WriteFile(fixture.Proc("stat"), []byte("intr 1\n"), 0o644))
	_, err = HostCPU(fixture.Dir())
	require.ErrorContains(t, err, fixture.Proc("stat"))
}

// TestProcessCPUMatchesGetrusage spins in this process and compares the
// CPU time /proc/self/stat reports with getrusage(2) for the same span:
// two kernel accountings of one process, equal to within a few ticks
// whatever the machine's load.
func TestProcessCPUMatchesGetrusage(t *testing.T) {
	testutil.SkipUnderUserEmulation(t, "qemu-user makes up /proc/self/stat, with the state 0 that procstat refuses")
	root := "/"
	rusage := func() time.Duration {
		var ru syscall.Rusage
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	p0, err := ProcessCPU(root, os.Getpid())
	require.NoError(t, err)
	r0 := rusage()
	x := 0
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	p1, err := ProcessCPU(root, os.Getpid())
	require.NoError(t, err)
	r1 := rusage()
	assert.InDelta(t, float64(r1-r0), float64(p1.Busy-p0.Busy), float64(60*time.Millisecond), "spun %d times", x)
}

// TestUseAcrossHotplug replays /proc/stat summary lines captured on this
// machine around offlining and onlining cpu1: the summed idle time jumped
// by +534 ticks when cpu1 went and by −527 when it came back, so busy over
// total would be meaningless (0% or negative total) across the change.
func TestUseAcrossHotplug(t *testing.T) {
	read := func(line string, cpus int, at time.Duration) CPUTimes {
		t.Helper()
		c, err := parseProcStat([]byte(line))
		require.NoError(t, err)
		c.CPUs, c.At = cpus, time.Unix(0, 0).Add(at)
		return c
	}
	before := read("cpu  32829 0 6291 196618 315 0 267 27 0 0\n", 2, 0)
	offline := read("cpu  32869 0 6291 197152 316 0 267 27 0 0\n", 1, time.Second)
	after := read("cpu  32909 0 6291 196625 315 0 267 27 0 0\n", 2, 2*time.Second)

	// 40 busy ticks in a second of wall time on the larger CPU count (2).
	for _, c := range []struct {
		name string
		a, b CPUTimes
	}{{"cpu1 went offline", before, offline}, {"cpu1 came back", offline, after}} {
		u := useOf(c.a, c.b, 0)
		assert.InDelta(t, 0.4, u.Cores, 1e-9, c.name)
		assert.InDelta(t, 20, u.Percent, 1e-9, c.name)
	}
	// The same CPU count at both ends but a total that went backwards.
	back := offline
	back.CPUs = 2
	u := useOf(back, after, 0)
	assert.InDelta(t, 20, u.Percent, 1e-9, "total fell by 527 ticks: wall time is the measure")

	// A plausible interval keeps top's busy/total share.
	steady := read("cpu  32869 0 6291 196778 315 0 267 27 0 0\n", 2, time.Second)
	u = useOf(before, steady, 0)
	assert.InDelta(t, 100*40.0/200, u.Percent, 1e-9)
	assert.InDelta(t, 0.4, u.Cores, 1e-9)
}

// TestIntegrationHostCPUAcrossHotplug takes real /proc/stat readings while
// cpu1 goes offline and comes back, spinning between them: the host's
// utilisation stays above zero and at most 100%, where busy over total
// gave 0% (the failure that showed in a sweep while another package's test
// hotplugged cpu1).
func TestIntegrationHostCPUAcrossHotplug(t *testing.T) {
	testutil.RequireHostTests(t)
	testutil.LockHotplug(t)
	const cpu1 = "/sys/devices/system/cpu/cpu1/online"
	b, err := os.ReadFile(cpu1)
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skipf("skipped: cpu1 is not an online hot-pluggable CPU here (%q, %v)", b, err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(cpu1, []byte("1"), 0); err != nil {
			t.Errorf("CLEANUP FAILED: bring cpu1 back online: %v", err)
		}
	})
	spin := func() {
		for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
		}
	}
	root := "/"
	h0, err := HostCPU(root)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cpu1, []byte("0"), 0))
	spin()
	h1, err := HostCPU(root)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cpu1, []byte("1"), 0))
	spin()
	h2, err := HostCPU(root)
	require.NoError(t, err)
	t.Logf("totals %v → %v → %v, CPUs %d → %d → %d", h0.Total, h1.Total, h2.Total, h0.CPUs, h1.CPUs, h2.CPUs)
	for _, c := range []struct {
		name string
		a, b CPUTimes
	}{{"offline", h0, h1}, {"online again", h1, h2}, {"whole", h0, h2}} {
		u := useOf(c.a, c.b, 0)
		assert.Greater(t, u.Percent, 0.0, c.name)
		assert.LessOrEqual(t, u.Percent, 100.0, c.name)
		assert.LessOrEqual(t, u.Cores, 2.0, c.name)
	}
}
