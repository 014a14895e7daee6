//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
)

// The load sizing (Options.Connections 0): the count starts from Tomcat's
// CPUs at the guide's ratio, wrk2 -c1280 on its 192-CPU server, and the
// baseline doubles it while the capacity grows.
const (
	// GuideConnections and GuideCPUs are the guide's ratio: 1280
	// connections for 192 CPUs, 6⅔ a CPU.
	GuideConnections = 1280
	GuideCPUs        = 192
	// SizingDoublings bounds the doubling: the largest count tried is
	// 2^5 = 32 times the start (1728 for the guide's 8 CPUs: its own 1280
	// lies within), unless MaxSizedConnections caps it.
	SizingDoublings = 5
	// MaxSizedConnections caps the sizing: Tomcat's default maxConnections
	// (NIO), beyond which connections wait in the accept queue.
	MaxSizedConnections = 8192
)

// StartConnections is the count the sizing starts from for a server on
// cpus CPUs loaded by clients generators (-load-host's; 1 for a local
// load): the guide's 1280 connections per 192 CPUs, rounded up, and at
// least one per client (each takes a share).
func StartConnections(cpus, clients int) int {
	n := (max(cpus, 1)*GuideConnections + GuideCPUs - 1) / GuideCPUs
	return max(n, clients, 1)
}

// ConnectionsBound is the most the sizing tries from start: start ×
// 2^SizingDoublings, capped at MaxSizedConnections, never below start.
func ConnectionsBound(start int) int {
	return max(start, min(start<<SizingDoublings, MaxSizedConnections))
}

// SizeTry is one connection count the sizing measured.
type SizeTry struct {
	Connections int
	// Capacity is the median of Runs, the capacity runs' achieved rates.
	Capacity float64
	Runs     []float64
	// Growth is the change against the count before, judged as the
	// steps' uplifts are (stats.UpliftOfRuns); nil for the first.
	Growth *stats.Uplift
	// KeptUp: a run kept up with -capacity-rate, so the offered rate,
	// not the connections, bounded it.
	KeptUp bool
	// LoadBound, when set, says the load generator limited a run
	// (loadgen.LoadBound).
	LoadBound string
}

// LoadSizing is what the sizing found: the count every load of the study
// then uses, whether the server saturated, why the doubling stopped, and
// every count tried.
type LoadSizing struct {
	Connections int
	Saturated   bool
	// Why says why the doubling stopped.
	Why string
	// Start and Bound are the first and the largest count allowed
	// (StartConnections, ConnectionsBound).
	Start int
	Bound int
	Tried []SizeTry
}

// grows reports whether u, the change from one count to its double, is a
// growth beyond the noise band: a gain of the U test, or, with too few
// runs for the test to answer, a median that rose by more than the band.
func grows(u stats.Uplift) bool {
	return u.Verdict == stats.VerdictGain || (u.Verdict == stats.VerdictTooFewRuns && u.Percent > u.NoiseBand)
}

// SizeDecision decides, from the counts tried so far (in order, each the
// double of the one before, or the bound), whether to try another: it
// returns the next count, or 0 and the sizing's outcome. It judges the
// last count's Growth on its runs against the count before's (filled in
// the returned Tried) with uo's thresholds, and stops:
//
//   - when the load generator limited the last runs: more connections
//     would load the generator, not Tomcat; the count before is kept
//     (the last when it is the first), unsaturated;
//   - when a run kept up with the offered rate: unsaturated;
//   - when the capacity fell (a loss): the count before saturated it;
//   - when it did not grow beyond the noise band: saturated, the last
//     count kept (it is past the knee; the one before may lie just under
//     it);
//   - at the bound, still growing: unsaturated.
//
// It returns an error for no count tried, or runs the test refuses.
func SizeDecision(tried []SizeTry, bound int, uo *stats.UpliftOptions) (int, LoadSizing, error) {
	n := len(tried)
	if n == 0 {
		return 0, LoadSizing{}, errors.New("load sizing: no connection count tried")
	}
	s := LoadSizing{Start: tried[0].Connections, Bound: bound, Tried: append([]SizeTry(nil), tried...)}
	last := &s.Tried[n-1]
	if n > 1 && last.Growth == nil {
		u, err := stats.UpliftOfRuns(s.Tried[n-2].Runs, last.Runs, uo)
		if err != nil {
			return 0, s, fmt.Errorf("load sizing: %d against %d connections: %w", last.Connections, s.Tried[n-2].Connections, err)
		}
		last.Growth = &u
	}
	stop := func(conns int, saturated bool, why string, a ...any) (int, LoadSizing, error) {
		s.Connections, s.Saturated, s.Why = conns, saturated, fmt.Sprintf(why, a...)
		return 0, s, nil
	}
	switch {
	case last.LoadBound != "":
		keep := tried[max(n-2, 0)].Connections
		return stop(keep, false, "the load generator limited the runs at %d connections (%s): more would load the generator, not Tomcat", last.Connections, last.LoadBound)
	case last.KeptUp:
		return stop(last.Connections, false, "a run at %d connections kept up with the offered rate: raise -capacity-rate", last.Connections)
	case n > 1 && last.Growth.Verdict == stats.VerdictLoss:
		prev := tried[n-2].Connections
		return stop(prev, true, "doubling %d to %d connections lowered the capacity (%s): %d saturate the server", prev, last.Connections, last.Growth, prev)
	case n > 1 && !grows(*last.Growth):
		return stop(last.Connections, true, "doubling %d to %d connections did not raise the capacity beyond the %g %% noise band (%s): the server saturated",
			tried[n-2].Connections, last.Connections, last.Growth.NoiseBand, last.Growth)
	case last.Connections >= bound && n == 1:
		return stop(last.Connections, false, "%d connections is the bound: nothing to double to, saturation not confirmed", last.Connections)
	case last.Connections >= bound:
		return stop(last.Connections, false, "%d connections is the bound, the capacity still growing (%s): the server may not be saturated", last.Connections, last.Growth)
	}
	return min(2*last.Connections, bound), s, nil
}

// sizingRuns is the capacity runs measured at each count: -repeat, but no
// more than the fewest with which the U test can call a growth
// significant at alpha (stats.MinRuns).
func sizingRuns(repeat int, alpha float64) int {
	return max(1, min(repeat, stats.MinRuns(alpha)))
}

// sizeLoad sizes the load to the server before the baseline is measured
// (-connections 0): from StartConnections of Tomcat's CPUs, after a
// warm-up, it measures the capacity at each count (sizingRuns runs) and
// doubles while SizeDecision says so. Every later load of the study uses
// the count chosen (r.o.Connections); r.sizing records the sizing.
func (r *run) sizeLoad(ctx context.Context, target string, pid int) error {
	cpus := r.place.Tomcat.Len()
	if cpus == 0 {
		cpus = r.h.CPUs.N
	}
	clients := 1
	if r.clients != nil {
		clients = len(r.clients.Hosts)
	}
	start := StartConnections(cpus, clients)
	bound := ConnectionsBound(start)
	runs := sizingRuns(r.o.Repeat, r.o.Alpha)
	fmt.Fprintf(r.log, "== size the load: from %d connections for Tomcat's %d CPU(s) (the guide's %d for %d), doubled while the capacity grows beyond the noise band, up to %d; %d capacity runs each ==\n",
		start, cpus, GuideConnections, GuideCPUs, bound, runs)
	r.o.Connections = start
	if r.o.WarmUp > 0 {
		wo, report := r.warmUpOptions(pid)
		wo.Run = r.runLoad
		wu, err := loadgen.WarmUp(ctx, r.o.LoadConfig(target), wo)
		if err != nil {
			return fmt.Errorf("load sizing: warm-up: %w", err)
		}
		report("load sizing", "warm-up", wu)
	}
	uo := &stats.UpliftOptions{Alpha: r.o.Alpha}
	var tried []SizeTry
	for n := start; ; {
		r.o.Connections = n
		try, err := r.sizeTry(ctx, target, runs)
		if errors.Is(err, loadgen.ErrOpenFiles) && len(tried) > 0 {
			prev := tried[len(tried)-1].Connections
			r.sizing = &LoadSizing{Connections: prev, Start: start, Bound: bound, Tried: tried,
				Why: fmt.Sprintf("%d connections need more open files than this process may have (%v): kept %d", n, err, prev)}
			r.o.Connections = prev
			fmt.Fprintf(r.log, "load: %s\n", r.sizing.Text())
			return nil
		}
		if err != nil {
			return err
		}
		next, s, err := SizeDecision(append(tried, try), bound, uo)
		if err != nil {
			return err
		}
		tried = s.Tried
		last := tried[len(tried)-1]
		fmt.Fprintf(r.log, "load sizing: %d connections: %s req/s", n, joinRates(last.Runs))
		if last.Growth != nil {
			fmt.Fprintf(r.log, ", %s against %d", last.Growth, tried[len(tried)-2].Connections)
		}
		fmt.Fprintln(r.log)
		if next == 0 {
			r.sizing, r.o.Connections = &s, s.Connections
			fmt.Fprintf(r.log, "load: %s\n", s.Text())
			return nil
		}
		n = next
	}
}

// sizeTry measures the capacity at r.o.Connections, runs runs.
func (r *run) sizeTry(ctx context.Context, target string, runs int) (SizeTry, error) {
	c, err := loadgen.MeasureCapacity(ctx, r.o.LoadConfig(target), &loadgen.CapacityOptions{Rate: r.o.CapacityRate, Repeat: runs, Run: r.runLoad})
	if err != nil {
		return SizeTry{}, fmt.Errorf("load sizing at %d connections: %w", r.o.Connections, err)
	}
	try := SizeTry{Connections: r.o.Connections, Capacity: c.Rate.Median, Runs: c.Rates(), KeptUp: !c.Saturated}
	for i, res := range c.Runs {
		if why := loadgen.LoadBound(res); why != "" {
			try.LoadBound = fmt.Sprintf("%s (capacity run %d)", why, i+1)
			break
		}
	}
	return try, nil
}

// Text is the sizing's outcome in a line: "28 connections, saturated:
// doubling 14 to 28 …".
func (s LoadSizing) Text() string {
	state := "saturated"
	if !s.Saturated {
		state = "not confirmed saturated"
	}
	return fmt.Sprintf("%d connections, %s: %s", s.Connections, state, s.Why)
}
