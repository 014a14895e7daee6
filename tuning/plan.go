package tuning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// A Step is one named, reversible change in a tuning plan: for example
// "access-log" (comment out Tomcat's AccessLogValve) or "nic-queues"
// (ethtool -L combined 8). Prepare looks at the host and says what it would
// do, changing nothing; the returned Change applies, verifies and is undone
// through the journal.
type Step struct {
	// Name identifies the step in the journal, in -steps lists and in
	// reports: short, lower case, with dashes.
	Name string
	// Title is a one-line human description ("Disable the access log").
	Title string
	// Prepare inspects the host and returns the change this step would
	// make. It must not change the host.
	Prepare func(ctx context.Context) (*Change, error)
	// Baseline marks a step that sets up the baseline rather than being
	// measured on its own (the Arm Neoverse Tomcat tuning guide's 8 CPUs
	// online and `ulimit -n` before its first wrk2 run): the Runner's "baseline" AfterStep call comes
	// after the leading Baseline steps, and none follows them.
	Baseline bool
}

// A Change is what a Step would do on this host.
type Change struct {
	// Describe is the exact change: a unified diff of a file, or the old
	// and new values ("cpu8-191 online: 1 -> 0").
	Describe string
	// Skip, when not empty, is why this step cannot or need not run here
	// ("one NUMA node", "no combined channels", "needs a reboot"); the step
	// is reported as skipped and nothing is applied.
	Skip string
	// Undo is saved in the journal before Apply is called. Each record is
	// reverted, last first, by the function Reverters holds for its Kind.
	Undo []Undo
	// Apply makes the change.
	Apply func(ctx context.Context) error
	// Verify, if not nil, checks after Apply that the host is as intended
	// (re-reading what was written). A failure reverts the step.
	Verify func(ctx context.Context) error
}

// Reverters maps an Undo.Kind to the function that undoes one journal
// record of that kind, given the record's Data. A revert function must be
// idempotent: it can be called for a change that was only half applied,
// or already undone, and must then still leave the recorded state in
// place.
type Reverters map[string]func(ctx context.Context, data json.RawMessage) error

// StepStatus is what happened to one step.
type StepStatus string

// The statuses a step can end in.
const (
	StatusApplied  StepStatus = "applied"
	StatusSkipped  StepStatus = "skipped"
	StatusNoChange StepStatus = "unchanged"
	StatusFailed   StepStatus = "failed"
	StatusReverted StepStatus = "reverted"
	StatusNotRun   StepStatus = "not run"
)

// StepResult reports one step of a run.
type StepResult struct {
	Name     string
	Title    string
	Status   StepStatus
	Describe string // the change, as Prepare described it
	Reason   string // why skipped, or the error
	Duration time.Duration
}

// Runner runs steps in order with a journal, reverting on error.
type Runner struct {
	// Journal records each change before it is made. Required.
	Journal *Journal
	// Reverters undo journal records by kind. Required for every kind a
	// step's Change uses; a missing kind fails the step before Apply.
	Reverters Reverters
	// AfterStep, if not nil, is called after every applied step (other
	// than Baseline steps), and with the name "baseline" once the leading
	// Baseline steps are applied, before the first other step — the place
	// to restart a server and measure. An error stops the run and reverts.
	AfterStep func(ctx context.Context, step StepResult) error
	// Keep leaves the changes in place at the end of a successful run
	// (they stay in the journal, for a later RevertJournal). Default:
	// false, every change is reverted when the run ends.
	Keep bool
	// RevertTimeout bounds the revert that follows an error or a
	// cancellation, which runs even though ctx is done. Default: 2 minutes.
	RevertTimeout time.Duration
}

// Run prepares and applies each step in order, recording it in the
// journal before it changes anything. On any error, or when ctx is
// cancelled (SIGINT), it reverts every change made so far, newest first,
// and returns the error joined with any revert failure. Without Keep it
// also reverts everything after the last step. The results list every
// step, including those not run.
func (r *Runner) Run(ctx context.Context, steps []Step) ([]StepResult, error) {
	if r.Journal == nil {
		return nil, errors.New("tuning: Runner needs a Journal")
	}
	x := &run{r: r, steps: steps, results: make([]StepResult, len(steps))}
	for i, s := range steps {
		x.results[i] = StepResult{Name: s.Name, Title: s.Title, Status: StatusNotRun}
	}
	for i, s := range steps {
		if !x.baselineDone && !s.Baseline {
			if err := x.baseline(ctx); err != nil {
				return x.results, err
			}
		}
		if err := x.step(ctx, i); err != nil {
			return x.results, err
		}
	}
	if !x.baselineDone {
		if err := x.baseline(ctx); err != nil {
			return x.results, err
		}
	}
	if r.Keep {
		return x.results, nil
	}
	return x.results, x.revertAll(ctx, nil)
}

// run is one Runner.Run in progress: its steps, their results, and the
// changes journaled so far, which an error reverts.
type run struct {
	r            *Runner
	steps        []Step
	results      []StepResult
	applied      []appliedStep
	baselineDone bool
}

// appliedStep is a change that may be (half) made: its journal sequence
// number, its step's index and its undo records.
type appliedStep struct {
	seq  int
	idx  int
	undo []Undo
}

// step runs steps[i]: it prepares the change, journals, applies and
// verifies it, then calls AfterStep. Any error comes back after every
// change so far was reverted, joined with the revert's failures.
func (x *run) step(ctx context.Context, i int) error {
	s, res := x.steps[i], &x.results[i]
	if err := ctx.Err(); err != nil {
		return x.revertAll(ctx, fmt.Errorf("tuning: stopped before step %q: %w", s.Name, err))
	}
	start := time.Now()
	ch, err := x.prepare(ctx, i)
	if err != nil || ch == nil {
		return err
	}
	if err := x.apply(ctx, i, ch); err != nil {
		return err
	}
	res.Status, res.Duration = StatusApplied, time.Since(start)
	if x.r.AfterStep != nil && !s.Baseline {
		if err := x.r.AfterStep(ctx, *res); err != nil {
			return x.revertAll(ctx, fmt.Errorf("tuning: after step %q: %w", s.Name, err))
		}
	}
	return nil
}

// prepare returns steps[i]'s change, or nil when there is nothing to
// apply (skipped, or unchanged). A change with an undo kind no reverter
// knows fails before anything of it is made.
func (x *run) prepare(ctx context.Context, i int) (*Change, error) {
	s, res := x.steps[i], &x.results[i]
	ch, err := s.Prepare(ctx)
	if err != nil {
		return nil, x.fail(ctx, i, err.Error(), fmt.Errorf("tuning: prepare step %q: %w", s.Name, err))
	}
	res.Describe = ch.Describe
	switch {
	case ch.Skip != "":
		res.Status, res.Reason = StatusSkipped, ch.Skip
		return nil, nil
	case ch.Apply == nil:
		res.Status = StatusNoChange
		return nil, nil
	}
	for _, u := range ch.Undo {
		if x.r.Reverters[u.Kind] == nil {
			return nil, x.fail(ctx, i, "no reverter for "+u.Kind, fmt.Errorf("tuning: step %q: no RevertFunc registered for undo kind %q", s.Name, u.Kind))
		}
	}
	return ch, nil
}

// apply journals ch's undo records, then applies and verifies it. From
// the journal's record on, the change is reverted on error.
func (x *run) apply(ctx context.Context, i int, ch *Change) error {
	s := x.steps[i]
	seq, err := x.r.Journal.Begin(s.Name, ch.Undo)
	if err != nil {
		return x.fail(ctx, i, err.Error(), err)
	}
	x.applied = append(x.applied, appliedStep{seq: seq, idx: i, undo: ch.Undo})
	if err := ch.Apply(ctx); err != nil {
		return x.fail(ctx, i, err.Error(), fmt.Errorf("tuning: apply step %q: %w", s.Name, err))
	}
	if err := x.r.Journal.Applied(seq); err != nil {
		return x.fail(ctx, i, err.Error(), err)
	}
	if ch.Verify != nil {
		if err := ch.Verify(ctx); err != nil {
			return x.fail(ctx, i, err.Error(), fmt.Errorf("tuning: verify step %q: %w", s.Name, err))
		}
	}
	return nil
}

// fail marks steps[i] failed for reason and reverts, for cause.
func (x *run) fail(ctx context.Context, i int, reason string, cause error) error {
	x.results[i].Status, x.results[i].Reason = StatusFailed, reason
	return x.revertAll(ctx, cause)
}

// baseline makes the "baseline" AfterStep call, once.
func (x *run) baseline(ctx context.Context) error {
	x.baselineDone = true
	if x.r.AfterStep == nil {
		return nil
	}
	if err := x.r.AfterStep(ctx, StepResult{Name: "baseline", Title: "Baseline", Status: StatusNoChange}); err != nil {
		return x.revertAll(ctx, fmt.Errorf("tuning: baseline: %w", err))
	}
	return nil
}

// revertAll reverts every change applied so far, newest first, even once
// ctx is done (bounded by RevertTimeout), and returns cause joined with
// the failures.
func (x *run) revertAll(ctx context.Context, cause error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.r.revertTimeout())
	defer cancel()
	var errs []error
	for k := len(x.applied) - 1; k >= 0; k-- {
		d := x.applied[k]
		if err := x.r.revert(rctx, d.seq, d.undo); err != nil {
			errs = append(errs, fmt.Errorf("revert step %q: %w", x.steps[d.idx].Name, err))
			continue
		}
		x.results[d.idx].Status = StatusReverted
	}
	x.applied = nil
	if cause == nil {
		return errors.Join(errs...)
	}
	return errors.Join(append([]error{cause}, errs...)...)
}

func (r *Runner) revertTimeout() time.Duration {
	if r.RevertTimeout > 0 {
		return r.RevertTimeout
	}
	return 2 * time.Minute
}

func (r *Runner) revert(ctx context.Context, seq int, undo []Undo) error {
	if err := revertRecords(ctx, r.Reverters, undo); err != nil {
		return err
	}
	return r.Journal.Reverted(seq)
}

func revertRecords(ctx context.Context, rev Reverters, undo []Undo) error {
	var errs []error
	for k := len(undo) - 1; k >= 0; k-- {
		fn := rev[undo[k].Kind]
		if fn == nil {
			errs = append(errs, fmt.Errorf("no RevertFunc for undo kind %q", undo[k].Kind))
			continue
		}
		if err := fn(ctx, undo[k].Data); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", undo[k].Kind, err))
		}
	}
	return errors.Join(errs...)
}

// RevertJournal undoes, newest first, every change the journal at path
// records as begun and not yet reverted — what a run left behind when it
// was killed, crashed, or ran with Keep — and marks each reverted in the
// journal. It returns the steps it reverted. A change whose revert fails
// stays pending, so RevertJournal can be run again.
//
// It holds the journal's lock while it works, and refuses a journal whose
// run is still alive (ErrJournalLocked, naming that run's PID). An empty
// journal, or one whose first record is cut, is an error matching
// ErrTornJournal, never "nothing to revert".
//
// A step record cut short (Torn) is reverted from what it holds where that
// is safe: each undo record read whole is reverted, because it holds the
// complete state from before the step (a file's bytes, a sysctl's value)
// and reverters are idempotent, so restoring it is right whether the step
// ran, half ran or never ran; an undo record cut inside is never used (a
// file's bytes cut short would destroy the file). The torn record is then
// marked reverted, and reported in the returned error as a
// *TornRecordError (matching ErrTornJournal) naming its step and what was,
// and was not, reverted from it.
func RevertJournal(ctx context.Context, path string, rev Reverters) ([]string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("tuning: open journal: %w", err)
	}
	j := &Journal{path: path, f: f}
	defer j.Close()
	if err := lock(f, path); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("tuning: read journal %s: %w", path, err)
	}
	entries, err := parseJournal(path, data)
	if err != nil {
		return nil, err
	}
	p := pending(entries)
	if len(p) == 0 {
		return nil, nil
	}
	for _, e := range entries {
		j.seq = max(j.seq, e.Seq)
	}
	j.off = int64(len(data))
	j.needNL = data[len(data)-1] != '\n'
	var reverted []string
	var errs []error
	for _, e := range p {
		var torn *TornRecordError
		if e.Torn {
			torn = &TornRecordError{Path: path, Line: e.Line, Seq: e.Seq, Step: e.Step, Whole: len(e.Undo), UndoCut: e.UndoCut}
			if e.Seq == 0 || len(e.Undo) == 0 && e.UndoCut {
				errs = append(errs, torn) // nothing readable to revert, and nothing to mark
				continue
			}
		}
		if err := revertRecords(ctx, rev, e.Undo); err != nil {
			errs = append(errs, fmt.Errorf("tuning: revert step %q from %s: %w", e.Step, path, err))
			continue
		}
		if err := j.append(entry{Seq: e.Seq, Op: "reverted", Note: tornNote(torn)}); err != nil {
			errs = append(errs, err)
			continue
		}
		reverted = append(reverted, e.Step)
		if torn != nil {
			torn.Reverted = true
			errs = append(errs, torn)
		}
	}
	return reverted, errors.Join(errs...)
}

func tornNote(t *TornRecordError) string {
	if t == nil {
		return ""
	}
	if t.UndoCut {
		return fmt.Sprintf("torn record: reverted from %d whole undo record(s), the rest lost", t.Whole)
	}
	return fmt.Sprintf("torn record: its %d undo record(s) were whole", t.Whole)
}
