package lockfile_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/nettune/nettune/internal/lockfile"
)

// ParsePID never panics, and a PID it returns is written in the first
// line's text.
func FuzzParsePID(f *testing.F) {
	for _, s := range []string{"4242\n", `{"seq":0,"op":"open","pid":77}`, "", "-1", `"pid":99999999999999999999`, "12\n34"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pid := lockfile.ParsePID(b)
		if pid < 0 {
			t.Fatalf("negative PID %d", pid)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if pid > 0 && !strings.Contains(first, strconv.Itoa(pid)) {
			t.Fatalf("PID %d is not on the first line %q", pid, first)
		}
	})
}
