package loadgen

import (
	"fmt"

	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/nettune/nettune/loadgen/internal/format"
)

// Generator-bound thresholds (LoadBound).
const (
	// boundCPUPercent is the generator's CPU use, in percent of the CPUs
	// it may run on, at or above which it, not the server, set the pace.
	boundCPUPercent = 90.0
	// boundLag is the send lag p99 above which an open-model run whose
	// connections were mostly idle (boundBusy) was paced by the generator.
	boundLag = 10 * time.Millisecond
	// boundBusy is the share of the run's connections busy with a request
	// on average (Little's law: achieved rate × mean service time over the
	// connections) under which late sends are the generator's, not a
	// server that kept every connection waiting.
	boundBusy = 0.5
	// boundLateSends is the fewest sends later than boundLag (dues never
	// sent count too) that make a lag verdict: one scheduler hiccup of a
	// busy host delays a send or two of a light run past boundLag, and at
	// 150 samples those are its p99; a generator that cannot keep pace
	// is late by thousands.
	boundLateSends = 10
	// boundOwnLag is the generator's own send lag p99 (Histograms.OwnLag)
	// above which a run says it sent late (LateSends): DESIGN.md's send
	// precision is ~100 µs, and 1 ms late is where a generator's delay
	// starts to show in a server's corrected latency.
	boundOwnLag = time.Millisecond
)

// LateSends says whether the generator itself sent res's requests late,
// and by how much: "" when not. It is the generator's own send lag
// (Histograms.OwnLag: after both the due time and the connection's
// readiness, so a connection still waiting for the server does not
// count) above boundOwnLag at p99, with at least boundLateSends sends
// that late. The text names the figures, e.g. "generator late: own send
// lag p99 1.4 ms (above 1 ms), 212 sends", and the run's figures are
// still what the server answered: its corrected latency includes the
// delay.
func LateSends(res *Result) string {
	if res == nil || res.Pacer == "" {
		return ""
	}
	h := res.Histograms.OwnLag
	if h == nil || h.TotalCount() == 0 {
		return ""
	}
	p99 := format.Micros(float64(h.ValueAtQuantile(99)))
	late := countAbove(h, boundOwnLag.Microseconds())
	if p99 <= boundOwnLag || late < boundLateSends {
		return ""
	}
	return fmt.Sprintf("generator late: own send lag p99 %s (above %s), %d sends", format.Duration(p99), format.Duration(boundOwnLag), late)
}

// GeneratorUse is the CPU the load generator's process used over a run,
// against the CPUs it may run on: a generator near 100 % of its CPUs set
// the pace of the run, not the server. It is read from getrusage(2)
// (RUSAGE_SELF: the whole process, so a program that does other work
// during the run counts it too) and sched_getaffinity(2).
type GeneratorUse struct {
	// CPU is the user and system time the process used during the run.
	CPU time.Duration `json:"cpu_ns"`
	// Wall is the run's wall-clock time, connection set-up and drain
	// included (what CPU is measured over).
	Wall time.Duration `json:"wall_ns"`
	// CPUs is the number of CPUs the process may run on (its affinity).
	CPUs int `json:"cpus"`
	// Quota, when > 0, is the CPUs' worth of time its cgroup's CPU quota
	// allows (cpu.max, or cpu.cfs_quota_us over cpu.cfs_period_us, of its
	// own cgroup): a container's generator may have 8 CPUs and a quota
	// of 0.5.
	Quota float64 `json:"cpu_quota,omitempty"`
	// LoopWait is the time the event loops' threads spent runnable but
	// waiting for a CPU during the run, summed over the loops (the run
	// queue wait of /proc/thread-self/schedstat). A loop that waits sends
	// and reads late; what it reads late counts in Histograms.Lag as the
	// connection's wait, not in OwnLag, so a Lag tail with a small OwnLag
	// and a large LoopWait is the generator's, taken by another thread on
	// its CPU (the Go runtime's GC workers, a neighbour). 0 where the
	// kernel keeps no schedstats.
	LoopWait time.Duration `json:"loop_wait_ns,omitempty"`
	// LoopPreempted counts the event loops' involuntary context switches
	// during the run (nonvoluntary_ctxt_switches): how often the kernel
	// gave their CPU to another thread.
	LoopPreempted uint64 `json:"loop_preempted,omitempty"`
}

// Cores is what the generator may use: CPUs, or Quota when lower.
func (g GeneratorUse) Cores() float64 {
	c := float64(g.CPUs)
	if g.Quota > 0 && (g.Quota < c || c == 0) {
		c = g.Quota
	}
	return c
}

// Percent is CPU over Wall, in percent of Cores: 100 means the generator
// used all it may throughout. 0 when nothing was measured.
func (g GeneratorUse) Percent() float64 {
	if g.Wall <= 0 || g.Cores() <= 0 {
		return 0
	}
	return 100 * g.CPU.Seconds() / (g.Wall.Seconds() * g.Cores())
}

// LoadBound says whether the generator, not the server, limited res, and
// why: "" when nothing says so. A run is generator-bound when its process
// used boundCPUPercent or more of its CPUs (GeneratorUse), or when an
// open-model run sent its requests more than boundLag late at p99 (the
// Lag histogram) while its connections were mostly idle (fewer than
// boundBusy of them waiting for a response on average) and the server's
// slowest responses (Service p99) were faster than that lag: a server that
// holds every connection busy, on average or in its stalls, also makes
// sends late, but then the connections, not the generator, are waiting.
// A lag verdict also needs boundLateSends late sends. The text names the
// figures, e.g. "load-bound: client CPU 97 % of 2 cores, lag p99 12 ms".
func LoadBound(res *Result) string {
	if res == nil {
		return ""
	}
	cpu := res.Generator.Percent()
	var lag time.Duration
	late := res.Missed
	if h := res.Histograms.Lag; h != nil && h.TotalCount() > 0 {
		lag = format.Micros(float64(h.ValueAtQuantile(99)))
		late += countAbove(h, boundLag.Microseconds())
	}
	busy := 1.0
	if h := res.Histograms.Service; h != nil && h.TotalCount() > 0 && res.Connections > 0 {
		busy = res.AchievedRate * format.Micros(h.Mean()).Seconds() / float64(res.Connections)
	}
	byCPU := cpu >= boundCPUPercent
	// A server that stalls now and then (GC, JIT) holds every connection
	// for its slowest responses while its mean stays low: lag no longer
	// than the slowest responses (the Service p99) is the server's.
	var slow time.Duration
	if h := res.Histograms.Service; h != nil && h.TotalCount() > 0 {
		slow = format.Micros(float64(h.ValueAtQuantile(99)))
	}
	byLag := res.Pacer != "" && lag > boundLag && busy < boundBusy && slow < lag && late >= boundLateSends
	if !byCPU && !byLag {
		return ""
	}
	s := "load-bound:"
	if g := res.Generator; g.Cores() > 0 {
		if c := g.Cores(); c < float64(g.CPUs) {
			s += fmt.Sprintf(" client CPU %.0f %% of its %g-core quota,", math.Round(cpu), c)
		} else {
			s += fmt.Sprintf(" client CPU %.0f %% of %d %s,", math.Round(cpu), g.CPUs, plural(g.CPUs, "core", "cores"))
		}
	}
	if res.Pacer != "" {
		s += " lag p99 " + format.Duration(lag)
		if res.Missed > 0 {
			s += fmt.Sprintf(", %d due never sent", res.Missed)
		}
	}
	return trimComma(s)
}

// countAbove is how many of h's values are above us microseconds (to
// the histogram's precision: a bucket counts when all of it is above).
func countAbove(h *hdrhistogram.Histogram, us int64) uint64 {
	var n uint64
	for _, b := range h.Distribution() {
		if b.From > us {
			n += uint64(b.Count)
		}
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func trimComma(s string) string {
	for len(s) > 0 && (s[len(s)-1] == ',' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}
