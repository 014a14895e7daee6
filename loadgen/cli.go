package loadgen

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ErrLuaScript is returned by ParseWrkArgs for -s/--script: wrk's Lua
// scripting is not supported.
var ErrLuaScript = errors.New("loadgen: Lua scripts (-s) are not supported: set the method with -m/--method, headers with -H and the body with --body, or import the loadgen package and build the Config in Go")

// ErrUsage is wrapped by the argument parsers' errors.
var ErrUsage = errors.New("loadgen: usage")

// WrkArgs is a wrk2 command line, parsed.
type WrkArgs struct {
	Config Config
	Report WrkOptions
	JSON   bool // --json: print the result as JSON instead of the text report
	Help   bool // -h/--help
	// Hlog is the file to write the interval log to (--hlog FILE): one
	// interval per second, tagged corrected, uncorrected and lag.
	Hlog string
	// Plot is the SVG file to draw the latency percentiles in (--plot).
	Plot string
}

// ABArgs is an ApacheBench command line, parsed.
type ABArgs struct {
	Config Config
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
				return nil, nil, fmt.Errorf("%w: unknown option --%s", ErrUsage, n)
			}
			if s.arg && !hasV {
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("%w: option --%s needs a value", ErrUsage, n)
				}
				i++
				v = args[i]
			} else if !s.arg && hasV {
				return nil, nil, fmt.Errorf("%w: option --%s takes no value", ErrUsage, n)
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
					return nil, nil, fmt.Errorf("%w: unknown option -%c", ErrUsage, a[j])
				}
				if !s.arg {
					opts = append(opts, opt{s.short, ""})
					continue
				}
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("%w: option -%s needs a value", ErrUsage, s.short)
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

// ParseMetric parses a count with wrk's SI suffixes: "1280", "500k",
// "1M", "2G" (case-insensitive).
func ParseMetric(s string) (int64, error) {
	num, mult := s, int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			num, mult = s[:n-1], 1000
		case 'm', 'M':
			num, mult = s[:n-1], 1000*1000
		case 'g', 'G':
			num, mult = s[:n-1], 1000*1000*1000
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > math.MaxInt64/mult {
		return 0, fmt.Errorf("%w: %q: want a count such as 1280, 500k or 1M", ErrUsage, s)
	}
	return v * mult, nil
}

// ParseTime parses a duration as wrk does, a bare number being seconds:
// "60", "30s", "1m", "2h"; Go forms such as "1m30s" or "500ms" also work.
func ParseTime(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v*float64(time.Second) < math.MaxInt64 {
		return time.Duration(v * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%w: %q: want a duration such as 60 (seconds), 30s, 1m or 2h", ErrUsage, s)
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

// ParseWrkArgs parses a wrk/wrk2 command line (without the program name),
// e.g. the seeds' "-c1280 -t128 -R500000 -d60 URL". Without -R the run is
// a closed loop as fast as the server allows, as wrk's. -U implies -L, as
// in wrk2. Extensions: -m/--method, --body, --warmup, --slack, --json,
// --hlog FILE, --plot FILE.svg, --shard i/n, --start-at TIME, --insecure
// (accept a self-signed certificate on an https URL) (long options
// may also be written with one dash, -hlog FILE). The URL may be empty (the caller decides what to run then).
func ParseWrkArgs(args []string) (WrkArgs, error) {
	var w WrkArgs
	w.Config = Config{Connections: DefaultConnections, Threads: DefaultThreads, Duration: DefaultDuration, Timeout: DefaultTimeout}
	opts, operands, err := getopt(args, wrkSpecs)
	if err != nil {
		return w, err
	}
	for _, o := range opts {
		var err error
		switch o.name {
		case "c":
			var n int64
			n, err = ParseMetric(o.value)
			w.Config.Connections = int(n)
		case "t":
			var n int64
			n, err = ParseMetric(o.value)
			w.Config.Threads = int(n)
		case "R":
			var n int64
			n, err = ParseMetric(o.value)
			w.Config.Rate = float64(n)
		case "d":
			w.Config.Duration, err = ParseTime(o.value)
		case "T":
			w.Config.Timeout, err = ParseTime(o.value)
		case "warmup":
			w.Config.Warmup, err = ParseTime(o.value)
		case "slack":
			w.Config.Slack, err = ParseTime(o.value)
		case "H":
			var h Header
			h, err = ParseHeader(o.value)
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
			w.Config.Shard, w.Config.Shards, err = ParseShard(o.value, os.Getenv)
		case "start-at":
			w.Config.StartAt, err = ParseStartAt(o.value)
		case "insecure":
			w.Config.Insecure = true
		case "s":
			return w, ErrLuaScript
		case "B":
			return w, fmt.Errorf("%w: -B (batch latency) applies to pipelined requests; loadgen sends one request per connection at a time", ErrUsage)
		case "h", "v":
			w.Help = true
		}
		if err != nil {
			return w, fmt.Errorf("-%s: %w", o.name, err)
		}
	}
	if w.Config.Connections <= 0 || w.Config.Threads <= 0 || w.Config.Duration <= 0 {
		return w, fmt.Errorf("%w: connections, threads and duration must be > 0", ErrUsage)
	}
	if w.Config.Shards > 1 && w.Config.Rate == 0 {
		return w, fmt.Errorf("%w: --shard splits a rate: give -R, the total rate of all shards", ErrUsage)
	}
	if w.Config.Connections < w.Config.Threads {
		return w, fmt.Errorf("%w: number of connections must be >= threads", ErrUsage)
	}
	switch len(operands) {
	case 0:
	case 1:
		w.Config.URL = operands[0]
		if _, err := parseTarget(w.Config.URL); err != nil {
			return w, err
		}
	default:
		return w, fmt.Errorf("%w: one URL expected, got %q", ErrUsage, operands)
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
	DefaultABRequests    = 1                // -n
	DefaultABConcurrency = 1                // -c
	DefaultABTimeout     = 30 * time.Second // -s
	abTimelimitRequests  = 50000            // -t implies -n 50000
)

// ParseABArgs parses an ab command line (without "ab"), e.g. seed 003's
// "-k -n 100000 -c 149 URL", with ab's defaults: one request, concurrency
// one, no keep-alive without -k, a 30 s timeout; -t seconds implies -n
// 50000 as in ab. -p file sends the file as the body (POST, with -T's
// content type). The event loops are min(GOMAXPROCS, concurrency).
func ParseABArgs(args []string) (ABArgs, error) {
	var a ABArgs
	c := Config{Requests: DefaultABRequests, Connections: DefaultABConcurrency, Timeout: DefaultABTimeout, DisableKeepAlive: true}
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
			c.Duration, err = ParseTime(o.value)
			c.NoDrain = true
			if !nSet {
				c.Requests = abTimelimitRequests
			}
		case "s":
			c.Timeout, err = ParseTime(o.value)
		case "H":
			var h Header
			h, err = ParseHeader(o.value)
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
		c.Headers = append(c.Headers, Header{"Content-Type", contentType})
	}
	if c.Requests <= 0 || c.Connections <= 0 {
		return a, fmt.Errorf("%w: -n and -c must be > 0", ErrUsage)
	}
	if int64(c.Connections) > c.Requests {
		return a, fmt.Errorf("%w: cannot use concurrency level greater than total number of requests", ErrUsage)
	}
	c.Threads = min(runtime.GOMAXPROCS(0), c.Connections)
	switch len(operands) {
	case 0:
	case 1:
		c.URL = operands[0]
		if _, err := parseTarget(c.URL); err != nil {
			return a, err
		}
	default:
		return a, fmt.Errorf("%w: one URL expected, got %q", ErrUsage, operands)
	}
	a.Config = c
	return a, nil
}

// ParseShard parses a shard setting "i/n" (shard i, 0-based, of n). A bare
// "n" takes i from the JOB_COMPLETION_INDEX environment variable, which a
// Kubernetes Indexed Job sets in each pod; getenv is os.Getenv in a program.
func ParseShard(s string, getenv func(string) string) (shard, shards int, err error) {
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		is, ns = getenv("JOB_COMPLETION_INDEX"), s
		if is == "" {
			return 0, 0, fmt.Errorf("%w: shard %q: want i/n, or n with JOB_COMPLETION_INDEX set", ErrUsage, s)
		}
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%w: shard %q (index %q): want i/n with 0 <= i < n, e.g. 0/3", ErrUsage, s, is)
	}
	return i, n, nil
}

// ParseStartAt parses a shared start time: RFC 3339 ("2026-12-02T17:30:00Z",
// fractions allowed) or Unix seconds ("1796232600", "1796232600.5").
func ParseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 && v < 1<<33 {
		sec := int64(v)
		return time.Unix(sec, int64((v-float64(sec))*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("%w: start time %q: want RFC 3339 (2026-12-02T17:30:00Z) or Unix seconds", ErrUsage, s)
}
