// Package stats judges whether a tuning step changed a server's capacity:
// pure arithmetic over the rates of repeated runs, with no load, no engine
// type and no I/O.
//
// [SpreadOf] summarises repeated runs (median and range). [UpliftOfRuns]
// compares two configurations' runs as benchstat compares benchmarks: the
// two-sided Mann-Whitney U test ([MannWhitneyU]) for p, the exact
// Hodges-Lehmann (Moses) interval of the ratio of their locations
// ([RatioIntervalOf]) for the size of the change, and a [Verdict]: a gain or
// a loss only when p < α ([DefaultAlpha]) and the interval lies wholly
// outside a ±1 % noise band ([DefaultNoiseBand]). [MinRuns] says how many runs a test needs before anything can be
// significant.
//
// Package loadgen measures the runs (MeasureCapacity, MeasureStep) and
// compares tuning steps with these tests (CompareSteps, PickBest); its
// comparison types carry an [Uplift] per row. This package imports nothing
// of loadgen, so a program that only analyses saved rates needs no engine.
//
// The reference values of the tests come from
// testdata/stats_reference.py (the exact distributions by enumeration) and
// testdata/power_simulation.py (the power behind [DefaultRepeat]).
package stats
