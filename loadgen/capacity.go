package loadgen

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nettune/nettune/loadgen/stats"
)

// RunFunc runs one load and returns what it measured; Run is one. A tool
// passes its own to send every load of a measurement through one place
// (to pin the generator to CPUs, log each run, or run it elsewhere).
type RunFunc func(ctx context.Context, cfg Config) (*Result, error)

// saturatedBelow is the fraction of its offered rate under which a run
// did not keep up: its server was saturated.
const saturatedBelow = 0.9

// CapacityOptions tune MeasureCapacity. A nil *CapacityOptions means the
// defaults.
type CapacityOptions struct {
	// Rate is the offered rate of each run, in requests/s; it must be far
	// above the server's capacity. Default: DefaultCapacityRate.
	Rate float64
	// Repeat is the number of runs. Default: 1.
	Repeat int
	// Run runs each load. Default: Run.
	Run RunFunc
}

// Capacity is what a server sustained under a saturating open-model load.
type Capacity struct {
	// Rate summarises the runs' achieved rates (Result.AchievedRate):
	// responses completed in each run's measured window over the window
	// (Config.Duration). Nothing is sent after the window, and what
	// completes in the drain that follows is not counted.
	Rate stats.Spread
	// Saturated reports whether every run completed less than 90% of its
	// offered rate: only then is Rate the server's capacity. Otherwise the
	// server kept up with the offered rate and Rate is a lower bound.
	Saturated bool
	// Errors counts the runs' failed requests (socket errors and
	// responses outside 200-399, which Rate includes as wrk does).
	Errors int64
	// Runs are the runs' results, in order.
	Runs []*Result
}

// MeasureCapacity measures the highest rate a server sustains, as wrk2
// run far above it does (-R500000): Repeat open-model runs of cfg at
// Rate, each for cfg.Duration, one after the other. cfg's Rate and Pacer
// are replaced; its Warmup must be 0, because a saturated open-model run
// never catches up with its schedule and so records no request scheduled
// during a warm-up (warm the server up with WarmUp first). Each run's
// figure is the responses completed in its cfg.Duration window over that
// window: the backlog due in the window is not sent after it, and what
// completes in the drain is left out (Result.Drain). It returns an error
// when a run fails or completes no request, or when ctx ends.
func MeasureCapacity(ctx context.Context, cfg Config, opts *CapacityOptions) (*Capacity, error) {
	o := CapacityOptions{Rate: DefaultCapacityRate, Repeat: 1, Run: Run}
	if opts != nil {
		if opts.Rate != 0 {
			o.Rate = opts.Rate
		}
		if opts.Repeat != 0 {
			o.Repeat = opts.Repeat
		}
		if opts.Run != nil {
			o.Run = opts.Run
		}
	}
	switch {
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return nil, fmt.Errorf("loadgen: capacity rate %g: want > 0 requests/s, far above the server's capacity", o.Rate)
	case o.Repeat < 0:
		return nil, fmt.Errorf("loadgen: capacity repeat %d: want >= 1 runs", o.Repeat)
	case cfg.Warmup != 0:
		return nil, fmt.Errorf("loadgen: capacity: Config.Warmup %s: want 0 (a saturated open-model run records nothing scheduled in its warm-up; use WarmUp before)", cfg.Warmup)
	}
	cfg.Rate, cfg.Pacer = o.Rate, nil
	c := &Capacity{Saturated: true}
	rates := make([]float64, 0, o.Repeat)
	for i := 1; i <= o.Repeat; i++ {
		res, err := o.Run(ctx, cfg)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("loadgen: capacity run %d of %d: %w", i, o.Repeat, err)
		}
		if res.Requests == 0 {
			return nil, fmt.Errorf("loadgen: capacity run %d of %d against %s: no request completed in %s (%d errors)",
				i, o.Repeat, cfg.URL, res.Elapsed.Round(time.Millisecond), res.Errors.Socket()+res.Errors.Status)
		}
		c.Runs = append(c.Runs, res)
		rates = append(rates, res.AchievedRate)
		c.Errors += int64(res.Errors.Socket() + res.Errors.Status)
		if res.AchievedRate >= saturatedBelow*res.OfferedRate {
			c.Saturated = false
		}
	}
	c.Rate = stats.SpreadOf(rates)
	return c, nil
}

// Rates returns the runs' achieved rates in order: what
// StepFigures.CapacityRuns carries to CompareSteps' test.
func (c *Capacity) Rates() []float64 {
	out := make([]float64, len(c.Runs))
	for i, r := range c.Runs {
		out[i] = r.AchievedRate
	}
	return out
}

// WarmUpOptions tune WarmUp. A nil *WarmUpOptions means the defaults.
type WarmUpOptions struct {
	// Interval is the duration of each warm-up run. Default:
	// DefaultWarmUpInterval.
	Interval time.Duration
	// Max bounds the warm-up's total load time: no run starts once the
	// runs so far add up to Max, and the last one is shortened to fit.
	// Default: DefaultWarmUpMax.
	Max time.Duration
	// Tolerance is the spread of the last Runs achieved rates, the
	// highest over the lowest in percent, within which the rate has
	// stopped climbing. Default: DefaultWarmUpTolerance.
	Tolerance float64
	// Runs is the number of successive runs whose rates must agree; more
	// than 2 carries a warm-up past a short plateau (a JIT compiles in
	// tiers). Default: DefaultWarmUpRuns.
	Runs int
	// Run runs each load. Default: Run.
	Run RunFunc
	// CompilerShare, when set, returns the share (0 to 1) of the server's
	// CPU time that its JIT compiler threads used since the previous call
	// (tomcatconf's JITMeter.CompilerShare reads it from /proc for a
	// HotSpot JVM). WarmUp calls it once before the first run, to start
	// the first interval, and after each run; the warm-up is then settled
	// only when the rate has stopped climbing and the last run's share is
	// below MaxCompilerShare: a JVM pinned to one CPU compiles on that CPU,
	// and its rate can stay flat for seconds while the compilers are
	// still busy. Default: nil (the rate alone decides).
	CompilerShare func() (float64, error)
	// MaxCompilerShare is the share below which the compilers count as
	// done. Default: DefaultMaxCompilerShare (2 %).
	MaxCompilerShare float64
	// OnRun, when set, is called after each run with what it measured,
	// so that a caller can print the warm-up as it goes. Default: nil.
	OnRun func(WarmUpRun)
}

// WarmUpRun is one run of a warm-up.
type WarmUpRun struct {
	// Index counts the runs from 1.
	Index int
	// Duration is the run's length (Interval, the last one cut to fit
	// Max).
	Duration time.Duration
	// Rate is the run's achieved rate, in requests/s.
	Rate float64
	// CompilerShare is the share of the server's CPU its JIT compiler
	// threads used over the run (0 to 1), when JIT is true.
	CompilerShare float64
	// JIT reports whether CompilerShare was measured
	// (WarmUpOptions.CompilerShare set).
	JIT bool
	// Stable reports whether the rate had stopped climbing with this run
	// (the last Runs rates within Tolerance); Settled, whether the
	// compilers were also below MaxCompilerShare (or not measured).
	Stable, Settled bool
}

// String formats the run for a warm-up line: "run 3 (2s): 23400 req/s,
// JIT compilers 15.0 % of the server's CPU", then ", rate steady" or
// ", settled" when it was.
func (r WarmUpRun) String() string {
	s := fmt.Sprintf("run %d (%s): %.0f req/s", r.Index, r.Duration, r.Rate)
	if r.JIT {
		s += fmt.Sprintf(", JIT compilers %.1f %% of the server's CPU", 100*r.CompilerShare)
	}
	switch {
	case r.Settled:
		s += ", settled"
	case r.Stable:
		s += ", rate steady"
	}
	return s
}

// WarmUpResult is what a warm-up did.
type WarmUpResult struct {
	// Rates are the runs' achieved rates (requests/s), in order.
	Rates []float64
	// Runs are the runs, in order, with their compiler shares.
	Runs []WarmUpRun
	// Loaded is the sum of the runs' durations (what Max bounds).
	Loaded time.Duration
	// Stable reports whether the last Runs rates were within Tolerance of
	// each other; false when Max ended the warm-up first.
	Stable bool
	// Settled reports whether the warm-up ended settled: Stable, and,
	// when the compiler share is measured, the last run's share below
	// MaxCompilerShare. False when Max ended it first: the step is then
	// measured unsettled (StepFigures.Unsettled).
	Settled bool
}

// WarmUp loads a server with cfg in successive runs of Interval until the
// achieved rates of the last Runs runs are within Tolerance percent of
// each other (the rate has stopped climbing, as a JIT compiler's does
// once the hot code is compiled) and, with CompilerShare set, the JIT
// compiler threads used less than MaxCompilerShare of the server's CPU
// over the last run; or until Max of load has run. A closed loop (Rate 0)
// loads the server as hard as a saturating open-model run without
// leaving a backlog to send. cfg's Duration is replaced; its Warmup must
// be 0. It returns what ran so far with an error when a run or
// CompilerShare fails, or ctx ends.
func WarmUp(ctx context.Context, cfg Config, opts *WarmUpOptions) (*WarmUpResult, error) {
	o := WarmUpOptions{Interval: DefaultWarmUpInterval, Max: DefaultWarmUpMax, Tolerance: DefaultWarmUpTolerance,
		Runs: DefaultWarmUpRuns, Run: Run, MaxCompilerShare: DefaultMaxCompilerShare}
	if opts != nil {
		if opts.Interval != 0 {
			o.Interval = opts.Interval
		}
		if opts.Max != 0 {
			o.Max = opts.Max
		}
		if opts.Tolerance != 0 {
			o.Tolerance = opts.Tolerance
		}
		if opts.Runs != 0 {
			o.Runs = opts.Runs
		}
		if opts.Run != nil {
			o.Run = opts.Run
		}
		if opts.MaxCompilerShare != 0 {
			o.MaxCompilerShare = opts.MaxCompilerShare
		}
		o.CompilerShare, o.OnRun = opts.CompilerShare, opts.OnRun
	}
	switch {
	case o.Runs < 2:
		return nil, fmt.Errorf("loadgen: warm-up runs %d: want 2 or more to compare", o.Runs)
	case o.Interval < 0 || o.Max < 0:
		return nil, fmt.Errorf("loadgen: warm-up interval %s, max %s: want > 0", o.Interval, o.Max)
	case o.Tolerance < 0 || math.IsNaN(o.Tolerance):
		return nil, fmt.Errorf("loadgen: warm-up tolerance %g%%: want > 0", o.Tolerance)
	case !(o.MaxCompilerShare > 0 && o.MaxCompilerShare <= 1):
		return nil, fmt.Errorf("loadgen: warm-up compiler share %g: want a fraction in (0, 1], e.g. 0.02", o.MaxCompilerShare)
	case cfg.Warmup != 0:
		return nil, fmt.Errorf("loadgen: warm-up: Config.Warmup %s: want 0 (WarmUp runs the warm-up)", cfg.Warmup)
	}
	w := &WarmUpResult{}
	if o.CompilerShare != nil {
		if _, err := o.CompilerShare(); err != nil {
			return w, fmt.Errorf("loadgen: warm-up: compiler share before run 1: %w", err)
		}
	}
	for w.Loaded < o.Max {
		cfg.Duration = min(o.Interval, o.Max-w.Loaded)
		res, err := o.Run(ctx, cfg)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			return w, fmt.Errorf("loadgen: warm-up run %d: %w", len(w.Rates)+1, err)
		}
		run := WarmUpRun{Index: len(w.Runs) + 1, Duration: cfg.Duration, Rate: res.AchievedRate}
		if o.CompilerShare != nil {
			share, err := o.CompilerShare()
			if err != nil {
				return w, fmt.Errorf("loadgen: warm-up run %d: compiler share: %w", run.Index, err)
			}
			run.CompilerShare, run.JIT = share, true
		}
		w.Loaded += cfg.Duration
		w.Rates = append(w.Rates, res.AchievedRate)
		run.Stable = steady(w.Rates, o.Runs, o.Tolerance)
		run.Settled = run.Stable && (!run.JIT || run.CompilerShare < o.MaxCompilerShare)
		w.Runs = append(w.Runs, run)
		w.Stable, w.Settled = run.Stable, run.Settled
		if o.OnRun != nil {
			o.OnRun(run)
		}
		if w.Settled {
			break
		}
	}
	return w, nil
}

// steady reports whether the last n rates are within tol percent of each
// other (the highest over the lowest); a rate of 0 (nothing completed
// yet) is not steady.
func steady(rates []float64, n int, tol float64) bool {
	if len(rates) < n {
		return false
	}
	last := rates[len(rates)-n:]
	lo, hi := slices.Min(last), slices.Max(last)
	return lo > 0 && change(lo, hi) <= tol
}
