package loadgen

// Unexported names the black-box tests need.
const HelloWorldPage = helloWorldPage

// CheckTarget exposes checkTarget to the black-box tests.
var CheckTarget = checkTarget
