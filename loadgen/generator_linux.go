//go:build linux

package loadgen

import (
	"time"

	"golang.org/x/sys/unix"
)

// generatorClock samples this process's CPU time and the CPUs it may run
// on, at the start of a run; its use method gives the GeneratorUse since.
type generatorClock struct {
	at   time.Time
	cpu  time.Duration
	cpus int
}

func startGeneratorClock() generatorClock {
	g := generatorClock{at: time.Now(), cpu: processCPUTime()}
	set := unix.NewCPUSet(1024)
	if err := unix.SchedGetaffinityDynamic(0, set); err == nil {
		g.cpus = set.Count()
	}
	return g
}

func (g generatorClock) use() GeneratorUse {
	return GeneratorUse{CPU: processCPUTime() - g.cpu, Wall: time.Since(g.at), CPUs: g.cpus}
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
