//go:build linux

package study

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestProgress: after each measured step the line counts the steps done
// and left, the time since the start, and the time left: the remaining
// budgets scaled by what the finished ones took against theirs. A step
// the runner passed over (unchanged, skipped) leaves the count and the
// scale; a name not in the budget changes nothing.
func TestProgress(t *testing.T) {
	b := []StepBudget{
		{Name: "baseline", Time: 100 * time.Second},
		{Name: StepAccessLog, Time: 50 * time.Second},
		{Name: StepThreads, Time: 200 * time.Second},
		{Name: StepOpenFiles, Time: 50 * time.Second},
		{Name: "baseline again", Time: 50 * time.Second},
	}
	c := &fakeClock{t: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)}
	p := NewProgress(b, c.now)
	assert.Equal(t, 450*time.Second, p.Left(), "nothing done: the estimate")
	assert.Equal(t, "progress: step 0 of 5 done, 0s elapsed, about 7m30s left", p.Line())

	// The baseline took half its budget: the rest is expected to as well.
	c.advance(50 * time.Second)
	p.Done("baseline")
	assert.Equal(t, "progress: step 1 of 5 done, 50s elapsed, about 2m55s left", p.Line())

	// access-log took its whole budget: (50+50)/(100+50) of the rest.
	c.advance(50 * time.Second)
	p.Done(StepAccessLog)
	assert.Equal(t, 200*time.Second, p.Left())
	assert.Equal(t, "progress: step 2 of 5 done, 1m40s elapsed, about 3m20s left", p.Line())

	p.Done("no such step")
	p.Done("baseline")
	assert.Equal(t, 200*time.Second, p.Left(), "unknown and repeated names change nothing")

	// threads unchanged (not measured): open-files ends next, in 30 s.
	c.advance(30 * time.Second)
	p.Done(StepOpenFiles)
	// (50+50+30) s for (100+50+50) s of budget: 0.65 of the drift guard's 50 s.
	assert.Equal(t, 32500*time.Millisecond, p.Left())
	assert.Equal(t, "progress: step 3 of 4 done, 2m10s elapsed, about 33s left", p.Line())

	c.advance(40 * time.Second)
	p.Done("baseline again")
	assert.Equal(t, time.Duration(0), p.Left())
	assert.Equal(t, "progress: step 4 of 4 done, 2m50s elapsed, about 0s left", p.Line())
}
