package loadgen

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults used when a field of Config, CapacityOptions, WarmUpOptions or
// StepOptions is zero, and NoSlack. The example program's flags take
// their defaults from these, so they cannot drift.
const (
	DefaultConnections = 10               // wrk's -c default
	DefaultThreads     = 2                // wrk's -t default
	DefaultDuration    = 10 * time.Second // wrk's -d default
	DefaultTimeout     = 2 * time.Second  // wrk's --timeout default
	DefaultInterval    = time.Second      // interval snapshots

	// DefaultOKStatus is the text form of the zero StatusSet
	// (Config.OKStatus): the statuses that are not errors.
	DefaultOKStatus = "2xx,3xx"

	// NoSlack as Config.Slack sends every request at its own intended
	// time, each with its own wake-up.
	NoSlack time.Duration = -1
	// defaultSendWindow bounds how late the default slack (Config.Slack
	// 0) sends a request to batch it with others due soon after it.
	defaultSendWindow = time.Millisecond

	// Defaults of MeasureCapacity, WarmUp and MeasureStep.

	// DefaultCapacityRate is the offered rate of a capacity run: wrk2's
	// -R500000 in the Arm Tomcat guide, far above what one server answers.
	DefaultCapacityRate = 500000
	// DefaultWarmUpInterval is the length of one warm-up run.
	DefaultWarmUpInterval = 2 * time.Second
	// DefaultWarmUpMax bounds a warm-up's total load time.
	DefaultWarmUpMax = 30 * time.Second
	// DefaultWarmUpTolerance is the spread of the achieved rates of the
	// last warm-up runs (the highest over the lowest, in percent) within
	// which the rate has stopped climbing.
	DefaultWarmUpTolerance = 5.0
	// DefaultWarmUpRuns is the number of successive warm-up runs whose
	// rates must agree within the tolerance.
	DefaultWarmUpRuns = 2
	// DefaultMaxCompilerShare is the share of the server's CPU time its
	// JIT compiler threads may use over the last warm-up run for the JIT
	// to count as settled (WarmUpOptions.CompilerShare).
	DefaultMaxCompilerShare = 0.02
	// DefaultLatencyShare is the common latency rate of MeasureStep, as a
	// share of the step's capacity, when StepOptions.LatencyRate is 0: far
	// enough below saturation that the latency is the server's, not a
	// queue's.
	DefaultLatencyShare = 0.6
)

// Header is one request header line.
type Header struct {
	Name, Value string
}

// Config describes one load run. The zero value of every field but URL is
// a usable default.
type Config struct {
	// URL is the target, http://host[:port]/path?query or https://…
	// (TLS 1.2 or 1.3 over keep-alive connections, the URL's host as SNI,
	// sessions resumed on reconnect). Required.
	URL string
	// Insecure accepts any server certificate (a self-signed one) on an
	// https URL, as wrk does; by default it is verified against the
	// system's roots and the URL's host.
	Insecure bool
	// Method is the request method. Default: GET.
	Method string
	// Headers are added to the request after Host (a Host header here
	// replaces the one derived from URL).
	Headers []Header
	// Body is sent with a Content-Length header when not empty.
	Body []byte
	// Targets, when not empty, are the requests to send instead of one
	// request (Method, URL, Body) repeated: connection i of the run
	// starts with target i mod len(Targets) and moves on by one target
	// per request, so a closed loop with a request count sends a known
	// number of each. Every target has URL's scheme, host and port (URL
	// may then be empty: the first target's sets them); Headers are sent
	// with every target; Method and Body must be empty. Each target's
	// request is serialised once, as the single request is. With more
	// than one target, Result.Targets has each one's counts and latency
	// (a histogram of about 32 KB per target and event loop). Default:
	// none.
	Targets []Target
	// OKStatus is the set of response statuses that are not errors; a
	// response outside it counts in Errors.Status. Default (the zero
	// value): 200-399, as wrk counts "Non-2xx or 3xx responses".
	OKStatus StatusSet

	// Connections is the number of concurrent connections. Default:
	// DefaultConnections.
	Connections int
	// Threads is the number of event loops, each on its own OS thread,
	// sharing the connections. Default: DefaultThreads; capped at
	// Connections and at maxThreads.
	Threads int

	// Rate is the total request rate of an open-model run, in requests per
	// second, split evenly over the connections (wrk2's -R). 0 means a
	// closed loop: each connection sends its next request as soon as the
	// previous response is complete (wrk without -R, ab). Ignored when
	// Pacer is set.
	Rate float64
	// Pacer, when not nil, sets the open-model schedule (a ramp, steps)
	// instead of Rate.
	Pacer Pacer
	// Shard and Shards split one open-model load over Shards generators
	// (processes or machines) started together (see StartAt): this run is
	// shard Shard (0-based) and sends requests Shard, Shard+Shards,
	// Shard+2·Shards, … of the schedule Rate or Pacer describes, so at a
	// rate R it sends R/Shards per second with send times offset by
	// Shard/R, and the union of all shards is one evenly spaced schedule
	// at R. Shards 0 or 1 means no sharding; sharding needs an open model.
	Shard, Shards int
	// StartAt, when not zero, is the wall-clock time at which the run (its
	// warm-up, then the measured part) begins: Run connects first, then
	// waits for it, so that shards on several machines start together
	// (their clocks synchronised, e.g. by NTP). A StartAt that has passed
	// once the connections are open is an error: a late shard would not
	// fit the shared schedule.
	StartAt time.Time

	// Slack lets an open-model event loop sleep past a request's
	// intended time so that sends due close together leave in one
	// wake-up, and their responses come back together: fewer wake-ups
	// (less CPU per request at high rates) for sends a little late, never
	// early. The delay is measured, not hidden: it shows in
	// Histograms.Lag and in the corrected latency. 0 (the default)
	// follows the load: each event loop measures its share of a CPU every
	// 100 ms; while it is under 2 % every send leaves on its own time, and
	// as it grows to 10 % the loop sends the requests falling due within a
	// window of the first together, when the last of them is due. The
	// window widens with the load up to a quarter of a connection's send
	// interval (Connections/rate) and never beyond defaultSendWindow, so no
	// request leaves more than that late for batching. A positive Slack
	// always waits that long past the first due send; NoSlack sends each
	// request at its own time (wrk2's 1 ms timers behave roughly like a
	// Slack of 1 ms).
	Slack time.Duration

	// Duration is the length of the measured window, as wrk2's -d: no
	// request is sent after it. Requests still in flight at its end get a
	// drain of at most Timeout to complete or time out; they are counted
	// in Result.Drain, not in Result.Requests, the histograms or the
	// intervals (see NoDrain). Default: DefaultDuration, unless Requests
	// is set.
	Duration time.Duration
	// NoDrain ends the run at the end of Duration without a drain: the
	// requests then in flight are counted in Result.Incomplete (ab's -t).
	NoDrain bool
	// Requests, when > 0, ends a closed-loop run after that many requests
	// (ab's -n). With Duration also set, whichever comes first ends it.
	Requests int64
	// Warmup is run before the measured part, at the same load, and not
	// recorded. Default: none.
	Warmup time.Duration

	// DisableKeepAlive opens a new connection for every request and sends
	// "Connection: close" (ab without -k). Connect time is then recorded
	// separately. Default: keep-alive.
	DisableKeepAlive bool
	// Timeout is the per-request timeout, from the actual send (or the
	// connect) to the end of the response; a request that exceeds it is
	// counted as a timeout error and its connection is reopened. Default:
	// DefaultTimeout.
	Timeout time.Duration

	// Interval is the length of the interval snapshots passed to
	// OnInterval. Default: DefaultInterval.
	Interval time.Duration
	// OnInterval, when not nil, is called after each interval with the
	// interval's histograms and counts, from a goroutine of Run's (not an
	// event loop). It must return quickly (the event loops wait for it once
	// a few intervals are queued) and must not keep the histograms after
	// it returns.
	OnInterval func(Snapshot)
}

// maxThreads caps Config.Threads: event loops beyond a few per CPU only add
// context switches (the Arm Neoverse Tomcat tuning guide's wrk2 -t128 on a
// 2-core client would run 128 threads on 2 cores). The cap is
// 4 × GOMAXPROCS, at least 4.
func maxThreads(gomaxprocs int) int {
	if gomaxprocs < 1 {
		gomaxprocs = 1
	}
	return 4 * gomaxprocs
}

// target is the parsed form of a Config's URL.
type target struct {
	host     string // host as written in the URL, without port
	port     int
	hostPort string // for the Host header
	path     string // request-target
	tls      bool   // https
}

func parseTarget(raw string) (target, error) {
	if raw == "" {
		return target{}, fmt.Errorf("loadgen: no URL: want http://host[:port]/path")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("loadgen: URL %q: %w", raw, err)
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return target{}, fmt.Errorf("loadgen: URL %q: want an http:// or https:// URL", raw)
	}
	if u.Hostname() == "" {
		return target{}, fmt.Errorf("loadgen: URL %q: no host: want http://host[:port]/path", raw)
	}
	t := target{host: u.Hostname(), port: 80, hostPort: u.Host, tls: u.Scheme == "https"}
	if t.tls {
		t.port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return target{}, fmt.Errorf("loadgen: URL %q: port %q: want 1-65535", raw, p)
		}
		t.port = n
	}
	t.path = u.EscapedPath()
	if t.path == "" {
		t.path = "/"
	}
	if u.RawQuery != "" {
		t.path += "?" + u.RawQuery
	}
	return t, nil
}

// CheckURL reports whether raw is a URL Run accepts
// (http[s]://host[:port]/path?query), and if not, why.
func CheckURL(raw string) error {
	_, err := parseTarget(raw)
	return err
}

// CheckTargets reports whether Run accepts targets with Config.URL url
// ("" for none): each target's URL well formed, and all of them, with url,
// on one scheme, host and port (a default port written or not); if not,
// why.
func CheckTargets(url string, targets []Target) error {
	_, _, err := buildRequests(&Config{URL: url, Targets: targets})
	return err
}

// addr is a resolved target address.
func (t target) resolve() ([]net.IP, error) {
	if ip := net.ParseIP(t.host); ip != nil {
		return []net.IP{ip}, nil
	}
	ips, err := net.LookupIP(t.host)
	if err != nil {
		return nil, fmt.Errorf("loadgen: resolve %s: %w", t.host, err)
	}
	return ips, nil
}

// request is one request serialised once; every send reuses the bytes.
type request struct {
	b    []byte
	head bool // HEAD: the response has no body
}

// buildRequests serialises the run's requests: Config's one, or one per
// target. It returns the address they all go to.
func buildRequests(cfg *Config) (target, []request, error) {
	if len(cfg.Targets) == 0 {
		t, err := parseTarget(cfg.URL)
		if err != nil {
			return target{}, nil, err
		}
		b, err := buildRequest(cfg.Method, cfg.URL, cfg.Headers, cfg.Body, cfg.DisableKeepAlive, t)
		return t, []request{{b, cfg.Method == "HEAD"}}, err
	}
	if cfg.Method != "" || len(cfg.Body) > 0 {
		return target{}, nil, fmt.Errorf("loadgen: a method (%q) or a body (%d bytes) with %d targets: give each target its own", cfg.Method, len(cfg.Body), len(cfg.Targets))
	}
	var base, first target
	haveBase := cfg.URL != ""
	if haveBase {
		var err error
		if base, err = parseTarget(cfg.URL); err != nil {
			return target{}, nil, err
		}
		first = base
	}
	reqs := make([]request, len(cfg.Targets))
	for i, tg := range cfg.Targets {
		raw := tg.URL
		if haveBase && strings.HasPrefix(raw, "/") {
			raw = base.origin() + raw
		}
		t, err := parseTarget(raw)
		if err != nil {
			return target{}, nil, fmt.Errorf("loadgen: target %d: %w", i+1, err)
		}
		if i == 0 && !haveBase {
			first = t
		}
		if t.tls != first.tls || t.host != first.host || t.port != first.port {
			return target{}, nil, fmt.Errorf("loadgen: target %d (%s %s): want %s like the first target (one run sends to one host over one pool of connections): run a generator per host",
				i+1, firstNonEmpty(tg.Method, "GET"), tg.URL, first.origin())
		}
		headers := append(append([]Header(nil), cfg.Headers...), tg.Headers...)
		b, err := buildRequest(tg.Method, raw, headers, tg.Body, cfg.DisableKeepAlive, t)
		if err != nil {
			return target{}, nil, fmt.Errorf("loadgen: target %d: %w", i+1, err)
		}
		reqs[i] = request{b, tg.Method == "HEAD"}
	}
	return first, reqs, nil
}

// origin is the target's scheme, host and port.
func (t target) origin() string {
	scheme := "http"
	if t.tls {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(t.host, strconv.Itoa(t.port)))
}

// buildRequest serialises one request to t (rawURL is for errors).
func buildRequest(method, rawURL string, headers []Header, body []byte, closeConn bool, t target) ([]byte, error) {
	if method == "" {
		method = "GET"
	}
	for _, c := range method {
		if c <= ' ' || c >= 0x7f {
			return nil, fmt.Errorf("loadgen: method %q: want a token such as GET", method)
		}
	}
	var b strings.Builder
	b.WriteString(method)
	b.WriteByte(' ')
	b.WriteString(t.path)
	b.WriteString(" HTTP/1.1\r\n")
	hasHost := false
	for _, h := range headers {
		if strings.EqualFold(h.Name, "Host") {
			hasHost = true
		}
	}
	if !hasHost {
		b.WriteString("Host: " + t.hostPort + "\r\n")
	}
	for _, h := range headers {
		if !validHeader(h) {
			return nil, fmt.Errorf("loadgen: %s: header %q: %q: want a name without ':', spaces or newlines and a one-line value", rawURL, h.Name, h.Value)
		}
		b.WriteString(h.Name + ": " + h.Value + "\r\n")
	}
	if closeConn {
		b.WriteString("Connection: close\r\n")
	}
	if len(body) > 0 {
		b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return []byte(b.String()), nil
}

// ParseHeader parses "Name: value" as given to wrk's and ab's -H.
func ParseHeader(s string) (Header, error) {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return Header{}, fmt.Errorf("loadgen: header %q: want \"Name: value\"", s)
	}
	return Header{Name: strings.TrimSpace(s[:i]), Value: strings.TrimSpace(s[i+1:])}, nil
}

// normalize fills defaults and checks the config.
func (c Config) normalize(gomaxprocs int) (Config, error) {
	if c.Connections == 0 {
		c.Connections = DefaultConnections
	}
	if c.Connections < 0 {
		return c, fmt.Errorf("loadgen: connections %d: want > 0", c.Connections)
	}
	if c.Threads == 0 {
		c.Threads = DefaultThreads
	}
	if c.Threads < 0 {
		return c, fmt.Errorf("loadgen: threads %d: want > 0", c.Threads)
	}
	if c.Threads > c.Connections {
		c.Threads = c.Connections
	}
	if m := maxThreads(gomaxprocs); c.Threads > m {
		c.Threads = m
	}
	if c.Rate < 0 {
		return c, fmt.Errorf("loadgen: rate %g: want >= 0 requests/s (0 = closed loop)", c.Rate)
	}
	if c.Pacer == nil && c.Rate > 0 {
		c.Pacer = Constant(c.Rate)
	}
	if c.Pacer != nil {
		if err := validatePacer(c.Pacer); err != nil {
			return c, err
		}
		if c.Requests > 0 {
			return c, fmt.Errorf("loadgen: a request count (%d) with a rate: an open-model run is bounded by its duration", c.Requests)
		}
	}
	if c.Shards > 1 || c.Shard != 0 {
		if c.Pacer == nil {
			return c, fmt.Errorf("loadgen: shard %d/%d: sharding needs an open model: set a rate", c.Shard, c.Shards)
		}
		if c.Shard < 0 || c.Shard >= c.Shards {
			return c, fmt.Errorf("loadgen: shard %d/%d: want shard i of n with 0 <= i < n", c.Shard, c.Shards)
		}
		c.Pacer = Shard(c.Pacer, c.Shard, c.Shards)
	}
	if c.Shards < 0 {
		return c, fmt.Errorf("loadgen: shards %d: want >= 0", c.Shards)
	}
	if !c.StartAt.IsZero() && time.Until(c.StartAt) < 0 {
		return c, fmt.Errorf("loadgen: start time %s passed %s ago: give a later one", c.StartAt.UTC().Format(time.RFC3339Nano), (-time.Until(c.StartAt)).Round(time.Millisecond))
	}
	if c.Requests < 0 {
		return c, fmt.Errorf("loadgen: requests %d: want >= 0", c.Requests)
	}
	if c.Duration < 0 || c.Warmup < 0 || c.Timeout < 0 || c.Interval < 0 || (c.Slack < 0 && c.Slack != NoSlack) {
		return c, fmt.Errorf("loadgen: negative duration, warm-up, timeout, interval or slack (NoSlack is the one negative slack)")
	}
	if c.Duration == 0 && c.Requests == 0 {
		c.Duration = DefaultDuration
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	return c, nil
}

// checkTarget reports whether Run can send t as it stands (an absolute
// URL, a method token, one-line headers), and if not, why.
func checkTarget(t Target) error {
	tg, err := parseTarget(t.URL)
	if err != nil {
		return err
	}
	_, err = buildRequest(t.Method, t.URL, t.Headers, t.Body, false, tg)
	return err
}
