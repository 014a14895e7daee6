package tomcatconf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/procstat"
)

// The kinds of JVM thread, as Thread.Kind and Pool.Kind give them.
const (
	kindExec     = "exec"     // a Connector's own worker: http-nio-8080-exec-N
	kindExecutor = "executor" // a shared <Executor>'s worker: tomcat-exec-N (namePrefix)
	kindPoller   = "poller"   // http-nio-8080-Poller
	kindAcceptor = "acceptor" // http-nio-8080-Acceptor
	kindGC       = "gc"       // GC Thread#N, G1 Conc#N, G1 Refine#N, ...
	kindCompiler = "compiler" // C1/C2 CompilerThreadN
	kindVM       = "vm"       // VM Thread, Signal Dispatcher, Finalizer, ...
	kindOther    = "other"
)

// Thread is one thread of the JVM over the census interval.
type Thread struct {
	TID  int
	Name string // the full Java name when known, else the kernel's (truncated to 15 bytes)
	// Kind is what the name says the thread does: "exec" (a Connector's
	// own worker, http-nio-8080-exec-N), "executor" (a shared Executor's
	// worker, tomcat-exec-N), "poller", "acceptor", "gc", "compiler",
	// "vm" (VM Thread, Signal Dispatcher, ...) or "other".
	Kind string
	Pool string // the pool it belongs to: "http-nio-8080" for exec/poller/acceptor, the namePrefix for an executor, else the kind
	CPU  time.Duration
	// Load is CPU over the interval: 1.0 is one CPU busy all the time.
	Load float64
	// VoluntarySwitches counts the times the thread gave up its CPU over
	// the interval (it waited: for a socket, a lock, I/O), and
	// InvoluntarySwitches the times the kernel took the CPU from it (its
	// time slice ran out: more runnable threads than CPUs), from
	// /proc/PID/task/TID/status; 0 when the tree has no status file.
	VoluntarySwitches, InvoluntarySwitches int64
}

// Pool sums the threads of one kind in one pool.
type Pool struct {
	Pool    string
	Kind    string // as Thread.Kind
	Threads int
	CPU     time.Duration
	Load    float64
	// VoluntarySwitches and InvoluntarySwitches sum the threads' (Thread).
	VoluntarySwitches, InvoluntarySwitches int64
}

// Census is a snapshot of a JVM's threads and their CPU use.
type Census struct {
	PID      int
	Interval time.Duration
	CPUs     []int    // CPUs the JVM may run on: its affinity (Cpus_allowed_list) that are online, ascending
	Threads  []Thread // by TID
	Pools    []Pool   // by load, highest first
}

// CensusOptions tune TakeCensus. A nil *CensusOptions means the defaults.
type CensusOptions struct {
	// Root is the host root holding /proc and /sys. Default: "" (this
	// host, "/").
	Root string
	// Names maps TIDs to full Java thread names (see JavaThreadNames);
	// the kernel keeps only the first 15 bytes, so
	// "http-nio-18080-exec-1" reads "http-nio-18080-". Default: none.
	Names map[int]string
	// ExecutorPrefixes are the namePrefix values of shared Executors.
	// Default: "tomcat-exec-" and "catalina-exec-".
	ExecutorPrefixes []string
}

// TakeCensus reads every thread of pid from /proc/PID/task/*/stat (name,
// utime, stime) and status (context switches), waits interval (or until
// ctx ends), reads them again, and reports each thread's CPU and switches
// over the interval, grouped into pools. It also reads /proc/PID/status
// (Cpus_allowed_list) and /sys/devices/system/cpu/online. Reading another
// user's /proc/PID/task needs no privilege. It is ReadThreads, the wait,
// ReadThreads again and CensusSince.
func TakeCensus(ctx context.Context, pid int, interval time.Duration, opts *CensusOptions) (Census, error) {
	before, err := ReadThreads(pid, opts)
	if err != nil {
		return Census{PID: pid}, err
	}
	timer := time.NewTimer(interval)
	select {
	case <-ctx.Done():
		timer.Stop()
	case <-timer.C:
	}
	after, err := ReadThreads(pid, opts)
	if err != nil {
		return Census{PID: pid}, err
	}
	return after.CensusSince(before, opts)
}

// ThreadReading is one reading of a JVM's threads: each one's name, CPU
// time and context switches, the CPUs it may run on, and when. Two of
// them, taken around a measurement, give its census (CensusSince) with no
// thread sampling in between.
type ThreadReading struct {
	PID   int
	At    time.Time
	CPUs  []int // as Census.CPUs
	tasks map[int]taskStat
}

// ReadThreads reads pid's threads once (opts.Root; the other options are
// CensusSince's).
func ReadThreads(pid int, opts *CensusOptions) (ThreadReading, error) {
	r := ThreadReading{PID: pid}
	var o CensusOptions
	if opts != nil {
		o = *opts
	}
	root, err := hostRoot(o.Root)
	if err != nil {
		return r, err
	}
	cpus, err := jvmCPUs(root, pid)
	if err != nil {
		return r, err
	}
	r.CPUs = cpus.IDs()
	r.At = time.Now()
	if r.tasks, err = readTasks(root, pid, true); err != nil {
		return r, err
	}
	return r, nil
}

// CensusSince is the census of the interval from the reading before to r,
// of one process: each thread's CPU time and context switches in between
// (a thread that began in between counts from zero), classified by name
// (opts.Names, opts.ExecutorPrefixes) and summed by pool.
func (r ThreadReading) CensusSince(before ThreadReading, opts *CensusOptions) (Census, error) {
	c := Census{PID: r.PID, CPUs: r.CPUs, Interval: r.At.Sub(before.At)}
	if before.PID != r.PID || c.Interval < 0 {
		return c, fmt.Errorf("tomcatconf: census from a reading of PID %d to one of PID %d %s later: want one process, in order", before.PID, r.PID, c.Interval)
	}
	var o CensusOptions
	if opts != nil {
		o = *opts
	}
	if len(o.ExecutorPrefixes) == 0 {
		o.ExecutorPrefixes = []string{"tomcat-exec-", "catalina-exec-"}
	}
	for tid, a := range r.tasks {
		b := before.tasks[tid]
		name := a.comm
		if full, ok := o.Names[tid]; ok && strings.HasPrefix(full, a.comm) {
			name = full
		}
		kind, pool := classifyThread(name, o.ExecutorPrefixes)
		cpu := procstat.Ticks(uint64(intervalTicks(b, a)))
		th := Thread{TID: tid, Name: name, Kind: kind, Pool: pool, CPU: cpu}
		if c.Interval > 0 {
			th.Load = cpu.Seconds() / c.Interval.Seconds()
		}
		th.VoluntarySwitches, th.InvoluntarySwitches = intervalSwitches(b, a)
		c.Threads = append(c.Threads, th)
	}
	sort.Slice(c.Threads, func(i, j int) bool { return c.Threads[i].TID < c.Threads[j].TID })
	c.Pools = poolsOf(c.Threads)
	return c, nil
}

// poolsOf sums threads by pool and kind, the busiest pool first.
func poolsOf(threads []Thread) []Pool {
	pools := map[[2]string]*Pool{}
	for _, t := range threads {
		k := [2]string{t.Pool, t.Kind}
		p := pools[k]
		if p == nil {
			p = &Pool{Pool: t.Pool, Kind: t.Kind}
			pools[k] = p
		}
		p.Threads++
		p.CPU += t.CPU
		p.Load += t.Load
		p.VoluntarySwitches += t.VoluntarySwitches
		p.InvoluntarySwitches += t.InvoluntarySwitches
	}
	out := make([]Pool, 0, len(pools))
	for _, p := range pools {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CPU != out[j].CPU {
			return out[i].CPU > out[j].CPU
		}
		return out[i].Pool+out[i].Kind < out[j].Pool+out[j].Kind
	})
	return out
}

// Count returns how many threads of kind the census saw in pool ("" for
// any pool).
func (c Census) Count(pool, kind string) int {
	n := 0
	for _, t := range c.Threads {
		if t.Kind == kind && (pool == "" || t.Pool == pool) {
			n++
		}
	}
	return n
}

// defaultBusyLoad is the load (fraction of one CPU) above which a
// non-worker thread counts as busy: the Arm guide's Poller ran at 89%.
const defaultBusyLoad = 0.5

// Recommendation is a maxThreads value and why.
type Recommendation struct {
	MaxThreads int
	CPUs       int      // CPUs available to the JVM
	Busy       []Thread // non-worker threads above the busy load
	Reason     string
}

// Recommend sizes maxThreads as the Arm Neoverse Tomcat tuning guide
// reasons: one worker per CPU available to the JVM, less one per busy
// non-worker thread (the Poller under load), at least 1. A thread is busy
// at busyLoad or more (a fraction of one CPU); 0 means 0.5. Take the
// census under load for the Poller to show up.
func (c Census) Recommend(busyLoad float64) Recommendation {
	if busyLoad <= 0 {
		busyLoad = defaultBusyLoad
	}
	r := Recommendation{CPUs: len(c.CPUs)}
	var names []string
	for _, t := range c.Threads {
		if t.Kind != kindExec && t.Kind != kindExecutor && t.Load >= busyLoad {
			r.Busy = append(r.Busy, t)
			names = append(names, fmt.Sprintf("%s %.0f%%", t.Name, 100*t.Load))
		}
	}
	r.MaxThreads = max(1, r.CPUs-len(r.Busy))
	r.Reason = fmt.Sprintf("%d CPUs available to the JVM (%s) - %d busy non-worker thread(s)", r.CPUs, cpuset.Of(c.CPUs...), len(r.Busy))
	if len(names) > 0 {
		r.Reason += " (" + strings.Join(names, ", ") + ")"
	}
	r.Reason += fmt.Sprintf(" = maxThreads %d", r.MaxThreads)
	return r
}

var (
	reConnThread = regexp.MustCompile(`^((?:https?|ajp)(?:-jsse|-openssl|-opensslffm)?-(?:nio2?|apr)-.*?)-(exec-\d*|Poller|Acceptor|ClientPoller-?\d*|BlockPoller|AsyncTimeout)$`)
	// A kernel name is cut to 15 bytes: "http-nio-8080-e", "http-nio-8080-P".
	reConnTrunc = regexp.MustCompile(`^((?:https?|ajp)-(?:nio2?|apr)-(?:[0-9a-fA-F.:]+-)?\d+)-(.+)$`)
)

// classifyThread returns the kind and pool of a JVM thread from its name,
// full or cut to the kernel's 15 bytes. executorPrefixes are the namePrefix
// values of shared Executors.
func classifyThread(name string, executorPrefixes []string) (kind, pool string) {
	if m := reConnThread.FindStringSubmatch(name); m != nil {
		return connKind(m[2]), m[1]
	}
	if len(name) == 15 {
		if m := reConnTrunc.FindStringSubmatch(name); m != nil {
			for _, full := range []string{"exec-", "Poller", "Acceptor", "ClientPoller", "BlockPoller"} {
				if strings.HasPrefix(full, m[2]) {
					return connKind(full), m[1]
				}
			}
		}
	}
	for _, p := range executorPrefixes {
		if strings.HasPrefix(name, p) || (len(name) == 15 && strings.HasPrefix(p, name)) {
			return kindExecutor, p
		}
	}
	switch {
	case strings.HasPrefix(name, "GC Thread"), strings.HasPrefix(name, "G1 "), strings.HasPrefix(name, "ParGC"),
		strings.HasPrefix(name, "Shenandoah"), strings.HasPrefix(name, "ZWorker"), strings.HasPrefix(name, "ZDirector"),
		strings.HasPrefix(name, "VM Thread"):
		if name == "VM Thread" {
			return kindVM, kindVM
		}
		return kindGC, kindGC
	case strings.HasPrefix(name, "C1 Compiler"), strings.HasPrefix(name, "C2 Compiler"), strings.HasPrefix(name, "JVMCI"):
		return kindCompiler, kindCompiler
	case strings.HasPrefix(name, "VM "), strings.HasPrefix(name, "Signal Dispatch"), strings.HasPrefix(name, "Service Thread"),
		strings.HasPrefix(name, "Reference Handl"), strings.HasPrefix(name, "Finalizer"), strings.HasPrefix(name, "Common-Cleaner"),
		strings.HasPrefix(name, "Notification Th"), strings.HasPrefix(name, "Monitor Deflati"), strings.HasPrefix(name, "Sweeper thread"):
		return kindVM, kindVM
	}
	return kindOther, kindOther
}

func connKind(s string) string {
	switch {
	case strings.HasPrefix(s, "exec"):
		return kindExec
	case strings.HasPrefix(s, "Acceptor"):
		return kindAcceptor
	default:
		return kindPoller
	}
}

type taskStat struct {
	comm  string
	ticks int64 // utime + stime
	// vol and invol are the voluntary and involuntary context switches
	// (with switches read; -1 when the tree has no status file).
	vol, invol int64
}

// readTasks reads every thread's stat file and, with switches, its
// status file's context switches.
func readTasks(root hostfs.Root, pid int, switches bool) (map[int]taskStat, error) {
	dir := root.Proc(strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tomcatconf: threads of PID %d: %w", pid, err)
	}
	out := make(map[int]taskStat, len(ents))
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := hostfs.ReadAttr(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue // the thread ended between ReadDir and here
		}
		st, err := parseTaskStat(data)
		if err != nil {
			return nil, fmt.Errorf("tomcatconf: %s: %w", filepath.Join(dir, e.Name(), "stat"), err)
		}
		if switches {
			status := filepath.Join(dir, e.Name(), "status")
			data, err := hostfs.ReadFile(status)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				st.vol, st.invol = -1, -1 // a captured tree without it, or the thread ended
			case err != nil:
				return nil, fmt.Errorf("tomcatconf: %w", err)
			default:
				if st.vol, st.invol, err = parseSwitches(data); err != nil {
					return nil, fmt.Errorf("tomcatconf: %s: %w", status, err)
				}
			}
		}
		out[tid] = st
	}
	return out, nil
}

// parseTaskStat reads the name and utime+stime from a
// /proc/PID/task/TID/stat line (internal/procstat), refusing a sum that a
// time.Duration of nanoseconds could not count from.
func parseTaskStat(data []byte) (taskStat, error) {
	st, err := procstat.Parse(data)
	if err != nil {
		return taskStat{}, err
	}
	cpu, ok := st.CPU()
	if !ok || cpu > math.MaxInt64 {
		return taskStat{}, fmt.Errorf("stat %.60q: utime %d stime %d, want a sum below 2^63", data, st.UTime, st.STime)
	}
	return taskStat{comm: st.Comm, ticks: int64(cpu)}, nil
}

// intervalTicks is the CPU time, in clock ticks, a thread used between
// reading b (zero if the thread was not there yet) and the later reading
// a. A thread whose count went down ended and its TID went to a new
// thread, which counts from zero.
func intervalTicks(b, a taskStat) int64 {
	if b.ticks > a.ticks {
		return a.ticks
	}
	return a.ticks - b.ticks
}

// parseSwitches reads voluntary_ctxt_switches and
// nonvoluntary_ctxt_switches from a /proc/PID/task/TID/status file.
func parseSwitches(data []byte) (vol, invol int64, err error) {
	vol, invol = -1, -1
	for _, l := range strings.Split(string(data), "\n") {
		key, val, ok := strings.Cut(l, ":")
		if !ok || (key != "voluntary_ctxt_switches" && key != "nonvoluntary_ctxt_switches") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil || n < 0 {
			return 0, 0, fmt.Errorf("%s %q: want a count", key, strings.TrimSpace(val))
		}
		if key == "voluntary_ctxt_switches" {
			vol = n
		} else {
			invol = n
		}
	}
	if vol < 0 || invol < 0 {
		return 0, 0, errors.New("no voluntary_ctxt_switches and nonvoluntary_ctxt_switches lines")
	}
	return vol, invol, nil
}

// intervalSwitches is the context switches between readings b and a of
// one thread (a new thread's from zero; unknown, -1, reads 0).
func intervalSwitches(b, a taskStat) (vol, invol int64) {
	if a.vol < 0 || a.invol < 0 {
		return 0, 0
	}
	if b.vol < 0 || b.invol < 0 || b.vol > a.vol || b.invol > a.invol {
		b.vol, b.invol = 0, 0
	}
	return a.vol - b.vol, a.invol - b.invol
}

// jvmCPUs returns the JVM's allowed CPUs that are online.
func jvmCPUs(root hostfs.Root, pid int) (cpuset.Set, error) {
	status := root.Proc(strconv.Itoa(pid), "status")
	data, err := hostfs.ReadFile(status)
	if err != nil {
		return cpuset.Set{}, fmt.Errorf("tomcatconf: %w", err)
	}
	var allowed cpuset.Set
	found := false
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			if allowed, err = cpuset.ParseNamed(strings.TrimSpace(v), status); err != nil {
				return cpuset.Set{}, fmt.Errorf("tomcatconf: %w", err)
			}
			found = true
		}
	}
	if !found {
		return cpuset.Set{}, fmt.Errorf("tomcatconf: %s has no Cpus_allowed_list line", status)
	}
	onlinePath := root.Sys("devices", "system", "cpu", "online")
	s, err := hostfs.ReadString(onlinePath)
	if err != nil {
		return allowed, nil // no sysfs: the affinity is all we know
	}
	online, err := cpuset.ParseNamed(s, onlinePath)
	if err != nil {
		return cpuset.Set{}, fmt.Errorf("tomcatconf: %w", err)
	}
	return allowed.Intersect(online), nil
}

// JavaThreadNames returns full Java thread names by native thread ID,
// for CensusOptions.Names, from `jcmd PID Thread.print` run through r
// (nil runs it on this host); jcmd "" is "jcmd" from $PATH (it ships with
// the JDK: Debian's openjdk-17-jdk-headless). It must run as the JVM's
// user or root.
func JavaThreadNames(ctx context.Context, r Runner, jcmd string, pid int) (map[int]string, error) {
	r = runnerOr(r)
	if jcmd == "" {
		jcmd = "jcmd"
	}
	path, err := exec.LookPath(jcmd)
	if err != nil {
		return nil, fmt.Errorf("tomcatconf: %w", err)
	}
	out, err := r.Run(ctx, Command{Path: path, Args: []string{strconv.Itoa(pid), "Thread.print"}, Env: os.Environ()})
	if err != nil {
		return nil, fmt.Errorf("tomcatconf: %w", err)
	}
	return parseThreadDump(bytes.NewReader(out))
}

var reDumpLine = regexp.MustCompile(`^"((?:[^"\\]|\\.)*)".*\bnid=(0x[0-9a-fA-F]+|\d+)\b`)

// parseThreadDump reads a HotSpot thread dump (jcmd PID Thread.print,
// jstack PID) and returns thread names by native thread ID (the TID in
// /proc/PID/task), from the lines that start with the quoted thread name
// and carry nid=0x1a2b (hex up to JDK 18) or nid=6699 (decimal from JDK
// 19). A dump without such lines is an error.
func parseThreadDump(r io.Reader) (map[int]string, error) {
	out := map[int]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		m := reDumpLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		nid, err := strconv.ParseInt(m[2], 0, 64)
		if err != nil || nid <= 0 || nid > 1<<31 {
			continue
		}
		out[int(nid)] = m[1]
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no thread lines (\"name\" ... nid=...) in the thread dump")
	}
	return out, nil
}
