package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/nettune/nettune/loadgen"
)

// errLuaScript is returned by parseWrkArgs for -s/--script: wrk's Lua
// scripting is not supported. What a script usually sets has a flag: the
// method -m/--method, headers -H, the body --body; anything else, import
// the loadgen package and build the Config in Go.
var errLuaScript = errors.New("loadgen: Lua scripts (-s) are not supported: use -m, -H and --body")

// wrkArgs is a wrk2 command line, parsed.
type wrkArgs struct {
	Config loadgen.Config
	Report loadgen.WrkOptions
	JSON   bool // --json: print the result as JSON instead of the text report
	Help   bool // -h/--help
	// Hlog is the file to write the interval log to (--hlog FILE): one
	// interval per second, tagged corrected, uncorrected and lag.
	Hlog string
	// Plot is the SVG file to draw the latency percentiles in (--plot).
	Plot string
}

// abArgs is an ApacheBench command line, parsed.
type abArgs struct {
	Config loadgen.Config
	Quiet  bool // -q: no "Completed N requests" progress lines
	JSON   bool // --json
	Help   bool // -h
}

// optSpec describes one getopt-style option.
type optSpec struct {
	short string // one letter, or ""
	long  string // long name, or ""
	arg   bool   // takes a value
}

type opt struct {
	name  string // short letter or long name as in the spec (short preferred)
	value string
}

// getopt parses args as GNU getopt_long does: "-c1280", "-c 1280",
// "--connections 1280", "--connections=1280", grouped flags "-LU", and
// options after the operand. It returns options and operands.
func getopt(args []string, specs []optSpec) ([]opt, []string, error) {
	var opts []opt
	var operands []string
	find := func(short, long string) (optSpec, bool) {
		for _, s := range specs {
			if short != "" && s.short == short || long != "" && s.long == long {
				return s, true
			}
		}
		return optSpec{}, false
	}
	name := func(s optSpec) string {
		if s.short != "" {
			return s.short
		}
		return s.long
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			return opts, operands, nil
		case strings.HasPrefix(a, "--"):
			n, v, hasV := strings.Cut(a[2:], "=")
			s, ok := find("", n)
			if !ok {
				return nil, nil, fmt.Errorf("%w: unknown option --%s", errUsage, n)
			}
			if s.arg && !hasV {
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("%w: option --%s needs a value", errUsage, n)
				}
				i++
				v = args[i]
			} else if !s.arg && hasV {
				return nil, nil, fmt.Errorf("%w: option --%s takes no value", errUsage, n)
			}
			opts = append(opts, opt{name(s), v})
		case strings.HasPrefix(a, "-") && len(a) > 2 && isLong(a[1:], specs):
			// Go-style single-dash long option: -hlog FILE, -shard=1/3.
			args = append(append(append([]string{}, args[:i]...), "-"+a), args[i+1:]...)
			i--
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				s, ok := find(a[j:j+1], "")
				if !ok {
					return nil, nil, fmt.Errorf("%w: unknown option -%c", errUsage, a[j])
				}
				if !s.arg {
					opts = append(opts, opt{s.short, ""})
					continue
				}
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("%w: option -%s needs a value", errUsage, s.short)
					}
					i++
					v = args[i]
				}
				opts = append(opts, opt{s.short, v})
				break
			}
		default:
			operands = append(operands, a)
		}
	}
	return opts, operands, nil
}

// isLong reports whether a (without its dash, before any '=') is the name
// of a long option of more than one letter.
func isLong(a string, specs []optSpec) bool {
	n, _, _ := strings.Cut(a, "=")
	for _, s := range specs {
		if len(s.long) > 1 && s.long == n {
			return true
		}
	}
	return false
}

var wrkSpecs = []optSpec{
	{"c", "connections", true}, {"d", "duration", true}, {"t", "threads", true},
	{"s", "script", true}, {"H", "header", true}, {"L", "latency", false},
	{"U", "u_latency", false}, {"T", "timeout", true}, {"R", "rate", true},
	{"B", "batch_latency", false}, {"h", "help", false}, {"v", "version", false},
	{"m", "method", true}, {"", "body", true}, {"", "warmup", true}, {"", "json", false},
	{"", "slack", true}, {"", "hlog", true}, {"", "plot", true}, {"", "shard", true},
	{"", "start-at", true}, {"", "insecure", false},
}

// parseWrkArgs parses a wrk/wrk2 command line (without the program name),
// e.g. the Arm Neoverse Tomcat tuning guide's "-c1280 -t128 -R500000 -d60
// URL". Without -R the run is a closed loop as fast as the server allows,
// as wrk's. -U implies -L, as
// in wrk2. Extensions: -m/--method, --body, --warmup, --slack, --json,
// --hlog FILE, --plot FILE.svg, --shard i/n, --start-at TIME, --insecure
// (accept a self-signed certificate on an https URL) (long options
// may also be written with one dash, -hlog FILE). The URL may be empty (the caller decides what to run then).
func parseWrkArgs(args []string) (wrkArgs, error) {
	var w wrkArgs
	w.Config = loadgen.Config{Connections: loadgen.DefaultConnections, Threads: loadgen.DefaultThreads, Duration: loadgen.DefaultDuration, Timeout: loadgen.DefaultTimeout}
	opts, operands, err := getopt(args, wrkSpecs)
	if err != nil {
		return w, err
	}
	for _, o := range opts {
		var err error
		switch o.name {
		case "c":
			var n int64
			n, err = parseMetric(o.value)
			w.Config.Connections = int(n)
		case "t":
			var n int64
			n, err = parseMetric(o.value)
			w.Config.Threads = int(n)
		case "R":
			var n int64
			n, err = parseMetric(o.value)
			w.Config.Rate = float64(n)
		case "d":
			w.Config.Duration, err = parseTime(o.value)
		case "T":
			w.Config.Timeout, err = parseTime(o.value)
		case "warmup":
			w.Config.Warmup, err = parseTime(o.value)
		case "slack":
			w.Config.Slack, err = parseSlack(o.value)
		case "H":
			var h loadgen.Header
			h, err = loadgen.ParseHeader(o.value)
			w.Config.Headers = append(w.Config.Headers, h)
		case "L":
			w.Report.Latency = true
		case "U":
			w.Report.Latency, w.Report.Uncorrected = true, true
		case "m":
			w.Config.Method = o.value
		case "body":
			w.Config.Body = []byte(o.value)
		case "json":
			w.JSON = true
		case "hlog":
			w.Hlog = o.value
		case "plot":
			w.Plot = o.value
		case "shard":
			w.Config.Shard, w.Config.Shards, err = parseShard(o.value, os.Getenv)
		case "start-at":
			w.Config.StartAt, err = parseStartAt(o.value)
		case "insecure":
			w.Config.Insecure = true
		case "s":
			return w, errLuaScript
		case "B":
			return w, fmt.Errorf("%w: -B (batch latency) applies to pipelined requests; loadgen sends one request per connection at a time", errUsage)
		case "h", "v":
			w.Help = true
		}
		if err != nil {
			return w, fmt.Errorf("-%s: %w", o.name, err)
		}
	}
	if w.Config.Connections <= 0 || w.Config.Threads <= 0 || w.Config.Duration <= 0 {
		return w, fmt.Errorf("%w: connections, threads and duration must be > 0", errUsage)
	}
	if w.Config.Shards > 1 && w.Config.Rate == 0 {
		return w, fmt.Errorf("%w: --shard splits a rate: give -R, the total rate of all shards", errUsage)
	}
	if w.Config.Connections < w.Config.Threads {
		return w, fmt.Errorf("%w: number of connections must be >= threads", errUsage)
	}
	switch len(operands) {
	case 0:
	case 1:
		w.Config.URL = operands[0]
		if err := loadgen.CheckURL(w.Config.URL); err != nil {
			return w, err
		}
	default:
		return w, fmt.Errorf("%w: one URL expected, got %q", errUsage, operands)
	}
	w.Report.Duration = w.Config.Duration
	return w, nil
}

var abSpecs = []optSpec{
	{"n", "", true}, {"c", "", true}, {"k", "", false}, {"t", "", true}, {"s", "", true},
	{"H", "", true}, {"m", "", true}, {"i", "", false}, {"p", "", true}, {"u", "", true},
	{"T", "", true}, {"q", "", false}, {"r", "", false}, {"v", "", true}, {"h", "", false},
	{"", "json", false},
}

// Defaults of ApacheBench.
const (
	defaultABRequests    = 1                // -n
	defaultABConcurrency = 1                // -c
	defaultABTimeout     = 30 * time.Second // -s
	abTimelimitRequests  = 50000            // -t implies -n 50000
)

// parseABArgs parses an ab command line (without "ab"), e.g. the
// ApacheBench walkthrough's "-k -n 100000 -c 149 URL", with ab's defaults:
// one request, concurrency one, no keep-alive without -k, a 30 s timeout; -t seconds implies -n
// 50000 as in ab. -p file sends the file as the body (POST, with -T's
// content type). The event loops are min(GOMAXPROCS, concurrency).
func parseABArgs(args []string) (abArgs, error) {
	var a abArgs
	c := loadgen.Config{Requests: defaultABRequests, Connections: defaultABConcurrency, Timeout: defaultABTimeout, DisableKeepAlive: true}
	opts, operands, err := getopt(args, abSpecs)
	if err != nil {
		return a, err
	}
	nSet := false
	contentType := ""
	for _, o := range opts {
		var err error
		switch o.name {
		case "n":
			c.Requests, err = strconv.ParseInt(o.value, 10, 64)
			nSet = true
		case "c":
			c.Connections, err = strconv.Atoi(o.value)
		case "k":
			c.DisableKeepAlive = false
		case "t":
			c.Duration, err = parseTime(o.value)
			c.NoDrain = true
			if !nSet {
				c.Requests = abTimelimitRequests
			}
		case "s":
			c.Timeout, err = parseTime(o.value)
		case "H":
			var h loadgen.Header
			h, err = loadgen.ParseHeader(o.value)
			c.Headers = append(c.Headers, h)
		case "m":
			c.Method = o.value
		case "i":
			c.Method = "HEAD"
		case "p", "u":
			c.Body, err = os.ReadFile(o.value)
			if o.name == "p" {
				c.Method = "POST"
			} else {
				c.Method = "PUT"
			}
		case "T":
			contentType = o.value
		case "q":
			a.Quiet = true
		case "json":
			a.JSON = true
		case "h":
			a.Help = true
		}
		if err != nil {
			return a, fmt.Errorf("-%s %s: %w", o.name, o.value, err)
		}
	}
	if contentType != "" {
		c.Headers = append(c.Headers, loadgen.Header{Name: "Content-Type", Value: contentType})
	}
	if c.Requests <= 0 || c.Connections <= 0 {
		return a, fmt.Errorf("%w: -n and -c must be > 0", errUsage)
	}
	if int64(c.Connections) > c.Requests {
		return a, fmt.Errorf("%w: cannot use concurrency level greater than total number of requests", errUsage)
	}
	c.Threads = min(runtime.GOMAXPROCS(0), c.Connections)
	switch len(operands) {
	case 0:
	case 1:
		c.URL = operands[0]
		if err := loadgen.CheckURL(c.URL); err != nil {
			return a, err
		}
	default:
		return a, fmt.Errorf("%w: one URL expected, got %q", errUsage, operands)
	}
	a.Config = c
	return a, nil
}

// parseShard parses a shard setting "i/n" (shard i, 0-based, of n). A bare
// "n" takes i from the JOB_COMPLETION_INDEX environment variable, which a
// Kubernetes Indexed Job sets in each pod; getenv is os.Getenv in a program.
func parseShard(s string, getenv func(string) string) (shard, shards int, err error) {
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		is, ns = getenv("JOB_COMPLETION_INDEX"), s
		if is == "" {
			return 0, 0, fmt.Errorf("%w: shard %q: want i/n, or n with JOB_COMPLETION_INDEX set", errUsage, s)
		}
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%w: shard %q (index %q): want i/n with 0 <= i < n, e.g. 0/3", errUsage, s, is)
	}
	return i, n, nil
}

// parseStartAt parses a shared start time: RFC 3339 ("2026-12-02T17:30:00Z",
// fractions allowed) or Unix seconds ("1796232600", "1796232600.5").
func parseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 && v < 1<<33 {
		sec := int64(v)
		return time.Unix(sec, int64((v-float64(sec))*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("%w: start time %q: want RFC 3339 (2026-12-02T17:30:00Z) or Unix seconds", errUsage, s)
}

// defaultSweepWarmup is the warm-up of each sweep level when none is
// given: a level measured from a cold start (new connections, an idle JIT)
// would understate the first levels.
const defaultSweepWarmup = time.Second

// sweepArgs is a "loadgen sweep" command line, parsed.
type sweepArgs struct {
	Sweep loadgen.SweepConfig
	// Process names the server process whose CPU to sample (--process
	// java), when no --pid is given; see FindProcess.
	Process string
	JSON    bool   // --json
	Plot    string // --plot FILE.svg: percentiles of every level, and FILE-throughput.svg
	Help    bool
}

var sweepSpecs = []optSpec{
	{"c", "connections", true}, {"R", "rate", true}, {"t", "threads", true}, {"d", "duration", true},
	{"", "warmup", true}, {"H", "header", true}, {"T", "timeout", true}, {"m", "method", true},
	{"", "body", true}, {"", "pid", true}, {"", "process", true}, {"", "json", false},
	{"", "plot", true}, {"h", "help", false}, {"", "slack", true},
}

// parseSweepArgs parses "loadgen sweep" options (without "sweep"): closed
// model levels as "-c 8,16,32,64", or open-model levels as "-R 1k,2k,4k"
// with "-c N" connections; -t, -d (per level), --warmup (per level, default
// defaultSweepWarmup), -H, -T, -m, --body, --slack as in wrk2 mode; --pid N
// or --process NAME for the server's CPU; --json; --plot FILE.svg.
func parseSweepArgs(args []string) (sweepArgs, error) {
	var a sweepArgs
	base := loadgen.Config{Threads: loadgen.DefaultThreads, Timeout: loadgen.DefaultTimeout, Connections: loadgen.DefaultConnections}
	a.Sweep.Duration, a.Sweep.Warmup = loadgen.DefaultDuration, defaultSweepWarmup
	opts, operands, err := getopt(args, sweepSpecs)
	if err != nil {
		return a, err
	}
	var conns, rates []int64
	for _, o := range opts {
		var err error
		switch o.name {
		case "c":
			conns, err = parseLevels(o.value)
		case "R":
			rates, err = parseLevels(o.value)
		case "t":
			var n int64
			n, err = parseMetric(o.value)
			base.Threads = int(n)
		case "d":
			a.Sweep.Duration, err = parseTime(o.value)
		case "warmup":
			a.Sweep.Warmup, err = parseTime(o.value)
		case "T":
			base.Timeout, err = parseTime(o.value)
		case "slack":
			base.Slack, err = parseSlack(o.value)
		case "H":
			var h loadgen.Header
			h, err = loadgen.ParseHeader(o.value)
			base.Headers = append(base.Headers, h)
		case "m":
			base.Method = o.value
		case "body":
			base.Body = []byte(o.value)
		case "pid":
			a.Sweep.PID, err = strconv.Atoi(o.value)
			if err == nil && a.Sweep.PID <= 0 {
				err = fmt.Errorf("%w: want a process id > 0", errUsage)
			}
		case "process":
			a.Process = o.value
		case "json":
			a.JSON = true
		case "plot":
			a.Plot = o.value
		case "h":
			a.Help = true
		}
		if err != nil {
			return a, fmt.Errorf("-%s %s: %w", o.name, o.value, err)
		}
	}
	switch {
	case len(rates) > 0:
		if len(conns) > 1 {
			return a, fmt.Errorf("%w: with rate levels (-R), -c is one connection count", errUsage)
		}
		if len(conns) == 1 {
			base.Connections = int(conns[0])
		}
		for _, r := range rates {
			a.Sweep.Rates = append(a.Sweep.Rates, float64(r))
		}
	case len(conns) > 0:
		for _, c := range conns {
			a.Sweep.Connections = append(a.Sweep.Connections, int(c))
		}
	case !a.Help:
		return a, fmt.Errorf("%w: sweep: give levels, -c 8,16,32,64 (connections) or -R 1k,2k,4k (requests/s)", errUsage)
	}
	if base.Threads <= 0 || a.Sweep.Duration <= 0 {
		return a, fmt.Errorf("%w: threads and duration must be > 0", errUsage)
	}
	switch len(operands) {
	case 0:
	case 1:
		base.URL = operands[0]
		if err := loadgen.CheckURL(base.URL); err != nil {
			return a, err
		}
	default:
		return a, fmt.Errorf("%w: one URL expected, got %q", errUsage, operands)
	}
	a.Sweep.Base = base
	return a, nil
}

// mergeArgs is a "loadgen merge" command line, parsed.
type mergeArgs struct {
	Out   string   // -o FILE: the merged log; none when empty
	Tag   string   // --tag: the histograms to total (default corrected)
	Files []string // the logs, one per load generator
	Help  bool
}

// parseMergeArgs parses "loadgen merge [-o merged.hlog] [--tag T] a.hlog b.hlog …".
func parseMergeArgs(args []string) (mergeArgs, error) {
	a := mergeArgs{Tag: loadgen.TagCorrected}
	opts, operands, err := getopt(args, []optSpec{{"o", "output", true}, {"", "tag", true}, {"h", "help", false}})
	if err != nil {
		return a, err
	}
	for _, o := range opts {
		switch o.name {
		case "o":
			a.Out = o.value
		case "tag":
			a.Tag = o.value
		case "h":
			a.Help = true
		}
	}
	a.Files = operands
	if len(a.Files) == 0 && !a.Help {
		return a, fmt.Errorf("%w: merge: give the interval logs to merge", errUsage)
	}
	return a, nil
}

// compareArgs is a "loadgen compare" command line, parsed.
type compareArgs struct {
	// Runs are the results to compare, the baseline first: [NAME=]FILE,
	// FILE being loadgen's --json output; NAME defaults to the file's
	// base name without extension.
	Runs []namedFile
	// CPU, when given (--cpu 93.1,92.9,…), is each run's server CPU
	// utilisation in percent, for ITR: one per run.
	CPU  []float64
	JSON bool   // --json
	Plot string // --plot FILE.svg: percentiles of every run, and FILE-throughput.svg
	Help bool
}

// parseCompareArgs parses "loadgen compare [--cpu P,…] [--json] [-plot
// FILE.svg] [NAME=]base.json [NAME=]step1.json …".
func parseCompareArgs(args []string) (compareArgs, error) {
	var a compareArgs
	opts, operands, err := getopt(args, []optSpec{{"", "cpu", true}, {"", "json", false}, {"", "plot", true}, {"h", "help", false}})
	if err != nil {
		return a, err
	}
	for _, o := range opts {
		switch o.name {
		case "cpu":
			for _, f := range strings.Split(o.value, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || v < 0 || v > 100 {
					return a, fmt.Errorf("%w: --cpu %q: %q: want percentages 0-100, one per run", errUsage, o.value, f)
				}
				a.CPU = append(a.CPU, v)
			}
		case "json":
			a.JSON = true
		case "plot":
			a.Plot = o.value
		case "h":
			a.Help = true
		}
	}
	for _, op := range operands {
		name, path, ok := strings.Cut(op, "=")
		if !ok {
			path = op
			name = strings.TrimSuffix(filepath.Base(op), filepath.Ext(op))
		}
		if name == "" || path == "" {
			return a, fmt.Errorf("%w: compare: %q: want [NAME=]FILE", errUsage, op)
		}
		a.Runs = append(a.Runs, namedFile{Name: name, Path: path})
	}
	if len(a.Runs) == 0 && !a.Help {
		return a, fmt.Errorf("%w: compare: give the runs' --json results, the baseline first", errUsage)
	}
	if a.CPU != nil && len(a.CPU) != len(a.Runs) {
		return a, fmt.Errorf("%w: --cpu has %d values for %d runs", errUsage, len(a.CPU), len(a.Runs))
	}
	return a, nil
}

// parseSlack parses --slack: a time, 0 meaning every send at its own time
// (loadgen.NoSlack); without --slack the library's rate-aware default
// applies.
func parseSlack(s string) (time.Duration, error) {
	d, err := parseTime(s)
	if err == nil && d == 0 {
		d = loadgen.NoSlack
	}
	return d, err
}
