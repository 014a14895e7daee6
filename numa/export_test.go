package numa

// ThreadCPUs is threadCPUs, for the black-box integration tests.
var ThreadCPUs = threadCPUs
