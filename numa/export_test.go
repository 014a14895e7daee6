package numa

// ThreadCPUs is threadCPUs, for the black-box integration tests.
var ThreadCPUs = threadCPUs

// ParseProcStat is parseProcStat, for the fuzz target.
var ParseProcStat = parseProcStat
