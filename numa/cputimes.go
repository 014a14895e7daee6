package numa

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/procstat"
)

// CPUTime is one CPU's cumulative time by state, in clock ticks (USER_HZ),
// from its cpuN line of /proc/stat. User includes guest time and Nice
// guest_nice, as the kernel counts them.
type CPUTime struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// CPUTimes is one reading of every online CPU's time (/proc/stat).
type CPUTimes struct {
	At   time.Time
	CPUs map[int]CPUTime
}

// CPUSplit is where a set of CPUs' time went over an interval between two
// readings: the time of each state summed over the CPUs. User includes
// Nice; Idle includes IOWait. Busy is all but Idle.
type CPUSplit struct {
	CPUs                                    int
	Interval                                time.Duration
	User, System, IRQ, SoftIRQ, Steal, Idle time.Duration
}

// Busy is the time the CPUs ran something: user, system, irq, softirq
// and steal.
func (s CPUSplit) Busy() time.Duration { return s.User + s.System + s.IRQ + s.SoftIRQ + s.Steal }

// Total is Busy plus Idle: about CPUs × Interval.
func (s CPUSplit) Total() time.Duration { return s.Busy() + s.Idle }

// Share is d's share of Total, 0–1 (0 when nothing was counted).
func (s CPUSplit) Share(d time.Duration) float64 {
	if s.Total() <= 0 {
		return 0
	}
	return float64(d) / float64(s.Total())
}

// CPUTimes reads every CPU's line of /proc/stat under the host root. It
// needs no privilege.
func (h *Host) CPUTimes() (CPUTimes, error) {
	path := h.root.Proc("stat")
	data, err := hostfs.ReadFile(path)
	if err != nil {
		return CPUTimes{}, fmt.Errorf("numa: %w", err)
	}
	t, err := parseProcStat(data)
	if err != nil {
		return CPUTimes{}, fmt.Errorf("numa: %s: %w", path, err)
	}
	t.At = time.Now()
	return t, nil
}

// parseProcStat reads the cpuN lines of /proc/stat (the summed "cpu" line
// and the other lines are skipped). A line has at least the four fields
// of Linux 2.4 (user nice system idle); later ones read 0 when missing.
func parseProcStat(data []byte) (CPUTimes, error) {
	t := CPUTimes{CPUs: map[int]CPUTime{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		id, err := strconv.Atoi(f[0][3:])
		if err != nil || id < 0 {
			return t, fmt.Errorf("%w: line %q: want cpuN", ErrParse, f[0])
		}
		if len(f) < 5 {
			return t, fmt.Errorf("%w: %s has %d fields, want user nice system idle at least", ErrParse, f[0], len(f)-1)
		}
		var v [10]uint64
		for i, s := range f[1:min(len(f), 11)] {
			if v[i], err = strconv.ParseUint(s, 10, 64); err != nil {
				return t, fmt.Errorf("%w: %s field %d %q: want a tick count", ErrParse, f[0], i+1, s)
			}
		}
		if _, dup := t.CPUs[id]; dup {
			return t, fmt.Errorf("%w: %s twice", ErrParse, f[0])
		}
		t.CPUs[id] = CPUTime{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}
	}
	if err := sc.Err(); err != nil {
		return t, err
	}
	if len(t.CPUs) == 0 {
		return t, fmt.Errorf("%w: no cpuN line", ErrParse)
	}
	return t, nil
}

// SplitSince is where cpus' time went from the reading before to t. A CPU
// must be in both readings (one taken offline or online in between is an
// error); a counter that went down (a CPU brought back online counts from
// zero) counts from zero.
func (t CPUTimes) SplitSince(before CPUTimes, cpus CPUSet) (CPUSplit, error) {
	s := CPUSplit{Interval: t.At.Sub(before.At)}
	if s.Interval < 0 {
		return s, fmt.Errorf("numa: CPU times read %s before the reading they are measured from", -s.Interval)
	}
	var missing []int
	for _, id := range cpus.IDs() {
		a, okA := t.CPUs[id]
		b, okB := before.CPUs[id]
		if !okA || !okB {
			missing = append(missing, id)
			continue
		}
		d := func(x, y uint64) time.Duration {
			if y > x {
				y = 0
			}
			return procstat.Ticks(x - y)
		}
		s.CPUs++
		s.User += d(a.User, b.User) + d(a.Nice, b.Nice)
		s.System += d(a.System, b.System)
		s.IRQ += d(a.IRQ, b.IRQ)
		s.SoftIRQ += d(a.SoftIRQ, b.SoftIRQ)
		s.Steal += d(a.Steal, b.Steal)
		s.Idle += d(a.Idle, b.Idle) + d(a.IOWait, b.IOWait)
	}
	if len(missing) > 0 {
		return s, fmt.Errorf("numa: CPUs %s not in both /proc/stat readings (taken offline or online between them)", CPUs(missing...))
	}
	return s, nil
}
