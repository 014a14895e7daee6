package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nettune/nettune/internal/hostfs"
)

// SweepConfig describes a load sweep: the same workload run at increasing
// load levels, as the IBM tuning-variations study runs 20, 40, 60 and 80
// users.
type SweepConfig struct {
	// Base is the workload; its Connections (or Rate), Warmup and Duration
	// are replaced at each level.
	Base Config
	// Connections are closed-model levels (users), or Rates open-model
	// levels (requests/s, with Base.Connections connections); give one of
	// the two, in increasing order.
	Connections []int
	Rates       []float64
	// Warmup and Duration apply to every level. Default: Base's.
	Warmup, Duration time.Duration
	// PID, when not 0, is the server process (e.g. Tomcat's JVM) whose CPU
	// use is sampled from /proc/PID/stat; its utilisation then gives the
	// level's CPU and ITR, else the host's does.
	PID int
	// Root is the directory standing for the host's "/", whose /proc is
	// sampled. Default: "" — the running host.
	Root string
	// Knee tunes the analysis; nil means AnalyzeSweep's defaults.
	Knee *KneeOptions
	// OnLevel, when not nil, is called after each level.
	OnLevel func(SweepLevel)
}

// SweepLevel is one level of a sweep.
type SweepLevel struct {
	// Figures are the level's headline numbers; CPU is the process's
	// utilisation when a PID was given, else the host's.
	Figures
	// Host and Process are the CPU use sampled over the measured part of
	// the level (Process is zero without a PID).
	Host    CPUUse `json:"host_cpu"`
	Process CPUUse `json:"process_cpu"`
	// Result is the full run.
	Result *Result `json:"-"`
}

// SweepResult is a finished sweep.
type SweepResult struct {
	Levels   []SweepLevel  `json:"levels"`
	Analysis SweepAnalysis `json:"analysis"`
}

// Figures returns the levels' figures in order.
func (s *SweepResult) Figures() []Figures {
	out := make([]Figures, len(s.Levels))
	for i, l := range s.Levels {
		out[i] = l.Figures
	}
	return out
}

// Comparison compares every level against the first.
func (s *SweepResult) Comparison() Comparison { return Compare(s.Figures()...) }

// Text renders the sweep as the comparison table followed by the
// analysis' findings.
func (s *SweepResult) Text() string {
	return s.Comparison().Text() + "\n" + s.Analysis.Text()
}

// JSON returns the sweep as indented JSON.
func (s *SweepResult) JSON() ([]byte, error) { return json.MarshalIndent(s, "", "  ") }

// Sweep runs the levels one after the other, sampling the host's and the
// process's CPU every 50 ms while each runs and keeping the samples that
// bracket its measured part, then analyses the sweep. It stops at the
// first failed level (returning the levels done so far with the error) or
// when ctx ends.
func Sweep(ctx context.Context, sc SweepConfig) (*SweepResult, error) {
	if (len(sc.Connections) == 0) == (len(sc.Rates) == 0) {
		return nil, errors.New("loadgen: sweep: give either connection levels or rate levels")
	}
	if !sc.Base.StartAt.IsZero() {
		return nil, errors.New("loadgen: sweep: Base.StartAt is for one run; a sweep runs its levels one after the other")
	}
	root, err := hostfs.New(sc.Root)
	if err != nil {
		return nil, fmt.Errorf("loadgen: sweep: %w", err)
	}
	if _, err := hostCPU(root); err != nil {
		return nil, fmt.Errorf("loadgen: sweep: %w", err)
	}
	if sc.PID != 0 {
		if _, err := processCPU(root, sc.PID); err != nil {
			return nil, fmt.Errorf("loadgen: sweep: process %d: %w", sc.PID, err)
		}
	}
	n := max(len(sc.Connections), len(sc.Rates))
	res := &SweepResult{}
	for i := 0; i < n; i++ {
		cfg := sc.Base
		if sc.Warmup > 0 {
			cfg.Warmup = sc.Warmup
		}
		if sc.Duration > 0 {
			cfg.Duration = sc.Duration
		}
		var name string
		var load float64
		if len(sc.Connections) > 0 {
			cfg.Connections, cfg.Rate, cfg.Pacer = sc.Connections[i], 0, nil
			if cfg.Threads > cfg.Connections {
				cfg.Threads = cfg.Connections
			}
			name, load = fmt.Sprintf("c=%d", sc.Connections[i]), float64(sc.Connections[i])
		} else {
			cfg.Rate, cfg.Pacer = sc.Rates[i], nil
			name, load = fmt.Sprintf("R=%g", sc.Rates[i]), sc.Rates[i]
		}
		lvl, err := sweepLevel(ctx, sc, root, cfg)
		if err != nil {
			res.Analysis = AnalyzeSweep(res.Figures(), sc.Knee)
			return res, fmt.Errorf("loadgen: sweep level %s: %w", name, err)
		}
		lvl.Name, lvl.Load = name, load
		res.Levels = append(res.Levels, lvl)
		if sc.OnLevel != nil {
			sc.OnLevel(lvl)
		}
		if err := ctx.Err(); err != nil {
			res.Analysis = AnalyzeSweep(res.Figures(), sc.Knee)
			return res, err
		}
	}
	res.Analysis = AnalyzeSweep(res.Figures(), sc.Knee)
	return res, nil
}

// cpuSample is one pair of CPU readings.
type cpuSample struct {
	host, proc CPUTimes
	procErr    error
}

// sweepLevel runs one level with a CPU sampler beside it.
func sweepLevel(ctx context.Context, sc SweepConfig, root hostfs.Root, cfg Config) (SweepLevel, error) {
	var (
		mu      sync.Mutex
		samples []cpuSample
	)
	sample := func() {
		var s cpuSample
		var err error
		if s.host, err = hostCPU(root); err != nil {
			return
		}
		if sc.PID != 0 {
			s.proc, s.procErr = processCPU(root, sc.PID)
		}
		mu.Lock()
		samples = append(samples, s)
		mu.Unlock()
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		sample()
		for {
			select {
			case <-stop:
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	r, err := Run(ctx, cfg)
	close(stop)
	<-done
	if err != nil {
		return SweepLevel{}, err
	}
	lvl := SweepLevel{Figures: FiguresOf("", r), Result: r}
	a, b, ok := bracket(samples, r.Start, r.Start.Add(r.Elapsed))
	if !ok {
		return lvl, nil
	}
	lvl.Host = useOf(a.host, b.host, 0)
	lvl.CPU = lvl.Host.Percent
	if sc.PID != 0 {
		if a.procErr != nil || b.procErr != nil {
			return lvl, fmt.Errorf("process %d: %w", sc.PID, errors.Join(a.procErr, b.procErr))
		}
		lvl.Process = useOf(a.proc, b.proc, a.host.CPUs)
		lvl.CPU = lvl.Process.Percent
	}
	return lvl, nil
}

// bracket returns the last sample taken at or before from (or the first
// one) and the first taken at or after to (or the last one).
func bracket(s []cpuSample, from, to time.Time) (cpuSample, cpuSample, bool) {
	if len(s) < 2 {
		return cpuSample{}, cpuSample{}, false
	}
	i := 0
	for j, x := range s {
		if !x.host.At.After(from) {
			i = j
		}
	}
	k := len(s) - 1
	for j := len(s) - 1; j > i; j-- {
		if !s[j].host.At.Before(to) {
			k = j
		}
	}
	if k <= i {
		return cpuSample{}, cpuSample{}, false
	}
	return s[i], s[k], true
}
