package udiff_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/udiff"
)

func TestUnifiedEqual(t *testing.T) {
	assert.Equal(t, "", udiff.Unified("a", "b", []byte("x\n"), []byte("x\n")))
}

// TestUnifiedMatchesDiff compares against GNU diff -u on the same inputs.
func TestUnifiedMatchesDiff(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("skipped: diff not installed")
	}
	base := make([]string, 40)
	for i := range base {
		base[i] = fmt.Sprintf("line %d\n", i)
	}
	join := func(l []string) string { return strings.Join(l, "") }
	edit := func(f func(l []string) []string) string {
		c := append([]string(nil), base...)
		return join(f(c))
	}
	tests := []struct{ name, a, b string }{
		{"one line changed", join(base), edit(func(l []string) []string { l[10] = "changed\n"; return l })},
		{"two far changes", join(base), edit(func(l []string) []string { l[2] = "x\n"; l[30] = "y\n"; return l })},
		{"two near changes merge", join(base), edit(func(l []string) []string { l[10] = "x\n"; l[15] = "y\n"; return l })},
		{"insert at start", join(base), edit(func(l []string) []string { return append([]string{"new\n"}, l...) })},
		{"append at end", join(base), edit(func(l []string) []string { return append(l, "tail\n") })},
		{"delete block", join(base), edit(func(l []string) []string { return append(l[:5], l[12:]...) })},
		{"no newline at end", "a\nb\nc", "a\nb\nd"},
		{"newline added at end", "a\nb", "a\nb\n"},
		{"from empty", "", "a\nb\n"},
		{"to empty", "a\nb\n", ""},
		{"attribute added to element", "<Connector port=\"8080\"\n  redirectPort=\"8443\" />\n<x/>\n", "<Connector port=\"8080\"\n  redirectPort=\"8443\"\n  maxThreads=\"7\" />\n<x/>\n"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			require.NoError(t, os.WriteFile(pa, []byte(tt.a), 0o644))
			require.NoError(t, os.WriteFile(pb, []byte(tt.b), 0o644))
			out, _ := exec.Command("diff", "-u", "--label", "a/f", "--label", "b/f", pa, pb).Output()
			assert.Equal(t, string(out), udiff.Unified("a/f", "b/f", []byte(tt.a), []byte(tt.b)))
		})
	}
}

func FuzzUnified(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\n")
	f.Add("x", "x\n")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := udiff.Unified("a", "b", []byte(a), []byte(b))
		if (a == b) != (d == "") {
			t.Fatalf("equal=%v but diff %q", a == b, d)
		}
		if d != "" {
			if got := apply(t, a, d); got != b {
				t.Fatalf("applying the diff of %q to %q gave %q", a, b, got)
			}
		}
	})
}

// apply applies a unified diff made by Unified, to prove it is complete.
func apply(t *testing.T, a, d string) string {
	t.Helper()
	src := strings.SplitAfter(a, "\n")
	if src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	lines := strings.SplitAfter(d, "\n")
	var out []string
	pos := 0
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		switch l[0] {
		case '@':
			var as, al, bs, bl int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &as, &al, &bs, &bl); err != nil {
				fmt.Sscanf(strings.Replace(strings.Replace(l, " +", ",1 +", 1), " @@", ",1 @@", 1), "@@ -%d,%d +%d,%d @@", &as, &al, &bs, &bl)
			}
			start := as - 1
			if al == 0 {
				start = as
			}
			for pos < start && pos < len(src) {
				out = append(out, src[pos])
				pos++
			}
		case ' ':
			out = append(out, src[pos])
			pos++
		case '-':
			pos++
		case '+':
			out = append(out, l[1:])
		case '\\':
			last := len(out) - 1
			if i >= 1 && lines[i-1][0] != '-' && last >= 0 {
				out[last] = strings.TrimSuffix(out[last], "\n")
			}
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}
