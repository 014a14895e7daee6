package loadgen

import (
	"context"
	"fmt"
	"math"
)

// StepOptions tune MeasureStep. A nil *StepOptions means the defaults.
type StepOptions struct {
	// Name labels the figures (StepFigures.Name): "baseline", "threads".
	Name string
	// SkipWarmUp measures without warming the server up first. Default
	// false: WarmUp runs before the capacity runs.
	SkipWarmUp bool
	// WarmUp tunes the warm-up; its Run is replaced by Run. Default nil:
	// WarmUp's defaults.
	WarmUp *WarmUpOptions
	// Remeasure, when the warm-up ends unsettled, measures the step again
	// once it has settled: after the capacity runs (which load the server
	// further, as a JIT still compiling needs), WarmUp runs a second time
	// with the same options and, if it settles, the capacity runs are
	// repeated and their figures replace the first ones (the step is then
	// StepFigures.Remeasured, not Unsettled). When the second warm-up does
	// not settle either, the first capacity runs stand and the step is
	// Unsettled. Its worst case costs one more warm-up bound
	// (WarmUpOptions.Max) plus one more set of capacity runs. Ignored
	// with SkipWarmUp. Default false: an unsettled warm-up marks the step
	// Unsettled.
	Remeasure bool
	// Capacity tunes the saturating runs (offered rate, repeats); its Run
	// is replaced by Run. Default nil: MeasureCapacity's defaults.
	Capacity *CapacityOptions
	// LatencyRate is the rate of the latency run, in requests/s: in a
	// study, the same for every step so that latencies compare like for
	// like. Default 0: LatencyShare of this step's capacity (the median).
	LatencyRate float64
	// LatencyShare is the share of the capacity a LatencyRate of 0
	// stands for. Default: DefaultLatencyShare.
	LatencyShare float64
	// PID, when > 0, is the server's process: its CPU use during the
	// latency run is StepFigures.Latency.CPU, read from /proc/PID/stat
	// under Root. Default 0: not sampled.
	PID int
	// CPUs is the number of CPUs the server may run on, the 100 % of its
	// CPU figure. Default 0: the host's CPU count.
	CPUs int
	// Root is the host root holding /proc. Default "": this host.
	Root string
	// Run runs every load of the step: where a worker in another network
	// namespace or on another machine plugs in. Default: Run.
	Run RunFunc
	// OnWarmUp, OnCapacity and OnLatency, when not nil, are called with
	// each phase's outcome as it ends, so a tool can report progress; with
	// Remeasure, OnWarmUp and OnCapacity may be called twice (MeasureStep).
	OnWarmUp   func(*WarmUpResult)
	OnCapacity func(*Capacity)
	OnLatency  func(*Result)
}

// MeasureStep measures one configuration of a server the way a tuning
// study does after each step: a closed-loop warm-up until the rate stops
// climbing (WarmUp), then the capacity as the achieved rate of repeated
// saturating open-model runs (MeasureCapacity), then one open-model run at
// a common rate for the latency (corrected for coordinated omission), while
// the server process's CPU use is sampled. base is the one Config every
// load is derived from: its URL, Connections and Duration (the length of
// each capacity run and of the latency run) apply throughout; MeasureStep
// sets Rate and the warm-up runs' Duration. It returns the step's figures
// with every capacity run (CapacityRuns, for CompareSteps' test), marked
// Unsettled when the warm-up ended at its limit before the server settled
// (the rate still climbing, or with WarmUpOptions.CompilerShare, the JIT
// still compiling), or an error naming the phase that failed.
//
// With StepOptions.Remeasure, a warm-up that ended unsettled is followed,
// after the capacity runs, by a second warm-up and, when that one
// settles, by a second set of capacity runs whose figures the step
// keeps (Remeasured); OnWarmUp and OnCapacity are then called twice, in
// the order the phases run. The latency run runs once, after the capacity
// runs that count.
func MeasureStep(ctx context.Context, base Config, opts *StepOptions) (StepFigures, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return StepFigures{}, err
	}
	base.Pacer, base.Rate = nil, 0
	settled := true
	if !o.SkipWarmUp {
		if settled, err = o.warmUp(ctx, base); err != nil {
			return StepFigures{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	c, err := o.capacity(ctx, base)
	if err != nil {
		return StepFigures{}, err
	}
	remeasured := false
	if !settled && o.Remeasure {
		if settled, err = o.warmUp(ctx, base); err != nil {
			return StepFigures{}, fmt.Errorf("second warm-up: %w", err)
		}
		if settled {
			if c, err = o.capacity(ctx, base); err != nil {
				return StepFigures{}, fmt.Errorf("capacity after the second warm-up: %w", err)
			}
			remeasured = true
		}
	}
	rate := o.LatencyRate
	if rate == 0 {
		rate = math.Round(o.LatencyShare * c.Rate.Median)
	}
	lat := base
	lat.Rate = rate
	var before CPUTimes
	if o.PID > 0 {
		before, _ = ProcessCPU(o.Root, o.PID)
	}
	res, err := o.Run(ctx, lat)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return StepFigures{}, fmt.Errorf("latency at %.0f req/s: %w", rate, err)
	}
	if o.OnLatency != nil {
		o.OnLatency(res)
	}
	f := FiguresOf(o.Name, res)
	f.Load = rate
	if o.PID > 0 && !before.At.IsZero() {
		if after, err := ProcessCPU(o.Root, o.PID); err == nil {
			n := o.CPUs
			if n == 0 {
				if h, err := HostCPU(o.Root); err == nil {
					n = h.CPUs
				}
			}
			f.CPU = useOf(before, after, n).Percent
		}
	}
	return StepFigures{Name: o.Name, Capacity: c.Rate, CapacityRuns: c.Rates(), CapacityErrors: c.Errors, Latency: f,
		Unsettled: !settled, Remeasured: remeasured}, nil
}

// warmUp runs the step's warm-up and passes its outcome to OnWarmUp; it
// reports whether the server settled.
func (o *StepOptions) warmUp(ctx context.Context, base Config) (settled bool, err error) {
	var wo WarmUpOptions
	if o.WarmUp != nil {
		wo = *o.WarmUp
	}
	wo.Run = o.Run
	wu, err := WarmUp(ctx, base, &wo)
	if err != nil {
		return false, err
	}
	if o.OnWarmUp != nil {
		o.OnWarmUp(wu)
	}
	return wu.Settled, nil
}

// capacity runs the step's saturating runs and passes them to OnCapacity.
func (o *StepOptions) capacity(ctx context.Context, base Config) (*Capacity, error) {
	var co CapacityOptions
	if o.Capacity != nil {
		co = *o.Capacity
	}
	co.Run = o.Run
	c, err := MeasureCapacity(ctx, base, &co)
	if err != nil {
		return nil, err
	}
	if o.OnCapacity != nil {
		o.OnCapacity(c)
	}
	return c, nil
}

// withDefaults returns the options with Run and LatencyShare filled in;
// an error for a latency rate or share out of range.
func (opts *StepOptions) withDefaults() (StepOptions, error) {
	var o StepOptions
	if opts != nil {
		o = *opts
	}
	if o.Run == nil {
		o.Run = Run
	}
	if o.LatencyShare == 0 {
		o.LatencyShare = DefaultLatencyShare
	}
	if o.LatencyRate < 0 || math.IsNaN(o.LatencyRate) || math.IsInf(o.LatencyRate, 0) {
		return o, fmt.Errorf("loadgen: step latency rate %g: want requests/s > 0, or 0 for a share of the capacity", o.LatencyRate)
	}
	if o.LatencyShare <= 0 || o.LatencyShare > 1 || math.IsNaN(o.LatencyShare) {
		return o, fmt.Errorf("loadgen: step latency share %g: want a share of the capacity in (0, 1]", o.LatencyShare)
	}
	return o, nil
}
