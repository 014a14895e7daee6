//go:build race

package loadgen_test

// raceEnabled is true when the tests run under the race detector, which
// slows the load generator enough that strict timing checks are skipped.
const raceEnabled = true
