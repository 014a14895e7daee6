package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/procstat"
)

// CPUTimes is a reading of cumulative CPU time: of the whole host from the
// first line of /proc/stat, or of one process from /proc/PID/stat.
//
// Busy and Total hold up to 292 years of CPU time, the range of a
// time.Duration, and stay there if the counters go past it: a 192-CPU host
// sums that much after about 1.5 years up. Use still measures an interval
// exactly then, from the raw counters a reading keeps.
type CPUTimes struct {
	// Busy is time spent running: user, nice, system, irq, softirq and
	// steal for the host; utime+stime of all threads for a process.
	Busy time.Duration
	// Total is Busy plus idle and iowait, summed over all CPUs (host
	// only; zero for a process).
	Total time.Duration
	// CPUs is the number of per-CPU lines in /proc/stat (host only).
	CPUs int
	// At is when the reading was taken.
	At time.Time

	// busyTicks and totalTicks are the counters Busy and Total come
	// from, in clock ticks, when ticked is set (readings taken by
	// HostCPU and ProcessCPU).
	busyTicks, totalTicks uint64
	ticked                bool
}

// CPUUse is CPU utilisation over an interval between two readings.
type CPUUse struct {
	// Percent is the share of all online CPUs' time spent busy, 0–100
	// (host: as top's "%Cpu(s)" summed; process: busy time over the
	// interval times the host's CPU count).
	Percent float64
	// Cores is busy CPU time per wall-clock time: 1.5 means one and a half
	// CPUs busy on average (top's per-process %CPU / 100).
	Cores float64
}

// HostCPU reads the host's cumulative CPU times from /proc/stat under
// root, the directory standing for the host's "/" ("" or "/": this host; a
// container that mounts the host at /host passes "/host"). It needs no
// privilege.
func HostCPU(root string) (CPUTimes, error) {
	r, err := openRoot(root)
	if err != nil {
		return CPUTimes{}, err
	}
	return hostCPU(r)
}

// openRoot checks root, which must be an existing directory ("" is "/").
func openRoot(root string) (hostfs.Root, error) {
	r, err := hostfs.New(root)
	if err != nil {
		return hostfs.Root{}, fmt.Errorf("loadgen: %w", err)
	}
	return r, nil
}

func hostCPU(root hostfs.Root) (CPUTimes, error) {
	p := root.Proc("stat")
	b, err := hostfs.ReadFile(p)
	if err != nil {
		return CPUTimes{}, err
	}
	t, err := parseProcStat(b)
	if err != nil {
		return CPUTimes{}, fmt.Errorf("loadgen: %s: %w", p, err)
	}
	t.At = time.Now()
	return t, nil
}

func parseProcStat(b []byte) (CPUTimes, error) {
	var t CPUTimes
	seen := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			if _, err := strconv.Atoi(f[0][3:]); err == nil {
				t.CPUs++
			}
			continue
		}
		if len(f) < 5 {
			return CPUTimes{}, fmt.Errorf("cpu line %q: expected at least 4 counters (user nice system idle)", line)
		}
		var v [10]uint64
		for i := 1; i < len(f) && i <= 10; i++ {
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("cpu line: counter %d %q is not a number", i, f[i])
			}
			v[i-1] = n
		}
		// user nice system idle iowait irq softirq steal guest guest_nice;
		// guest time is already included in user.
		busy, ok1 := sumTicks(v[0], v[1], v[2], v[5], v[6], v[7])
		total, ok2 := sumTicks(busy, v[3], v[4])
		if !ok1 || !ok2 {
			return CPUTimes{}, fmt.Errorf("cpu line %q: counters sum past 2^64 clock ticks", line)
		}
		t.busyTicks, t.totalTicks, t.ticked = busy, total, true
		t.Busy = procstat.Ticks(busy)
		t.Total = procstat.Ticks(total)
		seen = true
	}
	if !seen {
		return CPUTimes{}, errors.New(`no "cpu" summary line`)
	}
	return t, nil
}

// sumTicks adds counters, reporting false if the sum passes 2^64.
func sumTicks(n ...uint64) (uint64, bool) {
	var sum, carry uint64
	for _, x := range n {
		var c uint64
		sum, c = bits.Add64(sum, x, 0)
		carry |= c
	}
	return sum, carry == 0
}

// delta is the time between counters a and b (b taken later), exact
// whatever their size; false if b is below a.
func delta(a, b uint64) (time.Duration, bool) {
	if b < a {
		return 0, false
	}
	return procstat.Ticks(b - a), true
}

// ProcessCPU reads the cumulative user+system CPU time of process pid (all
// its threads) from /proc/PID/stat under root ("" or "/": this host). It
// needs no privilege unless /proc is mounted with hidepid. The error
// matches os.ErrNotExist when there is no such process.
func ProcessCPU(root string, pid int) (CPUTimes, error) {
	r, err := openRoot(root)
	if err != nil {
		return CPUTimes{}, err
	}
	return processCPU(r, pid)
}

func processCPU(root hostfs.Root, pid int) (CPUTimes, error) {
	st, err := procstat.Read(root.Proc(strconv.Itoa(pid), "stat"))
	if err != nil {
		return CPUTimes{}, fmt.Errorf("loadgen: %w", err)
	}
	busy, ok := st.CPU()
	if !ok {
		return CPUTimes{}, fmt.Errorf("loadgen: process %d: utime %d + stime %d pass 2^64 clock ticks", pid, st.UTime, st.STime)
	}
	return CPUTimes{Busy: procstat.Ticks(busy), At: time.Now(), busyTicks: busy, ticked: true}, nil
}

// useOf returns the utilisation between an earlier reading a and a later
// reading b. For a process, cpus is the host's CPU count (pass the host
// reading's CPUs); for the host it is ignored.
//
// A host's share is busy time over total time, as top computes it, when
// the total is what the interval holds: wall time × online CPUs, to within
// 10%. When it is not (CPU hotplug moves an offline CPU's idle time to
// another counter, so the summed idle time jumps), or when the number of
// online CPUs differs between the readings, the share is busy time over
// wall time × the larger CPU count. Percent is at most 100 and Cores at
// most that count; readings out of order, or busy counters that went
// backwards, give the zero CPUUse.
func useOf(a, b CPUTimes, cpus int) CPUUse {
	wall := b.At.Sub(a.At)
	busy, total := b.Busy-a.Busy, b.Total-a.Total
	if a.ticked && b.ticked {
		var ok bool
		if busy, ok = delta(a.busyTicks, b.busyTicks); !ok {
			return CPUUse{}
		}
		total, _ = delta(a.totalTicks, b.totalTicks)
	}
	if wall <= 0 || busy < 0 {
		return CPUUse{}
	}
	u := CPUUse{Cores: busy.Seconds() / wall.Seconds()}
	n := max(a.CPUs, b.CPUs)
	if a.CPUs > 0 && a.CPUs == b.CPUs && plausibleTotal(total, wall, n) {
		// The ratio of the integer durations, so busy == total is exactly
		// 100%.
		share := min(float64(busy)/float64(total), 1)
		u.Percent = 100 * share
		u.Cores = float64(n) * share
		return u
	}
	if n == 0 {
		n = cpus
	}
	if n > 0 {
		u.Cores = min(u.Cores, float64(n))
		u.Percent = 100 * u.Cores / float64(n)
	}
	return u
}

// plausibleTotal reports whether total, the host's busy+idle time over an
// interval, is wall × cpus to within 10% and two clock ticks per CPU
// (the counters advance in ticks).
func plausibleTotal(total, wall time.Duration, cpus int) bool {
	want := float64(wall) * float64(cpus)
	slack := 0.1*want + float64(2*cpus)*float64(time.Second/procstat.ClockTicks)
	return total > 0 && float64(total) >= want-slack && float64(total) <= want+slack
}

// FindProcess returns the PIDs under root ("" or "/": this host) whose
// command name (/proc/PID/comm) is name or whose command line
// (/proc/PID/cmdline) contains it, e.g. "java" for Tomcat's JVM, lowest
// first; this process is left out.
func FindProcess(root string, name string) ([]int, error) {
	r, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	dirs, err := filepath.Glob(r.Proc("[0-9]*"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		comm, _ := hostfs.ReadString(filepath.Join(d, "comm"))
		cmd, _ := hostfs.ReadAttr(filepath.Join(d, "cmdline"))
		if comm == name || strings.Contains(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})), name) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
