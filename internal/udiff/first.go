package udiff

import (
	"fmt"
	"strings"
)

// FirstDifference says where got first differs from want, line by line,
// for an error that names what was found: `line 160 is "<Valve …", want
// "<!--<Valve …"`, or that one text ends early. Each line is quoted and
// cut to 100 bytes. It returns "" when the texts are equal.
func FirstDifference(got, want []byte) string {
	if string(got) == string(want) {
		return ""
	}
	lg, lw := splitLines(string(got)), splitLines(string(want))
	for i := 0; ; i++ {
		switch {
		case i >= len(lg) && i >= len(lw):
			return "" // not reached: the texts differ
		case i >= len(lg):
			return fmt.Sprintf("it ends after line %d, want line %d %s", i, i+1, quoteLine(lw[i]))
		case i >= len(lw):
			return fmt.Sprintf("line %d is %s, want the end of the file", i+1, quoteLine(lg[i]))
		case lg[i] != lw[i] && strings.TrimSpace(lg[i]) == strings.TrimSpace(lw[i]):
			return fmt.Sprintf("line %d %s differs in white space or its line end", i+1, quoteLine(lg[i]))
		case lg[i] != lw[i]:
			return fmt.Sprintf("line %d is %s, want %s", i+1, quoteLine(lg[i]), quoteLine(lw[i]))
		}
	}
}

// ChangedLines counts the lines a diff from a to b removes and adds.
func ChangedLines(a, b []byte) (removed, added int) {
	for _, o := range diffLines(splitLines(string(a)), splitLines(string(b))) {
		switch o.kind {
		case '-':
			removed++
		case '+':
			added++
		}
	}
	return removed, added
}

func quoteLine(l string) string {
	l = strings.TrimSpace(l)
	if len(l) > 100 {
		l = l[:100] + "…"
	}
	return fmt.Sprintf("%q", l)
}
