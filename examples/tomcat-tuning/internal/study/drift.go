//go:build linux

package study

import (
	"context"
	"fmt"
	"strings"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// againUnderUnit is the drift guard under systemd: the baseline's steps
// (its unit drop-in) are planned and applied again by a Runner on the
// run's journal, so a run killed meanwhile leaves a record -revert undoes;
// the baseline is measured with them, and the Runner reverts them, as it
// reverted the study's steps. A failure to apply, measure or revert is the
// run's error.
func (r *run) againUnderUnit(ctx context.Context, j *tuning.Journal, cpuHost *tuning.Host, steps []tuning.Step) (*loadgen.StepFigures, error) {
	var base []tuning.Step
	var names []string
	for _, s := range steps {
		if s.Baseline {
			base = append(base, s)
			names = append(names, s.Name)
		}
	}
	fmt.Fprintf(r.log, "== measure the baseline again (drift guard): its steps applied again (%s), journaled, then reverted ==\n", strings.Join(names, ", "))
	var again *loadgen.StepFigures
	runner := &tuning.Runner{Journal: j, Reverters: Reverters(cpuHost),
		AfterStep: func(ctx context.Context, sr tuning.StepResult) error {
			if sr.Name != "baseline" {
				return nil
			}
			m, err := r.measureAgain(ctx)
			again = m
			return err
		}}
	results, err := runner.Run(ctx, announce(r.log, base))
	if err != nil {
		return nil, fmt.Errorf("drift guard: %w", err)
	}
	var reverted []string
	for _, sr := range results {
		if sr.Status == tuning.StatusReverted {
			reverted = append(reverted, sr.Name)
		}
	}
	fmt.Fprintf(r.log, "drift guard: reverted again: %s\n", firstNonEmpty(strings.Join(reverted, ", "), "nothing (no baseline step changed the host)"))
	return again, nil
}
