// Package procstat parses the kernel's per-process and per-thread status
// line, /proc/PID/stat and /proc/PID/task/TID/stat (proc(5)), and turns its
// clock ticks into durations, for the packages that measure a process's
// CPU time or tell a process from a later one with the same PID.
package procstat

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"time"
)

// ClockTicks is USER_HZ, the unit of the time fields: 100 on every Linux
// architecture the kernel exports to user space.
const ClockTicks = 100

// Stat is what the packages need from one stat line.
type Stat struct {
	PID   int
	Comm  string // the name between the parentheses (field 2)
	State byte   // R, S, D, Z, T, …
	PPID  int
	// UTime and STime are user and system CPU time in clock ticks
	// (fields 14 and 15).
	UTime, STime uint64
	// StartTime is when the process started, in clock ticks after boot
	// (field 22); 0 when the line is too short to hold it.
	StartTime uint64
}

// Parse reads a stat line. The command name may hold spaces and ')', so
// the fields after it are counted from the last ')'. It needs the fields up
// to stime (15).
func Parse(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return Stat{}, fmt.Errorf("stat %.60q: want \"pid (comm) state ...\"", b)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid < 0 {
		return Stat{}, fmt.Errorf("stat %.60q: pid %q is not a number", b, bytes.TrimSpace(b[:open]))
	}
	f := bytes.Fields(b[closing+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 13 {
		return Stat{}, fmt.Errorf("stat %.60q: %d fields after the name, want at least 13", b, len(f))
	}
	if len(f[0]) != 1 || !isLetter(f[0][0]) {
		return Stat{}, fmt.Errorf("stat %.60q: state %q, want one letter", b, f[0])
	}
	s := Stat{PID: pid, Comm: string(b[open+1 : closing]), State: f[0][0]}
	if s.PPID, err = strconv.Atoi(string(f[1])); err != nil {
		return Stat{}, fmt.Errorf("stat %.60q: ppid %q is not a number", b, f[1])
	}
	u, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return Stat{}, fmt.Errorf("stat %.60q: utime %q stime %q, want non-negative integers", b, f[11], f[12])
	}
	s.UTime, s.STime = u, st
	if len(f) > 19 {
		if s.StartTime, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
			return Stat{}, fmt.Errorf("stat %.60q: starttime %q is not a number", b, f[19])
		}
	}
	return s, nil
}

// isLetter reports whether c is an ASCII letter, as every state the
// kernel prints (R, S, D, Z, T, t, X, I, …) is.
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// Read reads and parses the stat file at path. Errors name the path.
func Read(path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	s, err := Parse(b)
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// CPU returns utime+stime in clock ticks, and false when the sum passes
// 2^64.
func (s Stat) CPU() (uint64, bool) {
	sum, carry := bits.Add64(s.UTime, s.STime, 0)
	return sum, carry == 0
}

// tickNS is one clock tick in nanoseconds.
const tickNS = uint64(time.Second / ClockTicks)

// Ticks converts n clock ticks to a duration, held at the largest
// duration (292 years) past it.
func Ticks(n uint64) time.Duration {
	if n > math.MaxInt64/tickNS {
		return math.MaxInt64
	}
	return time.Duration(n * tickNS)
}
