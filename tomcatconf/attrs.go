package tomcatconf

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// docVersion is the Tomcat release whose configuration reference
// (webapps/docs/config/http.xml, executor.xml and valve.xml) the attribute
// table in attrspecs_gen.go was derived from.
const docVersion = "11.0.10"

// attrKind is the type of an attribute value, as Tomcat's documentation gives it.
type attrKind int

// Attribute kinds.
const (
	kindString attrKind = iota
	kindInt             // a Java int
	kindLong            // a Java long
	kindBool            // true or false
)

// String returns the kind as Tomcat's documentation writes it.
func (k attrKind) String() string {
	return [...]string{"string", "int", "long", "boolean"}[k]
}

// attrSpec is what Tomcat's documentation says about one attribute.
type attrSpec struct {
	Name    string
	Section string // the documentation subsection ("Standard Implementation")
	Kind    attrKind
	Default string // the documented default, "" when none could be read
	Min     int64  // smallest allowed value for kindInt/kindLong
	Max     int64  // largest allowed value for kindInt/kindLong; 0: the kind's own limit
}

// Element kinds the attribute tables cover.
const (
	elemConnector = "Connector"
	elemExecutor  = "Executor"
	// elemAccessLogValve is <Valve className="org.apache.catalina.valves.AccessLogValve">.
	elemAccessLogValve = "AccessLogValve"
)

// specs returns the documented attributes of elem (elemConnector,
// elemExecutor or elemAccessLogValve), by name. The table is derived from
// Tomcat's documentation source (webapps/docs/config/http.xml,
// executor.xml and valve.xml of docVersion) by TestGenerateAttrSpecs and
// kept in attrspecs_gen.go; the returned map must not be modified.
func specs(elem string) (map[string]attrSpec, error) {
	m, ok := attrSpecs[elem]
	if !ok {
		return nil, fmt.Errorf("tomcatconf: no attribute documentation for <%s>", elem)
	}
	return m, nil
}

// validate checks value for the attribute name of elem (elemConnector,
// elemExecutor or elemAccessLogValve) against Tomcat's documentation. An unknown name returns an
// error compatible with errors.Is(err, ErrUnknownAttr) that suggests the
// closest documented name; a value of the wrong kind or out of range, one
// compatible with ErrInvalidValue. A value holding a ${property}
// placeholder is accepted as is: Tomcat resolves it at start.
func validate(elem, name, value string) error {
	m, err := specs(elem)
	if err != nil {
		return err
	}
	spec, ok := m[name]
	if !ok {
		return &attrError{Elem: elem, Attr: name, Value: value, Err: ErrUnknownAttr, Suggest: suggest(m, name)}
	}
	if placeholder(value) {
		return nil
	}
	switch spec.Kind {
	case kindInt, kindLong:
		bits := 32
		if spec.Kind == kindLong {
			bits = 64
		}
		n, err := strconv.ParseInt(value, 10, bits)
		if err != nil {
			return &attrError{Elem: elem, Attr: name, Value: value, Err: ErrInvalidValue,
				Expected: fmt.Sprintf("a %d-bit integer (%s)", bits, rangeText(spec, bits))}
		}
		if n < spec.Min || (spec.Max != 0 && n > spec.Max) {
			return &attrError{Elem: elem, Attr: name, Value: value, Err: ErrInvalidValue,
				Expected: fmt.Sprintf("an integer %s", rangeText(spec, bits))}
		}
	case kindBool:
		if value != "true" && value != "false" {
			return &attrError{Elem: elem, Attr: name, Value: value, Err: ErrInvalidValue, Expected: "true or false"}
		}
	}
	return nil
}

func rangeText(s attrSpec, bits int) string {
	if s.Max != 0 {
		return fmt.Sprintf("from %d to %d", s.Min, s.Max)
	}
	switch s.Min {
	case -1:
		return ">= 0, or -1 for no limit"
	case math.MinInt32, math.MinInt64:
		return fmt.Sprintf("of %d bits", bits)
	default:
		return fmt.Sprintf(">= %d", s.Min)
	}
}

// attrError is an attribute name or value Tomcat would not accept.
type attrError struct {
	File     string // the server.xml, when known
	Line     int    // line of the element, when known
	Elem     string // "Connector" or "Executor"
	Attr     string
	Value    string
	Expected string // what would be valid
	Suggest  string // for an unknown name: the closest documented name
	Err      error  // ErrUnknownAttr or ErrInvalidValue
}

// Error names the file, line, element, attribute and what is expected.
func (e *attrError) Error() string {
	var b strings.Builder
	b.WriteString("tomcatconf: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, " line %d", e.Line)
		}
		b.WriteString(": ")
	}
	switch e.Err {
	case ErrUnknownAttr:
		fmt.Fprintf(&b, "<%s> has no attribute %q in Tomcat %s's documentation", e.Elem, e.Attr, docVersion)
		if e.Suggest != "" {
			fmt.Fprintf(&b, "; did you mean %q?", e.Suggest)
		}
	default:
		fmt.Fprintf(&b, "%s=%q on <%s>: want %s", e.Attr, e.Value, e.Elem, e.Expected)
	}
	return b.String()
}

// Unwrap returns ErrUnknownAttr or ErrInvalidValue.
func (e *attrError) Unwrap() error { return e.Err }

// suggest returns the documented name closest to name by edit distance,
// or "" when none is close.
func suggest(m map[string]attrSpec, name string) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	best, bestD := "", math.MaxInt
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return n
		}
		if d := levenshtein(strings.ToLower(n), strings.ToLower(name)); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD > len(name)/3+1 {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
