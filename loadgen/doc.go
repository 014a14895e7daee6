// Package loadgen generates HTTP/1.1 load and measures latency without
// coordinated omission, as wrk2 does, and runs ApacheBench-style closed
// loops, with wrk's speed.
//
// In the open model (wrk2's -R, [Config.Rate] or a [Pacer]) the total rate
// is split over the connections and each connection follows its own
// schedule of intended send times: request n (over all connections) is due
// at Pacer.Due(n) and goes to connection n mod C. Latency is measured from
// the intended send time, so a stalled server shows up in the percentiles
// instead of silently slowing the load ([Histograms.Latency]); the service
// time from the actual send ([Histograms.Service], wrk2's -U) and the
// generator's own lag ([Histograms.Lag]) are kept beside it, so a run shows
// when the load generator, not the server, was the bottleneck. Values are
// recorded once with RecordValue; HdrHistogram's after-the-fact correction
// is never applied on top. In the closed model (Rate 0: wrk without -R, ab's
// -n -c -k) each connection sends its next request when the previous
// response is complete, for a duration or a request count, with keep-alive
// or with a new connection per request (connect time recorded separately,
// as ab's Connect / Processing / Waiting / Total).
//
// Reports live in package loadgen/report, which imports this one:
// report.WriteWrk (wrk2's text layout, with --latency's HdrHistogram
// distribution and -U's uncorrected block), report.WriteAB (ApacheBench's
// layout), report.WriteJSON (every number, histograms included in HdrHistogram's
// compressed encoding). [Config.OnInterval] receives per-interval
// histograms for live progress or interval logs. The command line that
// accepts wrk2's and ab's verbatim is examples/loadgen, which also owns
// its flag parsing and file handling; this package parses only
// [ParseHeader] values, [ParseStatusSet] lists, vegeta's targets files
// ([ParseTargets], [ReadTargets]) and the wire form of a Config
// ([ReadConfigJSON]; a Result's is report.ReadResultJSON).
//
// # Several requests
//
// [Config.Targets] replaces the one request (Method, URL, Body) with a
// list, as a vegeta targets file or a wrk Lua script's request() would:
// connection i starts with target i mod n and moves on by one target per
// request, so the mix is fixed by the list, not by timing, and the
// schedule and its coordinated-omission correction are the same as for
// one request. Every target's request is serialised once, before the run.
// The targets share one host and port (one pool of connections). The
// result counts responses by status class ([Result.Statuses]; a status
// outside [Config.OKStatus], 200-399 by default, is an error) and, with
// several targets, each target's counts and latency ([Result.Targets]).
//
// # Sweeps, comparisons, interval logs, shards, plots
//
// [Sweep] runs one workload at increasing load levels (connections, or
// rates), each with its warm-up and duration, as the IBM tuning-variations
// study runs 20 to 80 users; while a level runs it samples the host's CPU (/proc/stat) and the
// server process's (/proc/PID/stat, e.g. Tomcat's JVM, [FindProcess]) every
// 50 ms, and reports per level the [Figures] (throughput, latency
// percentiles, errors, CPU and ITR = throughput per unit of CPU) and an
// [AnalyzeSweep] verdict: the best level, the knee (throughput stops
// growing while latency climbs) and over-drive (throughput falls).
// [Compare] puts variations or tuning steps side by side against a
// baseline (%ETR, change against the baseline and the previous step,
// latency, CPU, ITR) as text or JSON; [FiguresOf] turns a [Result] into
// Figures, and report.ReadResultJSON reads back a run saved with report.WriteJSON.
//
// [WarmUp], [MeasureCapacity] and [CompareSteps] measure a tuning study's
// steps: warm-up runs until the rate stops climbing (and, with
// [WarmUpOptions.CompilerShare], until a JVM's JIT compilers use under 2 %
// of its CPU), repeated saturating runs ([MeasureStep] with
// [StepOptions.Remeasure] warms a step that did not settle up once more
// after them, and measures it again if it settled), and each step's
// change against the baseline and the step before judged as benchstat
// judges a difference: the two-sided Mann-Whitney U test ([stats.MannWhitneyU]), the
// exact Hodges-Lehmann interval of the ratio ([stats.RatioIntervalOf]), and a
// gain or a loss only when p < α and the interval lies outside a ±1 %
// noise band ([stats.UpliftOfRuns]). [StepComparison.Drift] says which uplifts a
// drift of the starting configuration over the study is as large as.
//
// [Config.OnInterval] receives a [Snapshot] per interval; report.HlogRecorder
// writes them as an HdrHistogram interval log, and report.MergeHlogs
// unions the logs of several generators.
// [Config.Shard], [Config.Shards] and [Config.StartAt] split one open-model
// load over n generators on n machines: shard i sends requests i, i+n, …
// of the schedule ([ShardPacer]: rate R/n, send times offset by i/R) from a
// shared start, so the union is one evenly spaced load at R.
// report.PlotPercentiles and report.PlotThroughput draw SVG charts (latency by
// percentile on HdrHistogram's 1/(1−p) axis, several runs overlaid;
// throughput bars with uplift labels).
//
// # Engine
//
// The HTTP client is the package's own. [Config.Threads] event loops, each
// locked to an OS thread, own their connections: non-blocking sockets,
// level-triggered epoll(7), and a timerfd(2) per loop armed for the next
// due send with nanosecond resolution. With [Config.Slack] set to
// [NoSlack] (the CLI's --slack 0) each send has its own wake-up. The default follows each
// loop's load: while the loop is nearly idle every send leaves on time;
// as its CPU share grows, sends falling due close together leave in one
// wake-up, within a window that is never wider than a quarter of a
// connection's send interval nor than 1 ms. The
// delay is measured, in [Histograms.Lag] and in the corrected latency
// (wrk2's 1 ms timers add ~0.8 ms to every corrected percentile). A loop
// sleeps in epoll_pwait without handing its P back to the Go scheduler (a blocking system call that
// sysmon would otherwise retake every few tens of microseconds; PERF.md
// has the measurements); for that Run keeps one P more
// than event loops, raising GOMAXPROCS to Threads+1 when it is lower and
// putting it back when the run (the last of concurrent runs) ends, with
// the runtime's automatic updates when it was the runtime's default. The
// request (each target's) is serialised once; responses are parsed by a streaming parser
// (status line, headers, Content-Length, chunked, Connection: close,
// bodiless HEAD/204/304) that allocates nothing per response. Each loop
// keeps its own histograms, merged at the end
// (HdrHistogram has no locking). net/http costs 2-3 times more CPU per
// request; BenchmarkClosedLoop and scripts/loadgen-bench.sh measure it.
//
// # Kernel interfaces
//
// socket(2), connect(2), read(2), write(2) on TCP sockets to the target;
// epoll_create1(2), epoll_ctl(2), epoll_pwait(2); timerfd_create(2),
// timerfd_settime(2); prlimit(2) on RLIMIT_NOFILE. Sweeps
// read /proc/stat (the first "cpu" line and the count of "cpuN" lines) and
// /proc/PID/stat (utime, stime) under [SweepConfig.Root]; [FindProcess] reads
// /proc/*/comm and /proc/*/cmdline. Nothing under /sys, /proc or /etc is
// written; the CLI writes only the .hlog and .svg files it is given.
//
// # Privileges
//
// None for the load itself. Many connections need a raised RLIMIT_NOFILE:
// Run raises the soft limit to the hard limit when the connections need
// it (what the Arm Neoverse Tomcat tuning guide's ulimit -n 65535 does),
// raises the hard limit too when the process may (CAP_SYS_RESOURCE), and
// otherwise returns an error wrapping [ErrOpenFiles] and the errno. Reading another user's
// /proc/PID/stat needs no privilege (unless /proc is mounted with
// hidepid). Send load only to servers you run.
package loadgen
