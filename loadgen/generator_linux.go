//go:build linux

package loadgen

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// generatorClock samples this process's CPU time and the CPUs it may run
// on, at the start of a run; its use method gives the GeneratorUse since.
type generatorClock struct {
	at    time.Time
	cpu   time.Duration
	cpus  int
	quota float64
}

func startGeneratorClock() generatorClock {
	g := generatorClock{at: time.Now(), cpu: processCPUTime()}
	set := unix.NewCPUSet(1024)
	if err := unix.SchedGetaffinityDynamic(0, set); err == nil {
		g.cpus = set.Count()
	}
	g.quota = cgroupQuota("/")
	return g
}

func (g generatorClock) use() GeneratorUse {
	return GeneratorUse{CPU: processCPUTime() - g.cpu, Wall: time.Since(g.at), CPUs: g.cpus, Quota: g.quota}
}

// cgroupQuota returns the CPUs' worth of time this process's own cgroup
// allows (under root): cgroup v2 cpu.max "QUOTA PERIOD", or cgroup v1
// cpu.cfs_quota_us / cpu.cfs_period_us; 0 without a quota or when it
// cannot be read. (A parent cgroup's quota is not looked at.)
func cgroupQuota(root string) float64 {
	data, err := os.ReadFile(filepath.Join(root, "proc", "self", "cgroup"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			b, err := os.ReadFile(filepath.Join(root, "sys", "fs", "cgroup", parts[2], "cpu.max"))
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) == 2 {
				if q := ratio(f[0], f[1]); q > 0 {
					return q
				}
			}
		case slices.Contains(strings.Split(parts[1], ","), "cpu"):
			for _, dir := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
				d := filepath.Join(root, "sys", "fs", "cgroup", dir, parts[2])
				q, err1 := os.ReadFile(filepath.Join(d, "cpu.cfs_quota_us"))
				p, err2 := os.ReadFile(filepath.Join(d, "cpu.cfs_period_us"))
				if err1 == nil && err2 == nil {
					return ratio(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
				}
			}
		}
	}
	return 0
}

// ratio is quota/period, 0 for "max", -1 or anything unparsable.
func ratio(quota, period string) float64 {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}

// processCPUTime is this process's user plus system time (getrusage(2),
// RUSAGE_SELF).
func processCPUTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
