//go:build linux

package study

import (
	"fmt"
	"time"
)

// Progress follows an -apply run through its Budget and says, after each
// measured step, how long it has run and about how long is left.
type Progress struct {
	budget []StepBudget
	// took is what each finished budget took; -1 for one passed over (a
	// step the runner found unchanged or skipped).
	took  []time.Duration
	start time.Time
	last  time.Time
	now   func() time.Time
}

// NewProgress starts following budget at now(); now is the clock
// (time.Now, or a test's).
func NewProgress(budget []StepBudget, now func() time.Time) *Progress {
	t := now()
	return &Progress{budget: budget, start: t, last: t, now: now}
}

// Done marks the budget named name finished now, and those before it
// that were not passed over (the runner measures nothing for a step
// it finds unchanged or must skip). A name that is not in the budget, or
// already done, changes nothing.
func (p *Progress) Done(name string) {
	at := p.now()
	for i := len(p.took); i < len(p.budget); i++ {
		if p.budget[i].Name == name {
			for len(p.took) < i {
				p.took = append(p.took, -1)
			}
			p.took = append(p.took, at.Sub(p.last))
			p.last = at
			return
		}
	}
}

// Left is the time the remaining budgets should take: their Estimate,
// scaled by what the finished ones took against theirs (warm-ups that
// settled early, a sizing that stopped at its second count), never less
// than none.
func (p *Progress) Left() time.Duration {
	var took, planned, rest time.Duration
	for i, b := range p.budget {
		switch {
		case i >= len(p.took):
			rest += b.Time
		case p.took[i] >= 0:
			took += p.took[i]
			planned += b.Time
		}
	}
	if planned <= 0 {
		return rest
	}
	return time.Duration(float64(rest) * float64(took) / float64(planned))
}

// Line is the progress line: "progress: step 3 of 7 done, 1m10s elapsed,
// about 2m30s left". Steps count the budgets measured so far (the
// baseline is step 1) of those still expected.
func (p *Progress) Line() string {
	done, total := 0, 0
	for i := range p.budget {
		if i < len(p.took) && p.took[i] < 0 {
			continue
		}
		total++
		if i < len(p.took) {
			done++
		}
	}
	return fmt.Sprintf("progress: step %d of %d done, %s elapsed, about %s left", done, total,
		p.now().Sub(p.start).Round(time.Second), p.Left().Round(time.Second))
}
