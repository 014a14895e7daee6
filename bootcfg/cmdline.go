package bootcfg

import (
	"fmt"
	"strings"
)

// Param is one kernel parameter: "quiet" (Key only), "iommu.strict=1",
// "root=" (HasValue with an empty Value) or `dyndbg="file x +p"` (Value
// holds the text between the quotes).
type Param struct {
	Key      string
	Value    string
	HasValue bool
}

// P returns the parameter key=value, or the flag key when value is "".
// It is shorthand for building the parameters to set.
func P(key, value string) Param {
	return Param{Key: key, Value: value, HasValue: value != ""}
}

// ParseParam parses one parameter in the kernel's syntax, e.g.
// "iommu.strict=1", "quiet" or `acpi_osi="Windows 2020"`.
func ParseParam(s string) (Param, error) {
	c, err := ParseCmdline(s)
	if err != nil {
		return Param{}, err
	}
	if len(c.toks) != 1 || c.sep1 > 0 {
		return Param{}, fmt.Errorf("%w: %q is not exactly one parameter (want key or key=value)", ErrInvalidParam, s)
	}
	p := c.toks[0].param
	return p, p.Validate()
}

// ParseParams parses a space-separated list of parameters, e.g.
// "iommu.strict=1 iommu.passthrough=0".
func ParseParams(s string) ([]Param, error) {
	c, err := ParseCmdline(s)
	if err != nil {
		return nil, err
	}
	if c.sep1 > 0 {
		return nil, fmt.Errorf("%w: %q: \"--\" starts the init arguments, not a kernel parameter", ErrInvalidParam, s)
	}
	ps := c.Params()
	for _, p := range ps {
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// String renders p as the kernel reads it: key, key= or key=value, with
// the value in double quotes when it holds white space.
func (p Param) String() string {
	if !p.HasValue {
		return p.Key
	}
	if strings.ContainsAny(p.Value, kernelSpace) {
		return p.Key + `="` + p.Value + `"`
	}
	return p.Key + "=" + p.Value
}

// Validate reports whether p can be written on a kernel command line: the
// key must be non-empty and hold no white space, '=' or '"'; the value may
// hold no '"' and no line break or other control character (the kernel has
// no escape for them). The error matches ErrInvalidParam.
func (p Param) Validate() error {
	switch {
	case p.Key == "":
		return fmt.Errorf("%w: empty key in %q (want key or key=value)", ErrInvalidParam, p.String())
	case p.Key == "--":
		return fmt.Errorf("%w: \"--\" ends the kernel parameters; it is not a parameter", ErrInvalidParam)
	case strings.ContainsAny(p.Key, kernelSpace+`="`) || hasControl(p.Key):
		return fmt.Errorf("%w: key %q: a key may not contain white space, '=' or '\"'", ErrInvalidParam, p.Key)
	case !p.HasValue && p.Value != "":
		return fmt.Errorf("%w: %s: Value %q set without HasValue (use P(key, value))", ErrInvalidParam, p.Key, p.Value)
	case strings.Contains(p.Value, `"`):
		return fmt.Errorf("%w: %s: value %q contains a double quote, which the kernel cannot escape", ErrInvalidParam, p.Key, p.Value)
	case hasControl(p.Value) || strings.ContainsAny(p.Value, "\n\r\v\f"):
		return fmt.Errorf("%w: %s: value %q contains a line break or control character", ErrInvalidParam, p.Key, p.Value)
	}
	return nil
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 && s[i] != '\t' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// kernelSpace is what the kernel's isspace() accepts between parameters.
const kernelSpace = " \t\n\v\f\r"

func isKernelSpace(b byte) bool { return strings.IndexByte(kernelSpace, b) >= 0 }

// keyEqual reports whether two parameter keys name the same parameter:
// the kernel treats '-' and '_' as the same character in names
// (parameq in kernel/params.c).
func keyEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == '-' {
			x = '_'
		}
		if y == '-' {
			y = '_'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Cmdline is a parsed kernel command line. It keeps the exact text of
// every parameter and the white space between them, so String returns the
// input unchanged until an edit, and an edit changes only the parameters
// it names. Parameters after a bare "--" are the init program's arguments:
// Get, Set and Remove never touch them.
//
// The zero value is an empty command line.
type Cmdline struct {
	toks  []ctoken
	trail string // white space after the last token
	sep1  int    // 1 + index of the "--" token; 0 when there is none
	lead  string // white space before a parameter added to an empty list
}

type ctoken struct {
	ws    string // white space before the token
	raw   string // the token as written
	param Param  // parsed form (Key "--" for the separator)
}

// ParseCmdline parses s with the kernel's rules (next_arg in
// lib/cmdline.c): parameters are separated by white space; a double quote
// starts or ends a quoted section in which white space does not separate;
// the key ends at the first '='; quotes around a value are removed; a bare
// "--" ends the kernel's parameters. An unterminated quote is an error
// matching ErrSyntax.
func ParseCmdline(s string) (*Cmdline, error) {
	c := &Cmdline{}
	i := 0
	for i < len(s) {
		start := i
		for i < len(s) && isKernelSpace(s[i]) {
			i++
		}
		ws := s[start:i]
		if i == len(s) {
			c.trail = ws
			break
		}
		tokStart := i
		inQuote := false
		for i < len(s) && (inQuote || !isKernelSpace(s[i])) {
			if s[i] == '"' {
				inQuote = !inQuote
			}
			i++
		}
		if inQuote {
			return nil, &SyntaxError{Offset: tokStart, Msg: fmt.Sprintf("unterminated double quote in kernel parameter %q", s[tokStart:i])}
		}
		raw := s[tokStart:i]
		if raw == "--" && c.sep1 == 0 {
			c.sep1 = len(c.toks) + 1
		}
		c.toks = append(c.toks, ctoken{ws: ws, raw: raw, param: splitParam(raw)})
	}
	return c, nil
}

// splitParam splits one token as the kernel does.
func splitParam(raw string) Param {
	t := raw
	quoted := false
	if strings.HasPrefix(t, `"`) {
		t = t[1:]
		quoted = true
	}
	eq := strings.IndexByte(t, '=')
	if eq < 0 {
		if quoted {
			t = strings.TrimSuffix(t, `"`)
		}
		return Param{Key: t}
	}
	key, val := t[:eq], t[eq+1:]
	if strings.HasPrefix(val, `"`) {
		val = val[1:]
		val = strings.TrimSuffix(val, `"`)
	} else if quoted {
		val = strings.TrimSuffix(val, `"`)
	}
	return Param{Key: key, Value: val, HasValue: true}
}

// String returns the command line: the parsed text with the edits made.
func (c *Cmdline) String() string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, t := range c.toks {
		b.WriteString(t.ws)
		b.WriteString(t.raw)
	}
	b.WriteString(c.trail)
	return b.String()
}

// Clone returns an independent copy of c.
func (c *Cmdline) Clone() *Cmdline {
	if c == nil {
		return &Cmdline{}
	}
	d := *c
	d.toks = append([]ctoken(nil), c.toks...)
	return &d
}

func (c *Cmdline) kernelEnd() int {
	if c.sep1 > 0 {
		return c.sep1 - 1
	}
	return len(c.toks)
}

// Params returns the kernel parameters, in order, without the init
// arguments.
func (c *Cmdline) Params() []Param {
	if c == nil {
		return nil
	}
	var ps []Param
	for _, t := range c.toks[:c.kernelEnd()] {
		ps = append(ps, t.param)
	}
	return ps
}

// Init returns the arguments after "--", which the kernel passes to init,
// or nil when the command line has no "--".
func (c *Cmdline) Init() []string {
	if c == nil || c.sep1 == 0 {
		return nil
	}
	var args []string
	for _, t := range c.toks[c.sep1:] {
		args = append(args, t.raw)
	}
	return args
}

// Get returns the last occurrence of key (the one the kernel applies last)
// and whether there is one. Keys match as in the kernel: '-' and '_' are
// the same character.
func (c *Cmdline) Get(key string) (Param, bool) {
	all := c.GetAll(key)
	if len(all) == 0 {
		return Param{}, false
	}
	return all[len(all)-1], true
}

// GetAll returns every occurrence of key, in order.
func (c *Cmdline) GetAll(key string) []Param {
	var ps []Param
	for _, p := range c.Params() {
		if keyEqual(p.Key, key) {
			ps = append(ps, p)
		}
	}
	return ps
}

// Has reports whether the kernel would see p: the last occurrence of its
// key has the same value (or, for a flag, the key is present).
func (c *Cmdline) Has(p Param) bool {
	got, ok := c.Get(p.Key)
	return ok && got.HasValue == p.HasValue && got.Value == p.Value
}

// Set sets each parameter: every existing occurrence of its key is
// replaced by one, at the position of the first; a key not present is
// appended after the last kernel parameter (before "--"). An occurrence
// that already reads the same is kept byte for byte. Set validates all
// parameters first and changes nothing when one is invalid (the error
// matches ErrInvalidParam). It reports whether the command line changed.
func (c *Cmdline) Set(ps ...Param) (bool, error) {
	for _, p := range ps {
		if err := p.Validate(); err != nil {
			return false, err
		}
	}
	before := c.String()
	for _, p := range ps {
		c.set(p)
	}
	return c.String() != before, nil
}

func (c *Cmdline) set(p Param) {
	first := -1
	for i := 0; i < c.kernelEnd(); i++ {
		if !keyEqual(c.toks[i].param.Key, p.Key) {
			continue
		}
		if first < 0 {
			first = i
			if t := c.toks[i].param; t.Key != p.Key || t.HasValue != p.HasValue || t.Value != p.Value {
				c.toks[i].raw = p.String()
				c.toks[i].param = p
			}
			continue
		}
		c.remove(i)
		i--
	}
	if first >= 0 {
		return
	}
	at := c.kernelEnd()
	ws := " "
	if at == 0 {
		ws = c.lead
		if len(c.toks) > 0 {
			// Inserting before "--" at the start: keep its leading space
			// ahead of the new parameter.
			ws, c.toks[0].ws = c.toks[0].ws, " "
		}
	}
	t := ctoken{ws: ws, raw: p.String(), param: p}
	c.toks = append(c.toks, ctoken{})
	copy(c.toks[at+1:], c.toks[at:])
	c.toks[at] = t
	if c.sep1 > 0 {
		c.sep1++
	}
}

// remove deletes token i. The first token's leading white space passes to
// the token after it, so "a b" minus "a" is "b", not " b".
func (c *Cmdline) remove(i int) {
	if i == 0 && len(c.toks) > 1 {
		c.toks[1].ws = c.toks[0].ws
	}
	c.toks = append(c.toks[:i], c.toks[i+1:]...)
	if c.sep1-1 > i {
		c.sep1--
	}
}

// Remove deletes every occurrence of each key ('-' and '_' alike) among
// the kernel parameters and returns how many were removed.
func (c *Cmdline) Remove(keys ...string) int {
	n := 0
	for _, k := range keys {
		for i := 0; i < c.kernelEnd(); i++ {
			if keyEqual(c.toks[i].param.Key, k) {
				c.remove(i)
				i--
				n++
			}
		}
	}
	return n
}
