package loadgen

import (
	"fmt"
	"math"
	"time"

	"github.com/nettune/nettune/loadgen/internal/format"
)

// A Pacer decides when each request of an open-model run is due. It is a
// pure function of the request's sequence number: Due(n) is the offset from
// the start of the run at which request n (counting from 0, over all
// connections) should be sent, and Hits(t) is how many requests are due by
// elapsed time t. Implementations must be monotonic (Due(n+1) >= Due(n))
// and consistent (Hits(Due(n)) > n), and must not sleep or read the clock,
// so that a schedule can be tested without waiting.
type Pacer interface {
	// Due returns the intended send time of request n, as an offset from
	// the start of the run.
	Due(n uint64) time.Duration
	// Hits returns the number of requests due in [0, elapsed].
	Hits(elapsed time.Duration) uint64
	// Rate returns the instantaneous rate in requests per second at elapsed.
	Rate(elapsed time.Duration) float64
	// String describes the pacer, e.g. "constant 15000/s".
	String() string
}

// ConstantPacer sends PerSecond requests per second, evenly spaced, as
// wrk2's -R.
type ConstantPacer struct {
	PerSecond float64 // requests per second; must be > 0
}

// Constant returns a Pacer that sends rate requests per second.
func Constant(rate float64) ConstantPacer { return ConstantPacer{PerSecond: rate} }

// Due returns n/rate.
func (p ConstantPacer) Due(n uint64) time.Duration {
	return format.Seconds(float64(n) / p.PerSecond)
}

// Hits returns the number of requests due by elapsed: floor(elapsed*rate)+1.
func (p ConstantPacer) Hits(elapsed time.Duration) uint64 {
	if elapsed < 0 {
		return 0
	}
	return uint64(math.Floor(elapsed.Seconds()*p.PerSecond+1e-6)) + 1
}

// Rate returns the constant rate.
func (p ConstantPacer) Rate(time.Duration) float64 { return p.PerSecond }

// String describes the pacer.
func (p ConstantPacer) String() string { return fmt.Sprintf("constant %g/s", p.PerSecond) }

// RampPacer raises the rate linearly from From to To requests per second
// over Over, then stays at To.
type RampPacer struct {
	From, To float64       // requests per second at the start and the end of the ramp; >= 0, not both 0
	Over     time.Duration // length of the ramp; > 0
}

// Ramp returns a Pacer whose rate climbs linearly from from to to over the
// given duration and then stays at to.
func Ramp(from, to float64, over time.Duration) RampPacer {
	return RampPacer{From: from, To: to, Over: over}
}

// hits is the integral of the rate from 0 to t seconds: the number of
// requests due by t, as a real number.
func (p RampPacer) area(t float64) float64 {
	d := p.Over.Seconds()
	if t <= d {
		return p.From*t + (p.To-p.From)*t*t/(2*d)
	}
	return (p.From+p.To)*d/2 + p.To*(t-d)
}

// Due inverts the integral of the rate: the time by which n requests have
// been due.
func (p RampPacer) Due(n uint64) time.Duration {
	x := float64(n)
	if n == 0 {
		return 0
	}
	d := p.Over.Seconds()
	ramp := (p.From + p.To) * d / 2
	if x >= ramp {
		if p.To <= 0 {
			return time.Duration(math.MaxInt64)
		}
		return format.Seconds(d + (x-ramp)/p.To)
	}
	a := (p.To - p.From) / (2 * d)
	if math.Abs(a) < 1e-12 {
		return format.Seconds(x / p.From)
	}
	// a t² + From t − x = 0, the positive root, written to avoid cancellation.
	disc := p.From*p.From + 4*a*x
	if disc < 0 {
		disc = 0
	}
	t := 2 * x / (p.From + math.Sqrt(disc))
	return format.Seconds(t)
}

// Hits returns the number of requests due by elapsed.
func (p RampPacer) Hits(elapsed time.Duration) uint64 {
	if elapsed < 0 {
		return 0
	}
	return uint64(math.Floor(p.area(elapsed.Seconds())+1e-6)) + 1
}

// Rate returns the rate at elapsed.
func (p RampPacer) Rate(elapsed time.Duration) float64 {
	if elapsed >= p.Over {
		return p.To
	}
	return p.From + (p.To-p.From)*elapsed.Seconds()/p.Over.Seconds()
}

// String describes the pacer.
func (p RampPacer) String() string {
	return fmt.Sprintf("ramp %g/s to %g/s over %s", p.From, p.To, p.Over)
}

// Step is one level of a StepPacer: Rate requests per second for For.
type Step struct {
	Rate float64       // requests per second; >= 0
	For  time.Duration // how long the level lasts; > 0 (the last step lasts forever)
}

// StepPacer holds each rate for its duration in turn, as a load sweep does;
// the last step's rate continues after its duration.
type StepPacer []Step

// Steps returns a Pacer that runs the given levels in order.
func Steps(steps ...Step) StepPacer { return StepPacer(steps) }

// Due returns the time by which n requests have been due.
func (p StepPacer) Due(n uint64) time.Duration {
	x := float64(n)
	var t, done float64
	for i, s := range p {
		d := s.For.Seconds()
		in := s.Rate * d
		if x < done+in || i == len(p)-1 {
			if s.Rate <= 0 {
				return time.Duration(math.MaxInt64)
			}
			return format.Seconds(t + (x-done)/s.Rate)
		}
		done += in
		t += d
	}
	return time.Duration(math.MaxInt64)
}

// Hits returns the number of requests due by elapsed.
func (p StepPacer) Hits(elapsed time.Duration) uint64 {
	if elapsed < 0 || len(p) == 0 {
		return 0
	}
	e := elapsed.Seconds()
	var t, done float64
	for i, s := range p {
		d := s.For.Seconds()
		if e < t+d || i == len(p)-1 {
			return uint64(math.Floor(done+s.Rate*(e-t)+1e-6)) + 1
		}
		done += s.Rate * d
		t += d
	}
	return uint64(done) + 1
}

// Rate returns the rate of the step in force at elapsed.
func (p StepPacer) Rate(elapsed time.Duration) float64 {
	var t time.Duration
	for i, s := range p {
		if elapsed < t+s.For || i == len(p)-1 {
			return s.Rate
		}
		t += s.For
	}
	return 0
}

// String describes the pacer.
func (p StepPacer) String() string {
	s := "steps"
	for _, st := range p {
		s += fmt.Sprintf(" %g/s×%s", st.Rate, st.For)
	}
	return s
}

func validatePacer(p Pacer) error {
	switch p := p.(type) {
	case ConstantPacer:
		if !(p.PerSecond > 0) || math.IsInf(p.PerSecond, 0) {
			return fmt.Errorf("loadgen: constant rate %g: want a finite rate > 0 requests/s", p.PerSecond)
		}
	case RampPacer:
		if p.Over <= 0 || p.From < 0 || p.To < 0 || (p.From == 0 && p.To == 0) {
			return fmt.Errorf("loadgen: ramp %g/s to %g/s over %s: want rates >= 0, not both 0, over a duration > 0", p.From, p.To, p.Over)
		}
	case ShardPacer:
		if p.Of == nil || p.Shards < 1 || p.Shard < 0 || p.Shard >= p.Shards {
			return fmt.Errorf("loadgen: shard %d/%d: want shard i of n with 0 <= i < n over a schedule", p.Shard, p.Shards)
		}
		return validatePacer(p.Of)
	case StepPacer:
		if len(p) == 0 {
			return fmt.Errorf("loadgen: steps: want at least one step")
		}
		for i, s := range p {
			if s.Rate <= 0 || s.For <= 0 {
				return fmt.Errorf("loadgen: step %d (%g/s for %s): want a rate > 0 and a duration > 0", i, s.Rate, s.For)
			}
		}
	}
	return nil
}

// ShardPacer is shard Shard of Shards of another schedule: it sends
// requests Shard, Shard+Shards, Shard+2·Shards, … of Of. At a constant
// rate R that is R/Shards per shard with send times offset by Shard/R, so
// Shards generators started at the same instant together send exactly
// Of's evenly spaced schedule.
type ShardPacer struct {
	Of            Pacer
	Shard, Shards int // 0 <= Shard < Shards
}

// Shard returns shard i of n of schedule p.
func Shard(p Pacer, i, n int) ShardPacer { return ShardPacer{Of: p, Shard: i, Shards: n} }

// Due returns the intended time of the whole schedule's request
// n·Shards + Shard.
func (p ShardPacer) Due(n uint64) time.Duration {
	return p.Of.Due(n*uint64(p.Shards) + uint64(p.Shard))
}

// Hits returns how many of this shard's requests are due by elapsed: the
// whole schedule's requests numbered Shard mod Shards among its Hits.
func (p ShardPacer) Hits(elapsed time.Duration) uint64 {
	h, i, n := p.Of.Hits(elapsed), uint64(p.Shard), uint64(p.Shards)
	if h <= i {
		return 0
	}
	return (h - i + n - 1) / n
}

// Rate returns the shard's share of the whole rate.
func (p ShardPacer) Rate(elapsed time.Duration) float64 {
	return p.Of.Rate(elapsed) / float64(p.Shards)
}

// String describes the shard, e.g. "shard 1/3 of constant 3000/s".
func (p ShardPacer) String() string {
	return fmt.Sprintf("shard %d/%d of %s", p.Shard, p.Shards, p.Of)
}

// sendPolicy is the default send batching of an open-model event loop
// (Config.Slack 0): how late the loop may send a due request so that it
// leaves in one wake-up with the requests due soon after it. A wake-up is
// the dearest part of a request on a virtual machine (a context switch and
// a timer, ~10 µs of CPU here), so batching saves CPU; but every µs of
// window is lag added to the corrected latency. The window therefore
// follows the loop's load: none while the loop is nearly idle (each send
// then leaves on time, and the corrected latency is the server's), widening
// linearly as the loop's CPU share grows from Idle to Busy, and never wider
// than Fraction of a connection's send interval (Connections/Rate: a
// request is never held for more than that fraction of the time until the
// same connection's next one) nor than Max.
type sendPolicy struct {
	Max      time.Duration // the widest window
	Fraction float64       // of a connection's send interval
	Idle     float64       // loop load (CPU share, 0-1) up to which sends leave on time
	Busy     float64       // loop load at which the window is widest
}

// defaultSendPolicy is the policy of Config.Slack 0. Measured on the
// development VM (2 vCPUs, nginx on the other CPU, see PERF.md): a loop
// sending each request on time at 7500/s costs ~22 % of a CPU, batched
// within 1 ms ~8 %; at the CO test's 500/s per loop ~1 %.
var defaultSendPolicy = sendPolicy{Max: defaultSendWindow, Fraction: 0.25, Idle: 0.02, Busy: 0.10}

// window returns the send window for a loop at the given load (its share
// of one CPU over the last tick, smoothed) whose connections each send one
// request every interval.
func (p sendPolicy) window(load float64, interval time.Duration) time.Duration {
	if !(load > p.Idle) || interval <= 0 {
		return 0
	}
	w := p.Max
	if c := time.Duration(float64(interval) * p.Fraction); c < w {
		w = c
	}
	if p.Busy > p.Idle && load < p.Busy {
		w = time.Duration(float64(w) * (load - p.Idle) / (p.Busy - p.Idle))
	}
	return w
}

// smoothLoad folds a new sample of a loop's load into its running value
// (an exponential average over a few ticks), so one tick's hiccup (a
// preemption, a burst of reconnects) neither opens nor closes the window at
// once, and the window's own effect on the load (batching costs less)
// settles instead of swinging tick by tick.
func smoothLoad(prev, sample float64) float64 {
	if sample < 0 || math.IsNaN(sample) {
		return prev
	}
	return prev + (sample-prev)/4
}
