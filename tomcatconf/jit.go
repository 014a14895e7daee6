package tomcatconf

import (
	"fmt"
	"strconv"
	"time"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/procstat"
)

// JITOptions tune NewJITMeter. A nil *JITOptions means the defaults.
type JITOptions struct {
	// Root is the host root holding /proc. Default: "" (this host, "/").
	Root string
}

// JITMeter measures how much of a HotSpot JVM's CPU time its JIT compiler
// threads (C1 CompilerThreadN, C2 CompilerThreadN, JVMCI; the kernel
// names them "C1 CompilerThre", "C2 CompilerThre") use, between one
// reading and the next: while the share is high the JVM is still
// compiling its hot code, and a rate measured then is not the compiled
// code's. Its CompilerShare method is the hook loadgen's
// WarmUpOptions.CompilerShare takes.
type JITMeter struct {
	root  hostfs.Root
	pid   int
	start uint64 // the process's start time, in clock ticks after boot
	last  jitReading
}

// jitReading is one reading of the JVM's CPU time.
type jitReading struct {
	at        time.Time
	process   uint64         // the whole process's utime+stime, in clock ticks
	compilers map[int]uint64 // compiler threads' utime+stime by TID
}

// JITSample is the CPU use of a JVM and of its compiler threads over one
// interval between two readings.
type JITSample struct {
	// Interval is the wall-clock time between the readings.
	Interval time.Duration
	// Compiler is the CPU time the compiler threads used over it.
	Compiler time.Duration
	// Process is the CPU time the whole JVM used over it, every thread's,
	// those that ended meanwhile included.
	Process time.Duration
	// Threads counts the compiler threads at the second reading (HotSpot
	// starts and stops them as the compile queue grows and shrinks).
	Threads int
}

// Share returns Compiler over Process, from 0 to 1; 0 when the JVM used
// no CPU. The times are counted in clock ticks (10 ms): over a 2 s
// interval on one CPU, 2 % is 4 ticks.
func (s JITSample) Share() float64 {
	if s.Process <= 0 {
		return 0
	}
	return min(1, float64(s.Compiler)/float64(s.Process))
}

// NewJITMeter takes the first reading of JVM pid: /proc/PID/stat (the
// process's CPU time and start time) and /proc/PID/task/*/stat (each
// thread's name and CPU time), under opts.Root. Reading another user's
// process needs no privilege (unless /proc is mounted with hidepid). The
// error wraps os.ErrNotExist when there is no such process.
func NewJITMeter(pid int, opts *JITOptions) (*JITMeter, error) {
	var o JITOptions
	if opts != nil {
		o = *opts
	}
	root, err := hostRoot(o.Root)
	if err != nil {
		return nil, err
	}
	m := &JITMeter{root: root, pid: pid}
	st, err := procstat.Read(root.Proc(strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, fmt.Errorf("tomcatconf: JIT meter of PID %d: %w", pid, err)
	}
	m.start = st.StartTime
	if m.last, err = m.read(); err != nil {
		return nil, err
	}
	return m, nil
}

// Sample reads the JVM's CPU time again (/proc/PID/stat and
// /proc/PID/task/*/stat) and returns what it and its compiler threads
// used since the last reading (NewJITMeter's or the last
// Sample's). A compiler thread seen for the first time counts from zero;
// one that ended since the last reading is missing from Compiler for
// what it used before it ended (its time stays in Process). It returns
// an error when the process is gone (wrapping os.ErrNotExist) or its PID
// now belongs to another process.
func (m *JITMeter) Sample() (JITSample, error) {
	r, err := m.read()
	if err != nil {
		return JITSample{}, err
	}
	s := JITSample{Interval: r.at.Sub(m.last.at), Threads: len(r.compilers)}
	var compiler uint64
	for tid, ticks := range r.compilers {
		before := m.last.compilers[tid]
		if before > ticks { // a new thread on a reused TID
			before = 0
		}
		compiler += ticks - before
	}
	var process uint64
	if r.process > m.last.process {
		process = r.process - m.last.process
	}
	s.Compiler, s.Process = procstat.Ticks(compiler), procstat.Ticks(process)
	m.last = r
	return s, nil
}

// CompilerShare is Sample's Share: the share of the JVM's CPU time its
// compiler threads used since the last reading, in the form
// loadgen.WarmUpOptions.CompilerShare takes.
func (m *JITMeter) CompilerShare() (float64, error) {
	s, err := m.Sample()
	if err != nil {
		return 0, err
	}
	return s.Share(), nil
}

// read takes one reading: the compiler threads first, then the process,
// so that the process's total is never behind its threads'.
func (m *JITMeter) read() (jitReading, error) {
	tasks, err := readTasks(m.root, m.pid, false)
	if err != nil {
		return jitReading{}, err
	}
	r := jitReading{at: time.Now(), compilers: map[int]uint64{}}
	for tid, t := range tasks {
		if kind, _ := classifyThread(t.comm, nil); kind == kindCompiler {
			r.compilers[tid] = uint64(t.ticks)
		}
	}
	path := m.root.Proc(strconv.Itoa(m.pid), "stat")
	st, err := procstat.Read(path)
	if err != nil {
		return jitReading{}, fmt.Errorf("tomcatconf: JIT meter of PID %d: %w", m.pid, err)
	}
	if st.StartTime != m.start {
		return jitReading{}, fmt.Errorf("tomcatconf: JIT meter: %s: PID %d is another process now (started at tick %d, want %d)",
			path, m.pid, st.StartTime, m.start)
	}
	cpu, ok := st.CPU()
	if !ok {
		return jitReading{}, fmt.Errorf("tomcatconf: JIT meter: %s: utime %d stime %d overflow", path, st.UTime, st.STime)
	}
	r.process = cpu
	return r, nil
}
