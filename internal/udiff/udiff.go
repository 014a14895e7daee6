// Package udiff renders the difference between two texts as a unified diff,
// the form `diff -u` and `git diff` print, so that every dry run in nettune
// can show exactly which lines of a configuration file would change.
//
// It touches no files and needs no privileges.
package udiff

import (
	"fmt"
	"strings"
)

// DefaultContext is the number of unchanged lines shown around a change,
// as diff -u does.
const DefaultContext = 3

// maxCells bounds the LCS table; larger inputs fall back to a coarser diff
// (common prefix and suffix, everything between replaced), still correct.
const maxCells = 16 << 20

// Unified returns the unified diff turning a into b, with the given file
// names in the "---" and "+++" headers and DefaultContext lines of context.
// It returns "" when a and b are equal. A last line without a newline is
// marked "\ No newline at end of file", as diff does.
func Unified(nameA, nameB string, a, b []byte) string {
	return UnifiedContext(nameA, nameB, a, b, DefaultContext)
}

// UnifiedContext is Unified with n lines of context.
func UnifiedContext(nameA, nameB string, a, b []byte, n int) string {
	if string(a) == string(b) {
		return ""
	}
	la, lb := splitLines(string(a)), splitLines(string(b))
	ops := diffLines(la, lb)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	for _, h := range hunks(ops, n) {
		writeHunk(&out, h, la, lb)
	}
	return out.String()
}

// op is one line of the edit script.
type op struct {
	kind byte // ' ', '-', '+'
	a, b int  // line index in a (for ' ' and '-') and in b (for ' ' and '+')
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines computes a shortest edit script by longest common subsequence
// over the lines between the common prefix and suffix.
func diffLines(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []op
	for i := 0; i < pre; i++ {
		ops = append(ops, op{' ', i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if (len(ma)+1)*(len(mb)+1) > maxCells {
		for i := range ma {
			ops = append(ops, op{'-', pre + i, pre})
		}
		for j := range mb {
			ops = append(ops, op{'+', pre + len(ma), pre + j})
		}
	} else {
		// lcs[i][j] = LCS length of ma[i:], mb[j:]
		w := len(mb) + 1
		lcs := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, op{' ', pre + i, pre + j})
				i++
				j++
			case j < len(mb) && (i == len(ma) || lcs[i*w+j+1] >= lcs[(i+1)*w+j]):
				ops = append(ops, op{'+', pre + i, pre + j})
				j++
			default:
				ops = append(ops, op{'-', pre + i, pre + j})
				i++
			}
		}
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, op{' ', len(a) - suf + k, len(b) - suf + k})
	}
	return normalize(ops)
}

// normalize puts deletions before insertions inside each changed run, the
// order diff -u prints them in.
func normalize(ops []op) []op {
	out := make([]op, 0, len(ops))
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			out = append(out, ops[i])
			i++
			continue
		}
		j := i
		for j < len(ops) && ops[j].kind != ' ' {
			j++
		}
		for _, o := range ops[i:j] {
			if o.kind == '-' {
				out = append(out, o)
			}
		}
		for _, o := range ops[i:j] {
			if o.kind == '+' {
				out = append(out, o)
			}
		}
		i = j
	}
	return out
}

// hunks groups the script into ranges of changes with n lines of context,
// merging groups whose context would overlap.
func hunks(ops []op, n int) [][]op {
	var out [][]op
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-n, 0)
		end := i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			// end is at a context line or the end; look ahead for another change
			k := end
			for k < len(ops) && ops[k].kind == ' ' && k-end < 2*n {
				k++
			}
			if k < len(ops) && ops[k].kind != ' ' {
				end = k
				continue
			}
			break
		}
		stop := min(end+n, len(ops))
		out = append(out, ops[start:stop])
		i = stop
	}
	return out
}

func writeHunk(out *strings.Builder, h []op, la, lb []string) {
	aStart, bStart, aLen, bLen := -1, -1, 0, 0
	for _, o := range h {
		if o.kind != '+' {
			if aStart < 0 {
				aStart = o.a
			}
			aLen++
		}
		if o.kind != '-' {
			if bStart < 0 {
				bStart = o.b
			}
			bLen++
		}
	}
	if aStart < 0 {
		aStart = h[0].a
	}
	if bStart < 0 {
		bStart = h[0].b
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", rangeStr(aStart, aLen), rangeStr(bStart, bLen))
	for _, o := range h {
		line := ""
		if o.kind == '+' {
			line = lb[o.b]
		} else {
			line = la[o.a]
		}
		out.WriteByte(o.kind)
		out.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// rangeStr formats a hunk range as diff -u does: "start,len" with 1-based
// start, "start" alone for one line, and "start-1,0" for an empty range.
func rangeStr(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
