package hsperf

import (
	"fmt"
	"strings"
	"time"
)

// Collector is one garbage collector's pauses, as the JVM counts them
// (sun.gc.collector.N): for G1 the young, full and concurrent-cycle
// pauses are three collectors; for Parallel, young and full.
type Collector struct {
	Name        string        `json:"name"`
	Collections int64         `json:"collections"`
	Time        time.Duration `json:"time_ns"`
}

// Figures are the JVM's counters that explain where its time went, read
// from a Snapshot, or the change between two (Sub).
type Figures struct {
	// Collectors are the JVM's collectors in its order (sun.gc.collector.N).
	Collectors []Collector `json:"collectors"`
	// Compile is the JIT compilers' time (java.ci.totalTime).
	Compile time.Duration `json:"compile_ns"`
	// Safepoints is the number of safepoints (sun.rt.safepoints) and
	// SafepointTime the time the application threads were stopped at them
	// (sun.rt.safepointTime).
	Safepoints    int64         `json:"safepoints"`
	SafepointTime time.Duration `json:"safepoint_ns"`
	// Threads is the number of live Java threads (java.threads.live); in
	// a difference, the later snapshot's.
	Threads int64 `json:"threads"`
}

// Figures reads the collectors, compile time, safepoints and threads. A
// counter the JVM does not publish reads 0; it is an error only when the
// snapshot has no clock frequency (then no time can be read) or no
// collector.
func (s *Snapshot) Figures() (Figures, error) {
	var f Figures
	if hz, ok := s.Int("sun.os.hrt.frequency"); !ok || hz <= 0 {
		return f, fmt.Errorf("hsperf: no sun.os.hrt.frequency (the tick counters cannot be read)")
	}
	for i := 0; ; i++ {
		p := fmt.Sprintf("sun.gc.collector.%d.", i)
		n, ok := s.Int(p + "invocations")
		if !ok {
			break
		}
		name, _ := s.Text(p + "name")
		t, _ := s.Duration(p + "time")
		f.Collectors = append(f.Collectors, Collector{Name: name, Collections: n, Time: t})
	}
	if len(f.Collectors) == 0 {
		return f, fmt.Errorf("hsperf: no sun.gc.collector.0 counters")
	}
	f.Compile, _ = s.Duration("java.ci.totalTime")
	f.Safepoints, _ = s.Int("sun.rt.safepoints")
	f.SafepointTime, _ = s.Duration("sun.rt.safepointTime")
	f.Threads, _ = s.Int("java.threads.live")
	return f, nil
}

// GC is the collections and pause time of all collectors together (what
// jstat prints as the sum of YGC, FGC, CGC and as GCT).
func (f Figures) GC() (collections int64, pause time.Duration) {
	for _, c := range f.Collectors {
		collections += c.Collections
		pause += c.Time
	}
	return collections, pause
}

// Sub returns what happened between before and f: every count and time
// as f's minus before's, collectors matched by position and name.
// Threads is f's. It is an error when the two are not of one JVM's life
// (a collector differs, or a count went down: the JVM restarted).
func (f Figures) Sub(before Figures) (Figures, error) {
	if len(f.Collectors) != len(before.Collectors) {
		return Figures{}, fmt.Errorf("hsperf: %d collectors after, %d before: not one JVM", len(f.Collectors), len(before.Collectors))
	}
	d := Figures{Threads: f.Threads, Collectors: make([]Collector, len(f.Collectors))}
	for i, c := range f.Collectors {
		b := before.Collectors[i]
		if c.Name != b.Name {
			return Figures{}, fmt.Errorf("hsperf: collector %d is %q after, %q before: not one JVM", i, c.Name, b.Name)
		}
		d.Collectors[i] = Collector{Name: c.Name, Collections: c.Collections - b.Collections, Time: c.Time - b.Time}
	}
	d.Compile = f.Compile - before.Compile
	d.Safepoints = f.Safepoints - before.Safepoints
	d.SafepointTime = f.SafepointTime - before.SafepointTime
	var down []string
	for _, c := range d.Collectors {
		if c.Collections < 0 || c.Time < 0 {
			down = append(down, c.Name)
		}
	}
	if d.Compile < 0 || d.Safepoints < 0 || d.SafepointTime < 0 {
		down = append(down, "compile or safepoint counters")
	}
	if len(down) > 0 {
		return Figures{}, fmt.Errorf("hsperf: %s went down: the JVM restarted between the snapshots", strings.Join(down, ", "))
	}
	return d, nil
}
