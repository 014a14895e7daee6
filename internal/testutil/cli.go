package testutil

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// CLI runs an example program's command line and returns its stdout and
// exit status: the built binary, or its run function in the test process
// (cliflag.ExitCode of its error).
type CLI func(args ...string) (stdout string, code int)

// flagLine matches a flag of flag.PrintDefaults and its description:
// "  -name type\n    \tdescription" or, for a one-letter bool,
// "  -l\tdescription".
var flagLine = regexp.MustCompile(`(?m)^  -(\S+)(?: \S+)?(?:\n    )?\t(.*)$`)

// CheckCLI checks the command-line conventions of the example programs
// (internal/cliflag) on program name: -h exits 0 and lists exactly flags
// (and -version), each with a description; -version exits 0 naming the
// program and the module; an unknown flag exits 2.
func CheckCLI(t *testing.T, name string, cli CLI, flags []string) {
	t.Helper()
	out, code := cli("-h")
	if code != 0 {
		t.Errorf("%s -h: exit status %d, want 0", name, code)
	}
	if !strings.HasPrefix(out, "usage: "+name) {
		t.Errorf("%s -h: does not start with its usage: %q", name, out)
	}
	var listed []string
	for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
		listed = append(listed, m[1])
		if strings.TrimSpace(m[2]) == "" {
			t.Errorf("%s -h: -%s has no description", name, m[1])
		}
	}
	want := append(slices.Clone(flags), "version")
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("%s -h lists %v, want %v", name, listed, want)
	}
	out, code = cli("-version")
	if code != 0 || !strings.HasPrefix(out, name+" github.com/nettune/nettune ") {
		t.Errorf("%s -version: exit status %d, %q: want 0 and the program and module", name, code, out)
	}
	if _, code = cli("-no-such-flag"); code != 2 {
		t.Errorf("%s -no-such-flag: exit status %d, want 2", name, code)
	}
}
