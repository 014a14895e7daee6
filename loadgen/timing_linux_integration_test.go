//go:build linux

package loadgen_test

import "testing"

// timingTheory marks a test whose checks hold figures of timed runs
// against theory (a paced server's known capacity, a knee, analytic
// percentiles, the verdicts of seeded trials) with a tolerance. A
// generator slowed by the race detector, or starved by other packages'
// tests, misses them through no fault of the code, so under -race such a
// test skips: .ci/test's timing stage runs every one of them without the
// race detector, after the other tests, with nothing beside it, and runs
// a failed one once more. Tests that assert only what holds on every run
// (counts that add up, a merge within its parts) do not call it.
func timingTheory(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("timing check against theory: .ci/test's timing stage runs it without -race, alone")
	}
}
