package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// errLuaScript is returned by parseWrkArgs for -s/--script: wrk's Lua
// scripting is not supported. What a script usually sets has a flag: the
// method -m/--method, headers -H, the body --body or --body-file, a mix of
// requests --targets FILE (vegeta's format); anything else, import
// the loadgen package and build the Config in Go.
var errLuaScript = errors.New("Lua scripts (-s) are not supported: use -m, -H and --body, or --targets FILE for a mix")

// wrkArgs is a wrk2 command line, parsed.
type wrkArgs struct {
	Config loadgen.Config
	Report report.WrkOptions
	JSON   bool // --json: print the result as JSON instead of the text report
	Help   bool // -h/--help
	// Version is -v/--version (-version): print the version.
	Version bool
	// Hlog is the file to write the interval log to (--hlog FILE): one
	// interval per second, tagged corrected, uncorrected and lag.
	Hlog string
	// Plot is the SVG file to draw the latency percentiles in (--plot).
	Plot string
	// Targets is the targets file (--targets FILE) Config.Targets was
	// read from.
	Targets string
}

// abArgs is an ApacheBench command line, parsed.
type abArgs struct {
	Config  loadgen.Config
	Quiet   bool // -q: no "Completed N requests" progress lines
	JSON    bool // --json
	Help    bool // -h
	Version bool // -V/--version
}

// optSpec describes one getopt-style option.
type optSpec struct {
	short string // one letter, or ""
	long  string // long name, or ""
	arg   string // the value's name in -h ("N", "T"); "" for an option without a value
	help  string // what it does, with its default, for -h
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
				return nil, nil, cliflag.Usagef("unknown option --%s", n)
			}
			if s.arg != "" && !hasV {
				if i+1 >= len(args) {
					return nil, nil, cliflag.Usagef("option --%s needs a value", n)
				}
				i++
				v = args[i]
			} else if s.arg == "" && hasV {
				return nil, nil, cliflag.Usagef("option --%s takes no value", n)
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
					return nil, nil, cliflag.Usagef("unknown option -%c", a[j])
				}
				if s.arg == "" {
					opts = append(opts, opt{s.short, ""})
					continue
				}
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						return nil, nil, cliflag.Usagef("option -%s needs a value", s.short)
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

// Help texts shared by several modes.
const (
	helpHeader = "add a request header, \"Name: value\" (repeatable)"
	helpHelp   = "print this help and exit"
	timeHelp   = "a bare number is seconds (60), or 30s, 1m"
)

var wrkSpecs = []optSpec{
	{"c", "connections", "N", fmt.Sprintf("connections to keep open, over all event loops (SI suffixes: 1k) (default %d)", loadgen.DefaultConnections)},
	{"t", "threads", "N", fmt.Sprintf("event loops, each on an OS thread of its own; at most 4 x GOMAXPROCS run (default %d)", loadgen.DefaultThreads)},
	{"d", "duration", "T", fmt.Sprintf("length of the run: %s (default %s)", timeHelp, loadgen.DefaultDuration)},
	{"R", "rate", "N", "requests/s of the open model over all connections, latency corrected for coordinated omission (wrk2's -R; 500k); without -R a closed loop, as fast as the server answers"},
	{"H", "header", "HEADER", helpHeader},
	{"m", "method", "METHOD", "request method (default GET)"},
	{"", "body", "S", "request body (default: none)"},
	{"", "body-file", "FILE", "request body: the bytes of FILE (default: none)"},
	{"", "targets", "FILE", "send the requests of a vegeta targets file in turn on each connection, instead of URL, -m and --body; -H adds to each (default: none)"},
	{"", "ok-status", "LIST", fmt.Sprintf("statuses that are not errors: codes, classes, ranges, e.g. 200,204,3xx (default %s)", loadgen.DefaultOKStatus)},
	{"T", "timeout", "T", fmt.Sprintf("request timeout: %s (default %s)", timeHelp, loadgen.DefaultTimeout)},
	{"L", "latency", "", "print the latency distribution"},
	{"U", "u_latency", "", "also print the uncorrected latency distribution (implies -L)"},
	{"", "warmup", "T", "run this long at the same load before measuring, not recorded (default 0: none)"},
	{"", "slack", "T", "with -R: how late past a due send an event loop may sleep to batch sends (0: each send at its own time) (default: the rate's, at most 1ms)"},
	{"", "json", "", "print the result as JSON instead of the text report"},
	{"", "hlog", "FILE", "write an HdrHistogram interval log to FILE: one interval a second, tagged corrected, uncorrected and lag"},
	{"", "plot", "FILE.svg", "draw the latency percentiles in FILE.svg"},
	{"", "shard", "i/n", "with -R: send shard i (0-based) of n of the one schedule, for one load from n machines (n alone: i from JOB_COMPLETION_INDEX)"},
	{"", "start-at", "TIME", "start at this wall-clock time, RFC 3339 or Unix seconds (shards started together)"},
	{"", "insecure", "", "accept any certificate (a self-signed one) of an https:// URL"},
	{"s", "script", "FILE", "wrk's Lua script: refused (use -m, -H, --body or --targets)"},
	{"B", "batch_latency", "", "wrk2's batch latency: refused (loadgen sends one request per connection at a time)"},
	{"v", "version", "", cliflag.VersionHelp},
	{"h", "help", "", helpHelp},
}

// parseWrkArgs parses a wrk/wrk2 command line (without the program name),
// e.g. the Arm Neoverse Tomcat tuning guide's "-c1280 -t128 -R500000 -d60
// URL". Without -R the run is a closed loop as fast as the server allows,
// as wrk's. -U implies -L, as
// in wrk2. Extensions: -m/--method, --body, --body-file FILE, --targets
// FILE (vegeta's targets format), --ok-status LIST, --warmup, --slack, --json,
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
	bodyFile := ""
	given := map[string]bool{}
	for _, o := range opts {
		var err error
		given[o.name] = true
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
			w.Config.Duration, err = cliflag.ParseDuration(o.value)
		case "T":
			w.Config.Timeout, err = cliflag.ParseDuration(o.value)
		case "warmup":
			w.Config.Warmup, err = cliflag.ParseDuration(o.value)
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
		case "body-file":
			bodyFile = o.value
		case "targets":
			w.Targets = o.value
		case "ok-status":
			w.Config.OKStatus, err = loadgen.ParseStatusSet(o.value)
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
			return w, cliflag.Usage(errLuaScript)
		case "B":
			return w, cliflag.Usagef("-B (batch latency) applies to pipelined requests; loadgen sends one request per connection at a time")
		case "h":
			w.Help = true
		case "v":
			w.Version = true
		}
		if err != nil {
			return w, cliflag.Usagef("-%s: %w", o.name, err)
		}
	}
	if w.Help || w.Version {
		return w, nil
	}
	if w.Config.Connections <= 0 || w.Config.Threads <= 0 || w.Config.Duration <= 0 {
		return w, cliflag.Usagef("connections, threads and duration must be > 0")
	}
	if w.Config.Shards > 1 && w.Config.Rate == 0 {
		return w, cliflag.Usagef("--shard splits a rate: give -R, the total rate of all shards")
	}
	if w.Config.Connections < w.Config.Threads {
		return w, cliflag.Usagef("number of connections must be >= threads")
	}
	if w.Config.Slack != 0 && w.Config.Rate == 0 {
		return w, cliflag.Usagef("--slack batches the sends of an open model: give -R, or leave --slack out")
	}
	if given["body"] && given["body-file"] {
		return w, cliflag.Usagef("--body %q and --body-file %s: give one body", w.Config.Body, bodyFile)
	}
	if w.Targets != "" {
		for _, o := range []struct{ name, flag string }{{"m", "-m"}, {"body", "--body"}, {"body-file", "--body-file"}} {
			if given[o.name] {
				return w, cliflag.Usagef("--targets %s and %s: each target has its own method and body", w.Targets, o.flag)
			}
		}
		if len(operands) > 0 {
			return w, cliflag.Usagef("--targets %s and the URL %q: the targets file has the URLs", w.Targets, operands[0])
		}
	}
	switch len(operands) {
	case 0:
	case 1:
		w.Config.URL = operands[0]
		if err := loadgen.CheckURL(w.Config.URL); err != nil {
			return w, cliflag.Usage(err)
		}
	default:
		return w, cliflag.Usagef("one URL expected, got %q", operands)
	}
	// Files last: a command line is checked whole before any is read. A
	// file not read, or a bad targets file, is a failure (exit 1), as
	// ab's -p.
	if bodyFile != "" {
		if w.Config.Body, err = os.ReadFile(bodyFile); err != nil {
			return w, fmt.Errorf("--body-file: %w", err)
		}
	}
	if w.Targets != "" {
		if w.Config.Targets, err = loadgen.ReadTargets(w.Targets); err != nil {
			return w, err
		}
	}
	if w.Config.Insecure && !strings.HasPrefix(w.url(), "https://") {
		return w, cliflag.Usagef("--insecure accepts the certificate of an https:// URL: the URL is %q", firstNonEmpty(w.url(), "the built-in http:// page"))
	}
	w.Report.Duration = w.Config.Duration
	return w, nil
}

// url is the run's URL: the one given, or the first target's.
func (w wrkArgs) url() string {
	if w.Config.URL == "" && len(w.Config.Targets) > 0 {
		return w.Config.Targets[0].URL
	}
	return w.Config.URL
}

// label names what the run loads, for its header and plot: the URL, or
// the targets file.
func (w wrkArgs) label() string {
	if w.Targets != "" {
		return fmt.Sprintf("%s (%d targets)", w.Targets, len(w.Config.Targets))
	}
	return w.Config.URL
}

var abSpecs = []optSpec{
	{"n", "", "N", fmt.Sprintf("requests to perform (default %d)", defaultABRequests)},
	{"c", "", "N", fmt.Sprintf("requests at a time (default %d)", defaultABConcurrency)},
	{"k", "", "", "keep connections alive (default: a connection per request, as ab)"},
	{"t", "", "T", fmt.Sprintf("stop after this long, %s; implies -n %d", timeHelp, abTimelimitRequests)},
	{"s", "", "T", fmt.Sprintf("request timeout, %s (default %s)", timeHelp, defaultABTimeout)},
	{"H", "", "HEADER", helpHeader},
	{"m", "", "METHOD", "request method (default GET)"},
	{"i", "", "", "send HEAD requests"},
	{"p", "", "FILE", "POST the file's contents (with -T's content type)"},
	{"u", "", "FILE", "PUT the file's contents (with -T's content type)"},
	{"T", "", "TYPE", "Content-Type of -p's or -u's body"},
	{"q", "", "", "no \"Completed N requests\" progress lines"},
	{"r", "", "", "go on after socket errors: accepted, loadgen always does (and counts them)"},
	{"v", "", "N", "ab's verbosity: accepted and ignored"},
	{"", "json", "", "print the result as JSON instead of ab's report"},
	{"V", "version", "", cliflag.VersionHelp},
	{"h", "", "", helpHelp},
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
	contentType, bodyMethod := "", ""
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
			c.Duration, err = cliflag.ParseDuration(o.value)
			c.NoDrain = true
			if !nSet {
				c.Requests = abTimelimitRequests
			}
		case "s":
			c.Timeout, err = cliflag.ParseDuration(o.value)
		case "H":
			var h loadgen.Header
			h, err = loadgen.ParseHeader(o.value)
			c.Headers = append(c.Headers, h)
		case "m":
			c.Method = o.value
		case "i", "p", "u":
			method := map[string]string{"i": "HEAD", "p": "POST", "u": "PUT"}[o.name]
			if bodyMethod != "" && bodyMethod != method {
				return a, cliflag.Usagef("-%s: cannot mix %s with %s (as ab): give one of -i, -p and -u", o.name, method, bodyMethod)
			}
			bodyMethod, c.Method = method, method
			if o.name != "i" {
				if c.Body, err = os.ReadFile(o.value); err != nil {
					return a, err // a file not read: a failure, not a usage error
				}
			}
		case "T":
			contentType = o.value
		case "q":
			a.Quiet = true
		case "json":
			a.JSON = true
		case "h":
			a.Help = true
		case "V":
			a.Version = true
		}
		if err != nil {
			return a, cliflag.Usagef("-%s %s: %w", o.name, o.value, err)
		}
	}
	if a.Help || a.Version {
		return a, nil
	}
	if contentType != "" {
		c.Headers = append(c.Headers, loadgen.Header{Name: "Content-Type", Value: contentType})
	}
	if c.Requests <= 0 || c.Connections <= 0 {
		return a, cliflag.Usagef("-n and -c must be > 0")
	}
	if int64(c.Connections) > c.Requests {
		return a, cliflag.Usagef("cannot use concurrency level greater than total number of requests")
	}
	c.Threads = min(runtime.GOMAXPROCS(0), c.Connections)
	switch len(operands) {
	case 0:
	case 1:
		c.URL = operands[0]
		if err := loadgen.CheckURL(c.URL); err != nil {
			return a, cliflag.Usage(err)
		}
	default:
		return a, cliflag.Usagef("one URL expected, got %q", operands)
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
			return 0, 0, cliflag.Usagef("shard %q: want i/n, or n with JOB_COMPLETION_INDEX set", s)
		}
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, cliflag.Usagef("shard %q (index %q): want i/n with 0 <= i < n, e.g. 0/3", s, is)
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
	return time.Time{}, cliflag.Usagef("start time %q: want RFC 3339 (2026-12-02T17:30:00Z) or Unix seconds", s)
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
	{"c", "connections", "LEVELS", fmt.Sprintf("closed-model levels, increasing connection counts (8,16,32,64); with -R, one connection count (default %d)", loadgen.DefaultConnections)},
	{"R", "rate", "LEVELS", "open-model levels, increasing requests/s (1k,2k,4k)"},
	{"t", "threads", "N", fmt.Sprintf("event loops (default %d)", loadgen.DefaultThreads)},
	{"d", "duration", "T", fmt.Sprintf("length of each level: %s (default %s)", timeHelp, loadgen.DefaultDuration)},
	{"", "warmup", "T", fmt.Sprintf("warm-up before each level, not recorded (default %s)", defaultSweepWarmup)},
	{"H", "header", "HEADER", helpHeader},
	{"m", "method", "METHOD", "request method (default GET)"},
	{"", "body", "S", "request body"},
	{"T", "timeout", "T", fmt.Sprintf("request timeout (default %s)", loadgen.DefaultTimeout)},
	{"", "slack", "T", "with -R levels: how late past a due send an event loop may sleep to batch sends (0: none)"},
	{"", "pid", "N", "sample the CPU use of this server process at each level"},
	{"", "process", "NAME", "sample the CPU use of the one process with this name (java), when no --pid"},
	{"", "json", "", "print the sweep as JSON"},
	{"", "plot", "FILE.svg", "draw every level's percentiles in FILE.svg, and the throughput in FILE-throughput.svg"},
	{"h", "help", "", helpHelp},
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
			a.Sweep.Duration, err = cliflag.ParseDuration(o.value)
		case "warmup":
			a.Sweep.Warmup, err = cliflag.ParseDuration(o.value)
		case "T":
			base.Timeout, err = cliflag.ParseDuration(o.value)
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
				err = cliflag.Usagef("want a process id > 0")
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
			return a, cliflag.Usagef("-%s %s: %w", o.name, o.value, err)
		}
	}
	if a.Help {
		return a, nil
	}
	if a.Sweep.PID != 0 && a.Process != "" {
		return a, cliflag.Usagef("--pid %d and --process %s: give one server process", a.Sweep.PID, a.Process)
	}
	if base.Slack != 0 && len(rates) == 0 {
		return a, cliflag.Usagef("--slack batches the sends of open-model levels: give -R levels, or leave --slack out")
	}
	switch {
	case len(rates) > 0:
		if len(conns) > 1 {
			return a, cliflag.Usagef("with rate levels (-R), -c is one connection count")
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
	default:
		return a, cliflag.Usagef("sweep: give levels, -c 8,16,32,64 (connections) or -R 1k,2k,4k (requests/s)")
	}
	if base.Threads <= 0 || a.Sweep.Duration <= 0 {
		return a, cliflag.Usagef("threads and duration must be > 0")
	}
	switch len(operands) {
	case 0:
	case 1:
		base.URL = operands[0]
		if err := loadgen.CheckURL(base.URL); err != nil {
			return a, cliflag.Usage(err)
		}
	default:
		return a, cliflag.Usagef("one URL expected, got %q", operands)
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

var mergeSpecs = []optSpec{
	{"o", "output", "FILE", "write the merged interval log to FILE"},
	{"", "tag", "TAG", fmt.Sprintf("the histograms to total: %s, %s or %s (default %s)", report.TagCorrected, report.TagUncorrected, report.TagLag, report.TagCorrected)},
	{"h", "help", "", helpHelp},
}

// parseMergeArgs parses "loadgen merge [-o merged.hlog] [--tag T] a.hlog b.hlog …".
func parseMergeArgs(args []string) (mergeArgs, error) {
	a := mergeArgs{Tag: report.TagCorrected}
	opts, operands, err := getopt(args, mergeSpecs)
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
		return a, cliflag.Usagef("merge: give the interval logs to merge")
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

var compareSpecs = []optSpec{
	{"", "cpu", "P,P,...", "each run's server CPU use in percent, one per run, for the ITR (throughput per CPU)"},
	{"", "json", "", "print the comparison as JSON"},
	{"", "plot", "FILE.svg", "draw every run's percentiles in FILE.svg, and the throughput in FILE-throughput.svg"},
	{"h", "help", "", helpHelp},
}

// parseCompareArgs parses "loadgen compare [--cpu P,…] [--json] [-plot
// FILE.svg] [NAME=]base.json [NAME=]step1.json …".
func parseCompareArgs(args []string) (compareArgs, error) {
	var a compareArgs
	opts, operands, err := getopt(args, compareSpecs)
	if err != nil {
		return a, err
	}
	for _, o := range opts {
		switch o.name {
		case "cpu":
			for _, f := range strings.Split(o.value, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || v < 0 || v > 100 {
					return a, cliflag.Usagef("--cpu %q: %q: want percentages 0-100, one per run", o.value, f)
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
			return a, cliflag.Usagef("compare: %q: want [NAME=]FILE", op)
		}
		a.Runs = append(a.Runs, namedFile{Name: name, Path: path})
	}
	if len(a.Runs) == 0 && !a.Help {
		return a, cliflag.Usagef("compare: give the runs' --json results, the baseline first")
	}
	if a.CPU != nil && len(a.CPU) != len(a.Runs) {
		return a, cliflag.Usagef("--cpu has %d values for %d runs", len(a.CPU), len(a.Runs))
	}
	return a, nil
}

// parseSlack parses --slack: a time, 0 meaning every send at its own time
// (loadgen.NoSlack); without --slack the library's rate-aware default
// applies.
func parseSlack(s string) (time.Duration, error) {
	d, err := cliflag.ParseDuration(s)
	if err == nil && d == 0 {
		d = loadgen.NoSlack
	}
	return d, err
}

// writeOptions writes specs for -h, one option a line: its names, its
// value's name and what it does, with its default.
func writeOptions(w io.Writer, specs []optSpec) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range specs {
		var names []string
		if s.short != "" {
			names = append(names, "-"+s.short)
		}
		if s.long != "" {
			names = append(names, "--"+s.long)
		}
		name := strings.Join(names, ", ")
		if s.arg != "" {
			name += " " + s.arg
		}
		fmt.Fprintf(tw, "  %s\t%s\n", name, s.help)
	}
	return tw.Flush()
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
