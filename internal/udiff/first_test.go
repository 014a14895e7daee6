package udiff

import "testing"

func TestFirstDifference(t *testing.T) {
	for _, tc := range []struct{ got, want, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\n<Valve/>\n", "a\n<!--<Valve/>-->\n", `line 2 is "<Valve/>", want "<!--<Valve/>-->"`},
		{"a\n", "a\nb\n", `it ends after line 1, want line 2 "b"`},
		{"a\nb\n", "a\n", `line 2 is "b", want the end of the file`},
		{"a\nb", "a\nb\n", `line 2 "b" differs in white space or its line end`},
	} {
		if got := FirstDifference([]byte(tc.got), []byte(tc.want)); got != tc.diff {
			t.Errorf("FirstDifference(%q, %q) = %q, want %q", tc.got, tc.want, got, tc.diff)
		}
	}
}

func TestChangedLines(t *testing.T) {
	r, a := ChangedLines([]byte("a\nb\nc\n"), []byte("a\nB\nc\nd\n"))
	if r != 1 || a != 2 {
		t.Errorf("ChangedLines = -%d +%d, want -1 +2", r, a)
	}
}
