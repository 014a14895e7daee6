package loadgen

// StatsRow exposes statsRow to the black-box tests.
var StatsRow = statsRow
