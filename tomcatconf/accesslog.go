package tomcatconf

import (
	"fmt"
	"strings"

	"github.com/beevik/etree"
)

// AccessLogMode is how DisableAccessLog turns an AccessLogValve off.
type AccessLogMode int

// Ways to disable the access log.
const (
	// AccessLogComment wraps the element in <!-- -->, as the Arm
	// Neoverse Tomcat tuning guide does; EnableAccessLog unwraps it to
	// the exact original bytes.
	AccessLogComment AccessLogMode = iota
	// AccessLogRemove deletes the element (and its line, when the line
	// holds nothing else). The backup Save keeps is the only way back.
	AccessLogRemove
	// AccessLogEnabledFalse adds enabled="false" (AbstractAccessLogValve's
	// enabled property); EnableAccessLog removes it again. Tomcat still
	// creates the log file when the Valve starts but writes no line to it
	// (Tomcat 10.1).
	AccessLogEnabledFalse
)

// UnmarshalText sets m from "comment", "remove" or "enabled-false", the
// words String returns, so a mode can be a flag or a configuration value.
func (m *AccessLogMode) UnmarshalText(text []byte) error {
	switch string(text) {
	case "comment":
		*m = AccessLogComment
	case "remove":
		*m = AccessLogRemove
	case "enabled-false", "enabled=false":
		*m = AccessLogEnabledFalse
	default:
		return fmt.Errorf("tomcatconf: access log mode %q: want comment, remove or enabled-false", text)
	}
	return nil
}

// String returns the mode as UnmarshalText reads it.
func (m AccessLogMode) String() string {
	return [...]string{"comment", "remove", "enabled-false"}[m]
}

// isAccessLogValve reports whether className is one of Tomcat's access log
// valves: a class whose simple name ends in AccessLogValve
// (AccessLogValve, ExtendedAccessLogValve, JsonAccessLogValve,
// JDBCAccessLogValve).
func isAccessLogValve(className string) bool {
	simple := className[strings.LastIndexByte(className, '.')+1:]
	return strings.HasSuffix(simple, "AccessLogValve")
}

// AccessLogValves returns the active access log Valves — those whose
// class's simple name ends in AccessLogValve (AccessLogValve,
// ExtendedAccessLogValve, JsonAccessLogValve, JDBCAccessLogValve) — in
// every Engine, Host and Context of every Service.
func (c *Config) AccessLogValves() []Valve {
	var out []Valve
	for _, v := range c.Valves("") {
		if isAccessLogValve(v.ClassName) {
			out = append(out, v)
		}
	}
	return out
}

// DisableAccessLog turns off every active access log Valve, in every Host
// of every Service, the way mode says, and returns the Valves it changed
// (none when there is nothing to do). Only those elements' bytes change.
// On error nothing is changed.
func (c *Config) DisableAccessLog(mode AccessLogMode) ([]Valve, error) {
	valves := c.AccessLogValves()
	var todo []Valve
	for _, v := range valves {
		if mode == AccessLogEnabledFalse {
			if en, _ := v.Attr("enabled"); en == "false" {
				continue
			}
		}
		if mode == AccessLogComment {
			sp := c.spans[v.elem]
			if strings.Contains(string(c.src[sp.start:sp.end]), "--") {
				return nil, fmt.Errorf("tomcatconf: %s line %d: the %s element contains \"--\", which a comment cannot hold; use the remove or enabled-false mode",
					c.path, v.Line, v.ClassName)
			}
		}
		todo = append(todo, v)
	}
	saved := c.snapshot()
	// Last first, so the element indexes of the others stay valid.
	for i := len(todo) - 1; i >= 0; i-- {
		v := todo[i]
		sp := c.spans[v.elem]
		var err error
		switch mode {
		case AccessLogComment:
			err = c.splice(sp.start, sp.end, "<!--"+string(c.src[sp.start:sp.end])+"-->")
		case AccessLogRemove:
			from, to := wholeLines(c.src, sp.start, sp.end)
			err = c.splice(from, to, "")
		case AccessLogEnabledFalse:
			err = c.setAttrs(v.elem, []attrChange{{name: "enabled", value: "false"}})
		default:
			err = fmt.Errorf("tomcatconf: unknown access log mode %d", mode)
		}
		if err != nil {
			c.restore(saved)
			return nil, err
		}
	}
	return todo, nil
}

// wholeLines widens [from, to) to whole lines when the lines hold nothing
// but whitespace besides it.
func wholeLines(src []byte, from, to int) (int, int) {
	ls := from
	for ls > 0 && (src[ls-1] == ' ' || src[ls-1] == '\t') {
		ls--
	}
	if ls > 0 && src[ls-1] != '\n' {
		return from, to
	}
	le := to
	for le < len(src) && (src[le] == ' ' || src[le] == '\t' || src[le] == '\r') {
		le++
	}
	switch {
	case le < len(src) && src[le] == '\n':
		return ls, le + 1
	case le == len(src):
		return ls, le
	}
	return from, to
}

// EnableAccessLog undoes DisableAccessLog: it removes enabled="false" from
// active access log Valves and uncomments comments (inside an Engine, Host
// or Context) that hold exactly one access log Valve element. A comment
// DisableAccessLog wrote unwraps to the original bytes. It returns how many
// Valves it enabled; none is an error compatible with errors.Is(err,
// ErrNotFound) (a removed Valve can only come back from the backup).
func (c *Config) EnableAccessLog() (int, error) {
	saved := c.snapshot()
	n := 0
	for _, v := range c.AccessLogValves() {
		if en, ok := v.Attr("enabled"); ok && en == "false" {
			if err := c.setAttrs(v.elem, []attrChange{{name: "enabled", remove: true}}); err != nil {
				c.restore(saved)
				return 0, err
			}
			n++
		}
	}
	for i := len(c.comments) - 1; i >= 0; i-- {
		cm := c.comments[i]
		if cm.parent < 0 {
			continue
		}
		switch c.elems[cm.parent].Tag {
		case "Engine", "Host", "Context":
		default:
			continue
		}
		body := strings.TrimSpace(cm.text)
		if !commentedAccessLog(body) {
			continue
		}
		if err := c.splice(cm.start, cm.end, body); err != nil {
			c.restore(saved)
			return 0, err
		}
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: %s: no disabled access log Valve (commented out or enabled=\"false\")", ErrNotFound, c.path)
	}
	return n, nil
}

// commentedAccessLog reports whether s is exactly one access log Valve
// element and nothing else.
func commentedAccessLog(s string) bool {
	if !strings.HasPrefix(s, "<Valve") {
		return false
	}
	spans, comments, err := scan([]byte(s))
	if err != nil || len(spans) != 1 || len(comments) != 0 || spans[0].start != 0 || spans[0].end != len(s) {
		return false
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromString(s); err != nil || doc.Root() == nil {
		return false
	}
	return isAccessLogValve(doc.Root().SelectAttrValue("className", ""))
}

// SetAccessLog sets attributes on every active access log Valve, validated
// against the Access Log Valve attributes of Tomcat's documentation (plus
// enabled); on error nothing changes. It returns the changes made.
func (c *Config) SetAccessLog(attrs []Attr, opts *SetOptions) ([]Change, error) {
	var o SetOptions
	if opts != nil {
		o = *opts
	}
	valves := c.AccessLogValves()
	if len(valves) == 0 {
		return nil, fmt.Errorf("%w: %s: no active access log Valve", ErrNotFound, c.path)
	}
	plans := make([][]Change, len(valves))
	for i, v := range valves {
		ch, err := c.plan(elemAccessLogValve, v.ClassName, v.Line, v.Attrs, attrs, o)
		if err != nil {
			return nil, err
		}
		plans[i] = ch
	}
	saved := c.snapshot()
	var all []Change
	for i, v := range valves {
		if err := c.setAttrs(v.elem, toAttrChanges(plans[i])); err != nil {
			c.restore(saved)
			return nil, err
		}
		all = append(all, plans[i]...)
	}
	return all, nil
}
