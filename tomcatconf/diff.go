package tomcatconf

import (
	"fmt"
	"strings"
)

// Diff returns a unified diff (3 lines of context) from the original file
// to the current contents, "" when nothing changed.
func (c *Config) Diff() string {
	return UnifiedDiff("a/"+strings.TrimPrefix(c.path, "/"), "b/"+strings.TrimPrefix(c.path, "/"), c.orig, c.src, 3)
}

// UnifiedDiff returns the unified diff from old to new with ctx lines of
// context, in the format of diff -u (including "\ No newline at end of
// file"); "" when they are equal.
func UnifiedDiff(oldName, newName string, old, new []byte, ctx int) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(new))
	ops := diffLines(a, b)

	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	// Group ops into hunks: runs of changes with up to 2*ctx equal lines
	// between them.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String()
}

type line struct {
	text string
	nl   bool // ends with a newline
}

type op struct {
	kind       byte // ' ', '-', '+'
	l          line
	aLine, bLn int // 1-based line numbers in a and b of this op's position
}

func splitLines(s string) []line {
	var out []line
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, line{text: s})
			break
		}
		out = append(out, line{text: s[:i], nl: true})
		s = s[i+1:]
	}
	return out
}

// diffLines computes a shortest edit script by longest common subsequence
// (server.xml files are a few hundred lines: quadratic is fine).
func diffLines(a, b []line) []op {
	// Trim the common prefix and suffix first.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	emit := func(k byte, l line) { ops = append(ops, op{kind: k, l: l}) }
	for _, l := range a[:pre] {
		emit(' ', l)
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ma[i] == mb[j]:
			emit(' ', ma[i])
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			emit('+', mb[j])
			j++
		default:
			emit('-', ma[i])
			i++
		}
	}
	for _, l := range a[len(a)-suf:] {
		emit(' ', l)
	}
	// Within a block of changes, put deletions before insertions as diff -u does.
	for s := 0; s < len(ops); {
		if ops[s].kind == ' ' {
			s++
			continue
		}
		e := s
		for e < len(ops) && ops[e].kind != ' ' {
			e++
		}
		block := append([]op(nil), ops[s:e]...)
		k := s
		for _, o := range block {
			if o.kind == '-' {
				ops[k] = o
				k++
			}
		}
		for _, o := range block {
			if o.kind == '+' {
				ops[k] = o
				k++
			}
		}
		s = e
	}
	ai, bi := 1, 1
	for k := range ops {
		ops[k].aLine, ops[k].bLn = ai, bi
		if ops[k].kind != '+' {
			ai++
		}
		if ops[k].kind != '-' {
			bi++
		}
	}
	return ops
}

func writeHunk(out *strings.Builder, ops []op) {
	aStart, bStart := ops[0].aLine, ops[0].bLn
	var aN, bN int
	for _, o := range ops {
		if o.kind != '+' {
			aN++
		}
		if o.kind != '-' {
			bN++
		}
	}
	// diff -u reports an empty range as starting at the line before.
	if aN == 0 {
		aStart--
	}
	if bN == 0 {
		bStart--
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
	for _, o := range ops {
		out.WriteByte(o.kind)
		out.WriteString(o.l.text)
		out.WriteByte('\n')
		if !o.l.nl {
			out.WriteString("\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
