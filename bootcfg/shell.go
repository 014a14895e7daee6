package bootcfg

import (
	"fmt"
	"sort"
	"strings"
)

// quoteStyle is how an assignment's value is quoted in the file.
type quoteStyle int

// Quote styles. An edit keeps the style of the assignment it changes.
const (
	quoteNone   quoteStyle = iota // NAME=value
	quoteDouble                   // NAME="value"
	quoteSingle                   // NAME='value'
	quoteMixed                    // NAME=a"b"'c': rewritten in double quotes
)

// String names the style ("double-quoted", ...).
func (q quoteStyle) String() string {
	switch q {
	case quoteNone:
		return "unquoted"
	case quoteDouble:
		return "double-quoted"
	case quoteSingle:
		return "single-quoted"
	}
	return "mixed quoting"
}

// expansionKind says what the shell would have to do to compute a value.
type expansionKind int

// Expansion kinds.
const (
	expandCommand    expansionKind = iota // $(command)
	expandBacktick                        // `command`
	expandVariable                        // $NAME or ${NAME...}
	expandSpecial                         // $1, $@, $?, $$ ...
	expandArithmetic                      // $((expression))
	expandTilde                           // ~ or ~user
)

// String names the kind ("command substitution", ...).
func (k expansionKind) String() string {
	names := [...]string{"command substitution", "command substitution", "variable reference", "special parameter", "arithmetic expansion", "tilde expansion"}
	if k < 0 || int(k) >= len(names) {
		return fmt.Sprintf("expansionKind(%d)", int(k))
	}
	return names[k]
}

// expansion is one construct in a value that only a shell can evaluate.
type expansion struct {
	Kind expansionKind
	Text string // as written, e.g. "$(sed 's, release .*$,,g' /etc/system-release)"
	Name string // the variable, for expandVariable
}

// assignment is one NAME=value that /bin/sh would perform when it sources
// the file.
type assignment struct {
	Name string
	File string // path of the file holding it
	Line int    // 1-based line of NAME
	// Start and End are the byte offsets of "NAME=value" in the file;
	// ValueStart is the offset of value.
	Start, ValueStart, End int
	Quote                  quoteStyle
	// Value is the value /bin/sh assigns, when Expansions is empty: quotes
	// removed, escapes and line continuations resolved.
	Value string
	// Expansions lists what only a shell can evaluate; Value then holds
	// only the literal parts and is not what the shell would assign.
	Expansions []expansion
	// Conditional is true when the assignment may not run: inside if,
	// case, a loop, a function or braces, or after && or ||.
	Conditional bool
	// Export is true for "export NAME=value".
	Export bool
	// Unset is true for "unset NAME": the value becomes empty (Start..End
	// then covers the name after unset).
	Unset bool

	// selfRef/appendLit describe NAME="$NAME literal": the shell appends
	// literal to the current value.
	selfRef   string
	appendLit string
	raw       string
}

// Static reports whether the shell's value is Value without running
// anything: no expansion and no condition.
func (a *assignment) Static() bool { return len(a.Expansions) == 0 && !a.Conditional }

// SelfAppend reports whether a is NAME="$NAME more" (or "${NAME} more"):
// it appends literal text to the value the variable already has.
func (a *assignment) SelfAppend() bool { return a.selfRef != "" && !a.Conditional }

// Text returns the assignment as written in the file ("NAME=value").
func (a *assignment) Text() string {
	if a.Unset {
		return "unset " + a.Name
	}
	return a.Name + "=" + a.raw
}

// reason describes why a is not static.
func (a *assignment) reason() string {
	if a.Conditional {
		return "assigned under a condition (if, case, loop, function, && or ||)"
	}
	for _, e := range a.Expansions {
		if e.Kind == expandVariable && e.Name == a.Name {
			continue
		}
		return fmt.Sprintf("%s %s", e.Kind, e.Text)
	}
	if len(a.Expansions) > 0 {
		return fmt.Sprintf("%s %s", a.Expansions[0].Kind, a.Expansions[0].Text)
	}
	return "static"
}

// scanner reads a POSIX shell script just far enough to find the
// assignments a "." (source) would perform, without executing anything.
type scanner struct {
	file  string
	src   string
	lines []int // offsets of line starts
}

func (s *scanner) lineOf(off int) int {
	return sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off })
}

func (s *scanner) errorf(off int, format string, args ...any) error {
	return &SyntaxError{File: s.file, Line: s.lineOf(off), Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// word is one scanned shell word.
type word struct {
	start, end int
	value      strings.Builder
	exps       []expansion
	unquoted   bool // has unquoted characters
	single     bool // has a '...' part
	double     bool // has a "..." part
	parts      int  // number of quoted or unquoted runs
	// For "$NAME rest": the first expansion's raw text and the literal
	// after it, when the word is one double-quoted part.
	firstExpAt  int // value length when the first expansion was met (-1: none)
	firstExpRaw string
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// nameAt returns the length of the identifier at i (0 when none).
func nameAt(src string, i int) int {
	if i >= len(src) || !isNameStart(src[i]) {
		return 0
	}
	j := i + 1
	for j < len(src) && isNameChar(src[j]) {
		j++
	}
	return j - i
}

func isMeta(c byte) bool { return strings.IndexByte(" \t\n;&|()<>", c) >= 0 }

var reservedOpen = map[string]bool{"if": true, "case": true, "for": true, "while": true, "until": true, "{": true}
var reservedClose = map[string]bool{"fi": true, "esac": true, "done": true, "}": true}
var reservedMid = map[string]bool{"then": true, "else": true, "elif": true, "do": true, "in": true, "!": true}

// shellCommand is a command word the file runs when sourced (anything
// that is not an assignment, a comment or a blank: "if", "true",
// "str_replace"...).
type shellCommand struct {
	Name string
	Line int
}

// parseScript returns the assignments in src in execution order, and the
// commands it runs.
func parseScript(file, src string) ([]*assignment, []shellCommand, error) {
	s := &scanner{file: file, src: src, lines: []int{0}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	var out []*assignment
	var cmds []shellCommand
	depth := 0    // if/case/loops/braces
	parens := 0   // subshells
	cond := false // after && or ||
	// had: a command just ended, so an operator may follow; need: an
	// operator (&&, ||, |) waits for its command. Checked outside compound
	// commands, where "case" patterns and ";;" make it harder.
	had, need := false, false
	listStart := 0 // first assignment of the current and-or list in out
	i := 0
	for i < len(src) {
		c := src[i]
		top := depth == 0 && parens == 0
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '\n':
			cond = false
			had = false
			if !need {
				listStart = len(out)
			}
			i++
			continue
		case c == ';' || c == '&' || c == '|':
			op := src[i : i+1]
			if i+1 < len(src) && src[i+1] == c {
				op = src[i : i+2]
			}
			if top && (!had || op == ";;") {
				return nil, nil, s.errorf(i, "syntax error: %q unexpected (want a command before it)", op)
			}
			had = false
			need = op == "&&" || op == "||" || op == "|"
			if op == "&" {
				// The whole and-or list ran in the background, in a
				// subshell: none of its assignments persists.
				for _, a := range out[listStart:] {
					a.Conditional = true
				}
			}
			if !need {
				listStart = len(out)
			}
			cond = op == "&&" || op == "||" || op == "|" // a pipeline runs in subshells
			i += len(op)
			continue
		case c == '(' || c == ')' || c == '<' || c == '>':
			if c == '(' {
				parens++
				had = false
			} else {
				if c == ')' && parens > 0 {
					parens--
				}
				had, need = true, false
			}
			i++
			continue
		}
		// A simple command: assignments, then a command word and arguments.
		var pending []*assignment
		cmdWord := ""
		export := false
		for i < len(src) {
			for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n') {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(src) || src[i] == '#' || isMeta(src[i]) {
				break
			}
			n := nameAt(src, i)
			if n > 0 && i+n < len(src) && src[i+n] == '=' && (cmdWord == "" || export) {
				w, err := s.scanWord(i+n+1, true)
				if err != nil {
					return nil, nil, err
				}
				a := &assignment{
					Name: src[i : i+n], File: file, Line: s.lineOf(i),
					Start: i, ValueStart: i + n + 1, End: w.end,
					Value: w.value.String(), Expansions: w.exps, Export: export,
					Conditional: depth > 0 || parens > 0 || cond, raw: src[i+n+1 : w.end],
				}
				a.Quote = w.style()
				if w.double && !w.single && !w.unquoted && w.parts == 1 && w.firstExpAt == 0 && len(w.exps) == 1 &&
					(w.firstExpRaw == "$"+a.Name || w.firstExpRaw == "${"+a.Name+"}") {
					a.selfRef = w.firstExpRaw
					a.appendLit = w.value.String()
				}
				pending = append(pending, a)
				i = w.end
				continue
			}
			w, err := s.scanWord(i, false)
			if err != nil {
				return nil, nil, err
			}
			text := src[i:w.end]
			if cmdWord == "" {
				cmds = append(cmds, shellCommand{Name: text, Line: s.lineOf(i)})
			}
			i = w.end
			if cmdWord == "unset" {
				for _, name := range strings.Fields(text) {
					if nameAt(name, 0) == len(name) {
						out = append(out, &assignment{Name: name, File: file, Line: s.lineOf(w.start), Start: w.start, ValueStart: w.end, End: w.end,
							Conditional: depth > 0 || parens > 0 || cond, Unset: true})
					}
				}
				continue
			}
			if cmdWord == "" && len(pending) == 0 && !w.single && !w.double {
				switch {
				case reservedOpen[text]:
					depth++
					had, need = false, false
					continue
				case reservedClose[text]:
					if depth > 0 {
						depth--
					}
					had, need = true, false
					continue
				case reservedMid[text]:
					had, need = false, false
					continue
				}
			}
			if cmdWord == "" {
				cmdWord = text
				export = text == "export" && len(pending) == 0
			}
		}
		if len(pending) > 0 || cmdWord != "" {
			had, need = true, false
		}
		// "X=1 | cmd" runs in a subshell: nothing persists ("&" is
		// handled with its whole list above).
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if j < len(src) && src[j] == '|' && (j+1 >= len(src) || src[j+1] != '|') {
			for _, a := range pending {
				a.Conditional = true
			}
		}
		if cmdWord == "" || export {
			out = append(out, pending...)
		}
		// With a command word, the assignments before it only set that
		// command's environment: they do not persist.
	}
	if need && depth == 0 && parens == 0 {
		return nil, nil, s.errorf(len(src), "syntax error: unexpected end of file after && , || or | (want a command)")
	}
	return out, cmds, nil
}

func (w *word) style() quoteStyle {
	switch {
	case w.parts == 0:
		return quoteNone
	case w.parts > 1:
		return quoteMixed
	case w.double:
		return quoteDouble
	case w.single:
		return quoteSingle
	}
	return quoteNone
}

func (w *word) addExp(kind expansionKind, text, name string) {
	if len(w.exps) == 0 {
		w.firstExpAt = w.value.Len()
		w.firstExpRaw = text
	}
	w.exps = append(w.exps, expansion{Kind: kind, Text: text, Name: name})
}

// scanWord scans one word starting at i. In an assignment value, a
// leading '~' and one after an unquoted ':' are tilde expansions.
func (s *scanner) scanWord(i int, assign bool) (*word, error) {
	src := s.src
	w := &word{start: i, firstExpAt: -1}
	inUnquoted := false
	for i < len(src) {
		c := src[i]
		if isMeta(c) {
			break
		}
		if c != '\'' && c != '"' && !inUnquoted {
			inUnquoted = true
			w.unquoted = true
			w.parts++
		}
		switch c {
		case '\\':
			if i+1 >= len(src) {
				w.value.WriteByte('\\')
				i++
				continue
			}
			if src[i+1] != '\n' {
				w.value.WriteByte(src[i+1])
			}
			i += 2
		case '\'':
			inUnquoted = false
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return nil, s.errorf(i, "unterminated single quote: %s (want a closing ')", snippet(src[w.start:]))
			}
			w.value.WriteString(src[i+1 : i+1+j])
			w.single = true
			w.parts++
			i += j + 2
		case '"':
			inUnquoted = false
			end, err := s.scanDouble(i, w)
			if err != nil {
				return nil, err
			}
			w.double = true
			w.parts++
			i = end
		case '$':
			end, err := s.scanDollar(i, w)
			if err != nil {
				return nil, err
			}
			i = end
		case '`':
			end, err := s.skipBacktick(i)
			if err != nil {
				return nil, err
			}
			w.addExp(expandBacktick, src[i:end], "")
			i = end
		case '~':
			if assign && (i == w.start || src[i-1] == ':') {
				j := i + 1
				for j < len(src) && !isMeta(src[j]) && src[j] != '/' && src[j] != ':' {
					j++
				}
				w.addExp(expandTilde, src[i:j], "")
				i = j
				continue
			}
			w.value.WriteByte(c)
			i++
		default:
			w.value.WriteByte(c)
			i++
		}
	}
	w.end = i
	return w, nil
}

// scanDouble scans a "..." part starting at the quote at i.
func (s *scanner) scanDouble(i int, w *word) (int, error) {
	src := s.src
	start := i
	i++
	for i < len(src) {
		switch c := src[i]; c {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 < len(src) {
				switch src[i+1] {
				case '$', '`', '"', '\\':
					w.value.WriteByte(src[i+1])
				case '\n':
				default:
					w.value.WriteByte('\\')
					w.value.WriteByte(src[i+1])
				}
				i += 2
				continue
			}
			w.value.WriteByte('\\')
			i++
		case '$':
			end, err := s.scanDollar(i, w)
			if err != nil {
				return 0, err
			}
			i = end
		case '`':
			end, err := s.skipBacktick(i)
			if err != nil {
				return 0, err
			}
			w.addExp(expandBacktick, src[i:end], "")
			i = end
		default:
			w.value.WriteByte(c)
			i++
		}
	}
	return 0, s.errorf(start, "unterminated double quote: %s (want a closing \")", snippet(src[w.start:]))
}

// scanDollar handles a '$' at i: an expansion, or a literal '$'.
func (s *scanner) scanDollar(i int, w *word) (int, error) {
	src := s.src
	if i+1 >= len(src) {
		w.value.WriteByte('$')
		return i + 1, nil
	}
	switch c := src[i+1]; {
	case c == '(':
		end, err := s.skipParen(i + 2)
		if err != nil {
			return 0, err
		}
		kind := expandCommand
		if i+2 < len(src) && src[i+2] == '(' {
			kind = expandArithmetic
		}
		w.addExp(kind, src[i:end], "")
		return end, nil
	case c == '{':
		j := i + 2
		depth := 1
		for j < len(src) && depth > 0 {
			switch src[j] {
			case '\\':
				j++
			case '{':
				depth++
			case '}':
				depth--
			}
			j++
		}
		if depth > 0 {
			return 0, s.errorf(i, "unterminated ${: %s (want a closing })", snippet(src[i:]))
		}
		n := nameAt(src, i+2)
		kind := expandVariable
		if n == 0 {
			kind = expandSpecial
		}
		w.addExp(kind, src[i:j], src[i+2:i+2+n])
		return j, nil
	case isNameStart(c):
		n := nameAt(src, i+1)
		w.addExp(expandVariable, src[i:i+1+n], src[i+1:i+1+n])
		return i + 1 + n, nil
	case c >= '0' && c <= '9' || strings.IndexByte("@*#?$!-", c) >= 0:
		w.addExp(expandSpecial, src[i:i+2], "")
		return i + 2, nil
	}
	w.value.WriteByte('$')
	return i + 1, nil
}

// skipParen returns the offset after the ')' that closes a "$(" whose
// body starts at i, honouring quotes and nesting.
func (s *scanner) skipParen(i int) (int, error) {
	src := s.src
	start := i - 2
	depth := 1
	for i < len(src) {
		switch src[i] {
		case '\\':
			i += 2
			continue
		case '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return 0, s.errorf(i, "unterminated single quote inside %s", snippet(src[start:]))
			}
			i += j + 2
			continue
		case '"':
			var tmp word
			end, err := s.scanDouble(i, &tmp)
			if err != nil {
				return 0, err
			}
			i = end
			continue
		case '`':
			end, err := s.skipBacktick(i)
			if err != nil {
				return 0, err
			}
			i = end
			continue
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return 0, s.errorf(start, "unterminated command substitution: %s (want a closing ))", snippet(src[start:]))
}

// skipBacktick returns the offset after the backtick closing the one at i.
func (s *scanner) skipBacktick(i int) (int, error) {
	src := s.src
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '`':
			return j + 1, nil
		}
	}
	return 0, s.errorf(i, "unterminated backquote: %s (want a closing `)", snippet(src[i:]))
}

func snippet(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}
