package stats

// MinPValue exposes minPValue to the black-box tests.
var MinPValue = minPValue
