package report

// StatsRow exposes statsRow to the black-box tests.
var StatsRow = statsRow

// The report's number formats, for the black-box tests.
var (
	FormatMetricForTest = formatMetric
	FormatBinaryForTest = formatBinary
	FormatTimeSForTest  = formatTimeS
)
