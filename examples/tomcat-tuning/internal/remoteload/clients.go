//go:build linux

package remoteload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// clockRounds is how many round trips MeasureClock makes over one ssh
// session; the smallest is kept.
const clockRounds = 8

// ClockOffset is a client's clock against this host's, measured over ssh
// round trips (SSHClient.MeasureClock).
type ClockOffset struct {
	// Offset is the client's clock minus this host's: the client's clock
	// reads T+Offset when this host's reads T.
	Offset time.Duration
	// Uncertainty bounds the error of Offset: half the smallest round
	// trip (the client read its clock somewhere inside it).
	Uncertainty time.Duration
	// Setup is how long the ssh session took to answer its first line
	// (connect, key exchange, authentication, the shell): what every load
	// run's session takes before its worker starts.
	Setup time.Duration
}

// String renders the offset with its uncertainty, e.g. "+1.2ms ± 0.3ms".
func (o ClockOffset) String() string {
	sign := "+"
	if o.Offset < 0 {
		sign = "-"
	}
	return fmt.Sprintf("%s%s ± %s", sign, report.FormatDuration(o.Offset.Abs()), report.FormatDuration(o.Uncertainty))
}

// clockScript runs on the client: one line in, the clock out. A bash
// reads it without starting a process ($EPOCHREALTIME, seconds with
// microseconds), so the round trip, and the uncertainty, is shorter;
// another shell runs GNU date (nanoseconds since the epoch).
const clockScript = `if [ -n "${EPOCHREALTIME:-}" ]; then while read -r _; do echo "$EPOCHREALTIME"; done; else while read -r _; do date +%s%N; done; fi`

// parseClock reads a line clockScript printed: seconds.microseconds
// ($EPOCHREALTIME, "." or "," by the locale) or nanoseconds (date +%s%N).
func parseClock(line string) (time.Time, error) {
	line = strings.TrimSpace(line)
	bad := fmt.Errorf("the client's clock read %q: want seconds.microseconds ($EPOCHREALTIME) or nanoseconds since the epoch (GNU date +%%s%%N)", line)
	if sec, frac, ok := strings.Cut(strings.Replace(line, ",", ".", 1), "."); ok {
		s, err1 := strconv.ParseInt(sec, 10, 64)
		us, err2 := strconv.ParseInt(frac, 10, 64)
		if err1 != nil || err2 != nil || len(frac) != 6 || !digits(sec) || !digits(frac) {
			return time.Time{}, bad
		}
		return time.Unix(s, us*1000), nil
	}
	ns, err := strconv.ParseInt(line, 10, 64)
	if err != nil || ns <= 0 || !digits(line) {
		return time.Time{}, bad
	}
	return time.Unix(0, ns), nil
}

// digits: s is one or more ASCII digits, no sign.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// MeasureClock measures the client's clock offset over one ssh session:
// clockRounds round trips, each a line sent and the client's clock read
// back (clockScript). The round trip with the smallest time is kept: offset = the
// client's clock minus the midpoint of its send and receive here,
// uncertainty = half that round trip.
func (c *SSHClient) MeasureClock(ctx context.Context) (ClockOffset, error) {
	ctx, cancel := context.WithTimeout(ctx, sshTimeout)
	defer cancel()
	argv := c.sshArgs(clockScript)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return ClockOffset{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return ClockOffset{}, err
	}
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return ClockOffset{}, fmt.Errorf("%s: measure its clock: %w", c.where(), err)
	}
	lines := bufio.NewReader(stdout)
	round := func() (time.Time, time.Time, time.Time, error) {
		t0 := time.Now()
		if _, err := io.WriteString(stdin, "\n"); err != nil {
			return t0, t0, t0, err
		}
		line, err := lines.ReadString('\n')
		t1 := time.Now()
		if err != nil {
			return t0, t1, t1, err
		}
		remote, err := parseClock(line)
		return t0, t1, remote, err
	}
	var best ClockOffset
	bestRTT := time.Duration(-1)
	for i := 0; i <= clockRounds && err == nil; i++ {
		var t0, t1, remote time.Time
		t0, t1, remote, err = round()
		if err != nil {
			break
		}
		if i == 0 {
			best.Setup = t1.Sub(began) // the session's start, not a round trip
			continue
		}
		rtt := t1.Sub(t0)
		if bestRTT < 0 || rtt < bestRTT {
			bestRTT = rtt
			mid := t0.Add(rtt / 2).Round(0) // wall clock
			best.Offset, best.Uncertainty = remote.Sub(mid), rtt/2
		}
	}
	stdin.Close()
	werr := cmd.Wait()
	if err != nil {
		if werr != nil {
			return ClockOffset{}, c.sshError("measure its clock", werr, stderr.String())
		}
		return ClockOffset{}, fmt.Errorf("%s: measure its clock: %w", c.where(), err)
	}
	return best, nil
}

// Clients are -load-host's client machines, each with its worker in place
// (SSHClient.Setup) and its clock offset measured (MeasureClock). Their Run
// is a loadgen.RunFunc: one client runs each load whole; several run it
// together, one shard each, and their Results are merged
// (loadgen.MergeShards).
type Clients struct {
	Hosts  []*SSHClient
	Clocks []ClockOffset
	// Log, when set, gets one line per sharded load: each shard's
	// responses, window and percentiles, and the merge (ShardLine).
	Log io.Writer
	// late is the lead after a shared start that passed before a
	// client's worker was up: later loads keep it (Lead).
	late time.Duration
}

// startAttempts bounds the tries of a sharded load whose shared start
// passed before a client's worker was up; each doubles the lead.
const startAttempts = 3

// minLead is the least time between planning a sharded load's start and
// that start: every client's ssh session and worker must be up by then.
const minLead = time.Second

// Lead is how far ahead a sharded load's shared start is set: three times
// the slowest client's session set-up, at least minLead.
func (cs *Clients) Lead() time.Duration {
	lead := max(minLead, cs.late)
	for _, c := range cs.Clocks {
		lead = max(lead, 3*c.Setup)
	}
	return lead
}

// startPassed reports whether err is a worker's refusal of a start time
// that passed before it was up (loadgen's Config check).
func startPassed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "loadgen: start time") && strings.Contains(err.Error(), "give a later one")
}

// Shards splits cfg among n clients starting together at start (this
// host's clock), client i's StartAt on its own clock (start + its
// offset). An open model (a rate) runs shard i of n of the one schedule;
// a closed loop (the warm-up) splits the connections (and a request
// count), client i taking one more while the remainder lasts.
func Shards(cfg loadgen.Config, n int, start time.Time, clocks []ClockOffset) ([]loadgen.Config, error) {
	if n < 1 || len(clocks) != n {
		return nil, fmt.Errorf("shard a load: %d clients, %d clock offsets", n, len(clocks))
	}
	open := cfg.Rate > 0 || cfg.Pacer != nil
	if !open && cfg.Connections < n {
		return nil, fmt.Errorf("a closed-loop load on %d connections cannot be split among %d clients: give -connections %d or more", cfg.Connections, n, n)
	}
	out := make([]loadgen.Config, n)
	for i := range out {
		c := cfg
		if open {
			c.Shard, c.Shards = i, n
		} else {
			c.Connections = cfg.Connections / n
			if i < cfg.Connections%n {
				c.Connections++
			}
		}
		if cfg.Requests > 0 {
			c.Requests = cfg.Requests / int64(n)
			if int64(i) < cfg.Requests%int64(n) {
				c.Requests++
			}
		}
		c.StartAt = start.Add(clocks[i].Offset)
		out[i] = c
	}
	return out, nil
}

// Run runs cfg on the clients: whole on one; on several, shard i on
// client i from one shared start, their Results (Start moved to this
// host's clock by each client's offset) merged. A client that fails
// cancels the others; the error names it.
func (cs *Clients) Run(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	n := len(cs.Hosts)
	if n == 0 {
		return nil, errors.New("no load client")
	}
	if n == 1 {
		return cs.Hosts[0].Run(ctx, cfg)
	}
	for attempt := 1; ; attempt++ {
		lead := cs.Lead()
		res, err := cs.runShards(ctx, cfg, lead)
		if !startPassed(err) || attempt == startAttempts || ctx.Err() != nil {
			return res, err
		}
		cs.late = 2 * lead
		if cs.Log != nil {
			fmt.Fprintf(cs.Log, "note: a client's session took longer than the shared start's %s lead to start its worker; running the load again with %s (kept for the next loads)\n",
				report.FormatDuration(lead), report.FormatDuration(cs.late))
		}
	}
}

// runShards runs cfg once on every client, one shard each, from a shared
// start lead from now, and merges their Results.
func (cs *Clients) runShards(ctx context.Context, cfg loadgen.Config, lead time.Duration) (*loadgen.Result, error) {
	n := len(cs.Hosts)
	cfgs, err := Shards(cfg, n, time.Now().Add(lead), cs.Clocks)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make([]*loadgen.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range cs.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Run(ctx, cfgs[i])
			if err != nil {
				errs[i] = err
				cancel(fmt.Errorf("%s failed", c.where()))
				return
			}
			res.Start = res.Start.Add(-cs.Clocks[i].Offset)
			results[i] = res
		}()
	}
	wg.Wait()
	// The first failure, not the cancellations it caused in the others.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	m, err := loadgen.MergeShards(results...)
	if err != nil {
		return nil, fmt.Errorf("merge the loads of %d clients: %w", n, err)
	}
	if cs.Log != nil {
		fmt.Fprintln(cs.Log, ShardLine(cs.Hosts, results, m))
	}
	return m, nil
}

// ShardLine renders one sharded load: each client's responses over its
// measured window with its p50 and p99, then the common window and the
// merge, e.g. "shards: a 1503 responses in 1.500000s (p50 2.1ms p99
// 9.8ms), b ...; common window 1.499000s: 3004 responses, 2004.0 req/s,
// merged p50 2.2ms p99 9.9ms". Percentiles are µs in parentheses too, so
// a reader can check the merge.
func ShardLine(hosts []*SSHClient, shards []*loadgen.Result, m *loadgen.Result) string {
	var b strings.Builder
	b.WriteString("shards:")
	pct := func(r *loadgen.Result) string {
		h := r.Histograms.Latency
		if h == nil || h.TotalCount() == 0 {
			return "no latency"
		}
		return fmt.Sprintf("p50 %dus p99 %dus", h.ValueAtQuantile(50), h.ValueAtQuantile(99))
	}
	for i, r := range shards {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %s %d responses in %.6fs (%s)", sep, hosts[i].Host, r.Requests, r.Elapsed.Seconds(), pct(r))
	}
	fmt.Fprintf(&b, "; common window %.6fs: %d responses, %.3f req/s, merged %s", m.Elapsed.Seconds(), m.Requests, m.AchievedRate, pct(m))
	return b.String()
}

// ParseLoadHosts parses -load-host's comma-separated clients, each
// [USER@]HOST[:PORT], named once.
func ParseLoadHosts(list, config string) ([]*SSHClient, error) {
	var out []*SSHClient
	seen := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("-load-host %q: an empty client in the list: want [USER@]HOST[:PORT],…", list)
		}
		if seen[s] {
			return nil, fmt.Errorf("-load-host %q: %s named twice", list, s)
		}
		seen[s] = true
		c, err := ParseLoadHost(s, config)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
