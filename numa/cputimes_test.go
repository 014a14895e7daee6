package numa_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/numa"
)

// TestCPUTimesCorpus: the /proc/stat of two captured hosts (128 Arm CPUs
// over 2 sockets; 2 nodes of 8 x86 CPUs) has every CPU the tree's sysfs
// has, and a split of a reading against itself counts nothing.
func TestCPUTimesCorpus(t *testing.T) {
	for _, tt := range []struct {
		archive string
		cpus    int
	}{
		{"128arm-2pa2n8cluster4co.tar.bz2", 128},
		{"32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2", 16},
	} {
		t.Run(tt.archive, func(t *testing.T) {
			h, err := numa.New(corpusTree(t, tt.archive))
			require.NoError(t, err)
			ct, err := h.CPUTimes()
			require.NoError(t, err)
			assert.Len(t, ct.CPUs, tt.cpus)
			topo, err := h.Topology()
			require.NoError(t, err)
			all := topo.Online
			assert.Equal(t, all.Len(), len(ct.CPUs), "a line per online CPU")
			s, err := ct.SplitSince(ct, all)
			require.NoError(t, err)
			assert.Equal(t, all.Len(), s.CPUs)
			assert.Zero(t, s.Total())
		})
	}
}

// TestCPUTimesSplit: a fixture's two readings give each state's ticks
// summed over the CPUs asked for; guest time is in user already.
func TestCPUTimesSplit(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc"), 0o755))
	write := func(s string) numa.CPUTimes {
		require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "stat"), []byte(s), 0o644))
		h, err := numa.New(root)
		require.NoError(t, err)
		ct, err := h.CPUTimes()
		require.NoError(t, err)
		return ct
	}
	before := write("cpu  1 1 1 1 1 1 1 1 1 1\ncpu0 100 10 50 1000 5 1 2 0 30 0\ncpu1 100 0 50 1000 0 0 0 0 0 0\ncpu2 7 0 7 7 0 0 0 0 0 0\nintr 1 2 3\nctxt 99\n")
	after := write("cpu  9 9 9 9 9 9 9 9 9 9\ncpu0 150 10 80 1010 5 3 9 1 60 0\ncpu1 200 0 60 1040 0 0 0 0 0 0\ncpu2 8 0 8 8 0 0 0 0 0 0\nintr 9 9 9\n")
	after.At = before.At.Add(time.Second)
	s, err := after.SplitSince(before, numa.CPUs(0, 1))
	require.NoError(t, err)
	tick := time.Second / 100
	assert.Equal(t, numa.CPUSplit{CPUs: 2, Interval: time.Second, User: 150 * tick, System: 40 * tick, IRQ: 2 * tick, SoftIRQ: 7 * tick, Steal: tick, Idle: 50 * tick}, s)
	assert.Equal(t, 200*tick, s.Busy())
	assert.InDelta(t, 42.0/250, s.Share(s.System+s.IRQ), 1e-12)

	_, err = after.SplitSince(before, numa.CPUs(0, 3))
	assert.ErrorContains(t, err, "CPUs 3 not in both /proc/stat readings")
	_, err = before.SplitSince(after, numa.CPUs(0))
	assert.ErrorContains(t, err, "before the reading they are measured from")
}

func TestCPUTimesBad(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc"), 0o755))
	h, err := numa.New(root)
	require.NoError(t, err)
	for in, want := range map[string]string{
		"cpu 1 2 3 4\nintr 5\n":             "no cpuN line",
		"cpu0 1 2 3\n":                      "cpu0 has 3 fields, want user nice system idle",
		"cpu0 1 2 3 x 5\n":                  `cpu0 field 4 "x": want a tick count`,
		"cpu0 1 2 3 4\ncpu0 1 2 3 4\n":      "cpu0 twice",
		"cpuX 1 2 3 4\n":                    `line "cpuX": want cpuN`,
		"cpu0 1 2 3 4 5 6 7 8 9 10 11 12\n": "",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "stat"), []byte(in), 0o644))
		_, err := h.CPUTimes()
		if want == "" {
			assert.NoError(t, err, "%q", in)
			continue
		}
		require.Error(t, err, "%q", in)
		assert.ErrorIs(t, err, numa.ErrParse)
		assert.Contains(t, err.Error(), filepath.Join(root, "proc", "stat"))
		assert.Contains(t, err.Error(), want)
	}
}

// TestCPUTimesThisHost: a thread spinning on CPU 0 for 300 ms makes CPU 0
// busy in this host's /proc/stat for about that long.
func TestCPUTimesThisHost(t *testing.T) {
	h := numa.NewDefault()
	before, err := h.CPUTimes()
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Locked to the end: the thread, pinned to CPU 0, ends with the
		// goroutine and goes back to no pool.
		runtime.LockOSThread()
		var one unix.CPUSet
		one.Set(0)
		if unix.SchedSetaffinity(0, &one) != nil {
			return
		}
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		}
	}()
	<-done
	after, err := h.CPUTimes()
	require.NoError(t, err)
	s, err := after.SplitSince(before, numa.CPUs(0))
	require.NoError(t, err)
	assert.Equal(t, 1, s.CPUs)
	assert.GreaterOrEqual(t, s.Busy(), 200*time.Millisecond, "%+v", s)
	assert.InDelta(t, s.Interval.Seconds(), s.Total().Seconds(), 0.05, "one CPU's states sum to the interval")
}

func FuzzParseProcStat(f *testing.F) {
	if self, err := os.ReadFile("/proc/stat"); err == nil {
		f.Add(self)
	}
	f.Add([]byte("cpu0 1 2 3 4 5 6 7 8 9 10\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = numa.ParseProcStat(data)
	})
}
