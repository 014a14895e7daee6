//go:build linux

package study

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/procstat"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tomcatconf/hsperf"
)

// serverReading is one reading of where Tomcat's time goes, taken at the
// start and at the end of a step's capacity runs (no sampling between:
// nothing of the study runs on Tomcat's CPUs meanwhile): its CPUs'
// states, its threads, the JVM's own counters and the NIC queues'
// interrupts. A part that could not be read is named in missing.
type serverReading struct {
	proc    procstat.Stat
	cpus    numa.CPUTimes
	threads tomcatconf.ThreadReading
	jvm     *hsperf.Figures
	irqs    []nic.QueueIRQ
	missing []string
}

// costProbe reads a serverReading: the numa host for /proc/stat, the
// JVM's PID and CPUs, and the NIC whose queue interrupts count ("" for
// none).
type costProbe struct {
	numa  *numa.Host
	nic   *nic.Client
	iface string
	pid   int
	cpus  numa.CPUSet
}

// read takes one reading; what fails is noted, not fatal.
func (p costProbe) read() serverReading {
	var r serverReading
	var err error
	if r.proc, err = procstat.Read(filepath.Join(p.numa.Root(), "proc", strconv.Itoa(p.pid), "stat")); err != nil {
		r.missing = append(r.missing, "Tomcat's CPU: "+err.Error())
	}
	if r.cpus, err = p.numa.CPUTimes(); err != nil {
		r.missing = append(r.missing, "CPU split: "+err.Error())
	}
	if r.threads, err = tomcatconf.ReadThreads(p.pid, &tomcatconf.CensusOptions{Root: p.numa.Root()}); err != nil {
		r.missing = append(r.missing, "threads: "+err.Error())
	}
	if s, err := hsperf.Read(p.pid, &hsperf.Options{Root: p.numa.Root()}); err != nil {
		r.missing = append(r.missing, "JVM counters: "+err.Error())
	} else if f, err := s.Figures(); err != nil {
		r.missing = append(r.missing, "JVM counters: "+err.Error())
	} else {
		r.jvm = &f
	}
	if p.nic != nil && p.iface != "" {
		if r.irqs, err = p.nic.QueueIRQs(p.iface); err != nil {
			r.missing = append(r.missing, "queue interrupts: "+err.Error())
		}
	}
	return r
}

// StepCost is where Tomcat's time went during a step's capacity runs:
// what its CPUs did, per request and in all, its threads by pool, its
// context switches, the JVM's collections and compilation, the NIC
// queues' interrupts, and the load generator's own CPU.
type StepCost struct {
	// Requests completed over the runs (drains included), and the
	// interval the readings span.
	Requests uint64
	Interval time.Duration
	// User and System are the JVM's own CPU time (/proc/PID/stat: every
	// thread's, wherever it ran).
	User, System time.Duration
	// CPU is the split of Tomcat's CPUs (numa.CPUSplit): the JVM's time,
	// any other process's there (a load generator sharing them), the
	// interrupts', the idle time. Zero when Missing says it could not be
	// read.
	CPU numa.CPUSplit
	// Pools are Tomcat's threads' CPU and switches by pool.
	Pools []tomcatconf.Pool
	// Voluntary and Involuntary are the context switches of all its
	// threads.
	Voluntary, Involuntary int64
	// JVM is the JVM's own counters over the runs; nil without them
	// (-XX:-UsePerfData, or unreadable).
	JVM *hsperf.Figures
	// QueueIRQs counts the NIC queues' interrupts, by queue name.
	QueueIRQs map[string]uint64
	// Generator is the load generator's CPU over the runs.
	Generator loadgen.GeneratorUse
	// Missing names what could not be read, and why.
	Missing []string
}

// costOf is the cost of the capacity runs c between readings a and b.
func costOf(a, b serverReading, c *loadgen.Capacity, cpus numa.CPUSet) StepCost {
	var s StepCost
	s.Missing = append(append(s.Missing, a.missing...), b.missing...)
	for _, res := range c.Runs {
		s.Requests += res.Requests + res.Drain.Requests
		s.Generator.CPU += res.Generator.CPU
		s.Generator.Wall += res.Generator.Wall
		s.Generator.CPUs, s.Generator.Quota = res.Generator.CPUs, res.Generator.Quota
	}
	if a.proc.PID != 0 && a.proc.PID == b.proc.PID && a.proc.StartTime == b.proc.StartTime {
		s.User = procstat.Ticks(b.proc.UTime - min(a.proc.UTime, b.proc.UTime))
		s.System = procstat.Ticks(b.proc.STime - min(a.proc.STime, b.proc.STime))
	}
	if a.cpus.CPUs != nil && b.cpus.CPUs != nil {
		split, err := b.cpus.SplitSince(a.cpus, cpus)
		if err != nil {
			s.Missing = append(s.Missing, "CPU split: "+err.Error())
		} else {
			s.CPU, s.Interval = split, split.Interval
		}
	}
	if a.threads.PID != 0 && b.threads.PID != 0 {
		if census, err := b.threads.CensusSince(a.threads, nil); err != nil {
			s.Missing = append(s.Missing, "threads: "+err.Error())
		} else {
			s.Pools = census.Pools
			for _, p := range census.Pools {
				s.Voluntary += p.VoluntarySwitches
				s.Involuntary += p.InvoluntarySwitches
			}
		}
	}
	if a.jvm != nil && b.jvm != nil {
		if d, err := b.jvm.Sub(*a.jvm); err != nil {
			s.Missing = append(s.Missing, "JVM counters: "+err.Error())
		} else {
			s.JVM = &d
		}
	}
	s.QueueIRQs = queueIRQsBetween(a.irqs, b.irqs)
	return s
}

// queueIRQsBetween is each queue's interrupts between two readings, by
// its handler's name; nil without both.
func queueIRQsBetween(a, b []nic.QueueIRQ) map[string]uint64 {
	if a == nil || b == nil {
		return nil
	}
	before := map[int]uint64{}
	for _, q := range a {
		before[q.IRQ] = q.Total()
	}
	m := map[string]uint64{}
	for _, q := range b {
		if n, ok := before[q.IRQ]; ok && q.Total() >= n {
			m[q.Name] = q.Total() - n
		}
	}
	return m
}

// ITR is the requests per busy CPU-second of Tomcat's CPUs (the IBM
// study's throughput per busy CPU); 0 when not measured.
func (s StepCost) ITR() float64 {
	if b := s.CPU.Busy(); b > 0 {
		return float64(s.Requests) / b.Seconds()
	}
	return 0
}

// perRequest is d per completed request, in µs.
func (s StepCost) perRequest(d time.Duration) float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(d) / float64(time.Microsecond) / float64(s.Requests)
}

// others is the busy time of Tomcat's CPUs outside the JVM and the
// interrupts: other processes' (a load generator sharing the CPUs), at
// least 0 (the JVM's own time may have run on other CPUs too).
func (s StepCost) others() time.Duration {
	return max(0, s.CPU.User+s.CPU.System-s.User-s.System)
}

// costFigure is one figure per request a reason may name.
type costFigure struct {
	name string
	of   func(StepCost) float64
}

// stateFigures are where the time of Tomcat's CPUs went, per request:
// the JVM's user and system time, the interrupts', steal and idle. When
// the JVM has its CPUs to itself they are the CPUs' whole time per
// request, so a capacity's change is the sum of theirs; other processes'
// time there is not the step's doing, and whyOf names it apart.
var stateFigures = []costFigure{
	{"user CPU", func(s StepCost) float64 { return s.perRequest(s.User) }},
	{"system CPU", func(s StepCost) float64 { return s.perRequest(s.System) }},
	{"interrupt CPU", func(s StepCost) float64 { return s.perRequest(s.CPU.IRQ + s.CPU.SoftIRQ) }},
	{"stolen CPU", func(s StepCost) float64 { return s.perRequest(s.CPU.Steal) }},
	{"idle CPU", func(s StepCost) float64 { return s.perRequest(s.CPU.Idle) }},
}

// detailFigures explain a state's move further, per 1000 requests.
var detailFigures = []costFigure{
	{"GC pause", func(s StepCost) float64 {
		if s.JVM == nil || s.Requests == 0 {
			return math.NaN()
		}
		_, p := s.JVM.GC()
		return 1000 * s.perRequest(p)
	}},
	{"context switches", func(s StepCost) float64 {
		if s.Requests == 0 {
			return math.NaN()
		}
		return 1000 * float64(s.Voluntary+s.Involuntary) / float64(s.Requests)
	}},
}

// whyOf is the reason line of a step against the previous one: the state
// of Tomcat's CPUs whose time per request moved most (the states sum to
// the time per request, so it is the biggest part of the capacity's
// change), with the JVM's GC pause or the context switches per request
// when one of them moved by more than half. "" when either step has no
// CPU split or no requests.
func whyOf(prev, cur StepCost) string {
	if prev.CPU.CPUs == 0 || cur.CPU.CPUs == 0 || prev.Requests == 0 || cur.Requests == 0 {
		return ""
	}
	var best costFigure
	var from, to float64
	for _, f := range stateFigures {
		a, b := f.of(prev), f.of(cur)
		if best.of == nil || math.Abs(b-a) > math.Abs(to-from) {
			best, from, to = f, a, b
		}
	}
	total := func(s StepCost) float64 { return s.perRequest(s.CPU.Total()) }
	line := fmt.Sprintf("%s %s per request (%s → %s µs of %s → %s)", best.name, changeText(from, to),
		fmtMicros(from), fmtMicros(to), fmtMicros(total(prev)), fmtMicros(total(cur)))
	var more []string
	for _, f := range detailFigures {
		a, b := f.of(prev), f.of(cur)
		if math.IsNaN(a) || math.IsNaN(b) || (a == 0 && b == 0) {
			continue
		}
		if a == 0 || math.Abs(b-a)/a > 0.5 {
			more = append(more, fmt.Sprintf("%s %s", f.name, changeText(a, b)))
		}
	}
	for _, s := range []StepCost{prev, cur} {
		if share := s.CPU.Share(s.others()); share > othersShare {
			more = append(more, fmt.Sprintf("other processes took %.0f %% of Tomcat's CPUs", 100*share))
			break
		}
	}
	if len(more) > 0 {
		line += "; " + strings.Join(more, ", ")
	}
	return line
}

// othersShare is the share of Tomcat's CPUs' time other processes may
// take before a reason says so.
const othersShare = 0.10

// changeText is b against a: "−21 %", "+3.0×" from a doubling on, "new"
// from nothing.
func changeText(a, b float64) string {
	switch {
	case a == 0 && b == 0:
		return "±0 %"
	case a == 0:
		return "new"
	case b >= 2*a:
		return fmt.Sprintf("+%.1f×", b/a)
	}
	pct := 100 * (b - a) / a
	if math.Round(pct) == 0 {
		return "±0 %"
	}
	if pct < 0 {
		return fmt.Sprintf("−%.0f %%", -pct)
	}
	return fmt.Sprintf("+%.0f %%", pct)
}

// fmtMicros prints µs with two significant figures below 10.
func fmtMicros(us float64) string {
	if us < 10 {
		return fmt.Sprintf("%.1f", us)
	}
	return fmt.Sprintf("%.0f", us)
}

// Text is the cost in one line: the JVM's CPU per request, the CPUs'
// idle and interrupt shares, ITR, the collections, the switches and the
// generator's CPU; then what could not be read.
func (s StepCost) Text() string {
	if s.Requests == 0 {
		return "cost: no request completed"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cost: %s µs user + %s µs system per request", fmtMicros(s.perRequest(s.User)), fmtMicros(s.perRequest(s.System)))
	if s.CPU.CPUs > 0 {
		fmt.Fprintf(&b, " on %d %s (%.0f %% idle, %.0f %% interrupts); %.0f requests per busy CPU-second",
			s.CPU.CPUs, plural(s.CPU.CPUs, "CPU", "CPUs"), 100*s.CPU.Share(s.CPU.Idle), 100*s.CPU.Share(s.CPU.IRQ+s.CPU.SoftIRQ), s.ITR())
	}
	if s.JVM != nil {
		n, pause := s.JVM.GC()
		fmt.Fprintf(&b, "; %d GC, %s paused", n, report.FormatDuration(pause))
	}
	fmt.Fprintf(&b, "; %.2f context switches per request", float64(s.Voluntary+s.Involuntary)/float64(s.Requests))
	if s.Generator.Wall > 0 {
		fmt.Fprintf(&b, "; load generator %.0f %% of %g %s", s.Generator.Percent(), s.Generator.Cores(), plural(int(math.Ceil(s.Generator.Cores())), "core", "cores"))
	}
	if len(s.Missing) > 0 {
		fmt.Fprintf(&b, " (not read: %s)", strings.Join(dedupe(s.Missing), "; "))
	}
	return b.String()
}

// dedupe keeps the first of equal strings, in order.
func dedupe(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// plural is one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Why is the reason line of the measured step name against the measured
// step before it (whyOf of their costs); "" for the first, or when
// either has no cost.
func (res Results) Why(name string) string {
	prev := ""
	for _, m := range res.Measured {
		if m.Name == name {
			break
		}
		prev = m.Name
	}
	a, okA := res.Costs[prev]
	b, okB := res.Costs[name]
	if prev == "" || !okA || !okB {
		return ""
	}
	return whyOf(a, b)
}
