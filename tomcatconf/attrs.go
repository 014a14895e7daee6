package tomcatconf

import (
	"embed"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/beevik/etree"
)

// DocVersion is the Tomcat release whose configuration reference
// (webapps/docs/config/http.xml and executor.xml, copied into tomcatdoc/)
// validates attribute names and values.
const DocVersion = "11.0.10"

//go:embed tomcatdoc/http-11.0.10.xml tomcatdoc/executor-11.0.10.xml tomcatdoc/valve-11.0.10.xml
var docFS embed.FS

// Kind is the type of an attribute value, as Tomcat's documentation gives it.
type Kind int

// Attribute kinds.
const (
	KindString Kind = iota
	KindInt         // a Java int
	KindLong        // a Java long
	KindBool        // true or false
)

// String returns the kind as Tomcat's documentation writes it.
func (k Kind) String() string {
	return [...]string{"string", "int", "long", "boolean"}[k]
}

// AttrSpec is what Tomcat's documentation says about one attribute.
type AttrSpec struct {
	Name    string
	Section string // the documentation subsection ("Standard Implementation")
	Kind    Kind
	Default string // the documented default, "" when none could be read
	Min     int64  // smallest allowed value for KindInt/KindLong
}

// Element kinds the attribute tables cover.
const (
	ElemConnector = "Connector"
	ElemExecutor  = "Executor"
	// ElemAccessLogValve is <Valve className="org.apache.catalina.valves.AccessLogValve">.
	ElemAccessLogValve = "AccessLogValve"
)

var (
	specsOnce sync.Once
	specs     map[string]map[string]AttrSpec
	specsErr  error
)

// Specs returns the documented attributes of elem (ElemConnector,
// ElemExecutor or ElemAccessLogValve), read from Tomcat's documentation source embedded in the
// package, by name.
func Specs(elem string) (map[string]AttrSpec, error) {
	specsOnce.Do(func() {
		specs = map[string]map[string]AttrSpec{}
		for elem, file := range map[string]string{
			ElemConnector:      "tomcatdoc/http-" + DocVersion + ".xml",
			ElemExecutor:       "tomcatdoc/executor-" + DocVersion + ".xml",
			ElemAccessLogValve: "tomcatdoc/valve-" + DocVersion + ".xml",
		} {
			data, err := docFS.ReadFile(file)
			if err != nil {
				specsErr = err
				return
			}
			m, err := parseAttrDoc(data, elem)
			if err != nil {
				specsErr = fmt.Errorf("tomcatconf: %s: %w", file, err)
				return
			}
			specs[elem] = m
		}
	})
	if specsErr != nil {
		return nil, specsErr
	}
	m, ok := specs[elem]
	if !ok {
		return nil, fmt.Errorf("tomcatconf: no attribute documentation for <%s>", elem)
	}
	return m, nil
}

var (
	reDefaultNum  = regexp.MustCompile(`(?i)(?:default(?: value)?(?: is| of)?|is set to|defaults to)\s+(?:is\s+)?(-?\d+|Integer\.MAX_VALUE)\b`)
	reDefaultBool = regexp.MustCompile(`(?i)(?:default(?: value)?(?: is| of)?|is set to|defaults to)\s+(true|false)\b`)
	reMinusOne    = regexp.MustCompile(`(^|[^\d\w])-1([^\d]|$)`)
	reNegative    = regexp.MustCompile(`(?i)\b(value is negative|negative value|less than zero)`)
	reSpaces      = regexp.MustCompile(`\s+`)
)

// parseAttrDoc reads <attribute name="..."> entries from a Tomcat
// configuration reference page. For a Connector, the attributes of the
// nested SSLHostConfig and Certificate elements are left out.
func parseAttrDoc(data []byte, elem string) (map[string]AttrSpec, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Entity = map[string]string{"project": ""}
	if err := doc.ReadFromBytes(data); err != nil {
		return nil, err
	}
	out := map[string]AttrSpec{}
	for _, sub := range doc.FindElements("//subsection") {
		section := sub.SelectAttrValue("name", "")
		parent := sub.Parent()
		inAttributes := parent != nil && parent.SelectAttrValue("name", "") == "Attributes"
		switch elem {
		case ElemConnector:
			if !inAttributes && section != "SSL Support - Connector - NIO and NIO2" {
				continue
			}
		case ElemExecutor:
			if !inAttributes || section == "Virtual Thread Implementation" {
				continue
			}
		case ElemAccessLogValve:
			if section != "Attributes" || parent == nil || parent.SelectAttrValue("name", "") != "Access Log Valve" {
				continue
			}
		}
		for _, a := range sub.FindElements("./attributes/attribute") {
			name := a.SelectAttrValue("name", "")
			if name == "" {
				continue
			}
			if _, dup := out[name]; dup {
				continue
			}
			out[name] = classify(name, section, reSpaces.ReplaceAllString(textOf(a), " "))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no <attribute> entries found")
	}
	if elem == ElemAccessLogValve {
		// AbstractAccessLogValve.setEnabled exists in every Tomcat since 6
		// but the reference page does not list it.
		out["enabled"] = AttrSpec{Name: "enabled", Section: "AbstractAccessLogValve", Kind: KindBool, Default: "true"}
	}
	return out, nil
}

// mentionsMinusOne reports whether a sentence of text gives -1 as a value
// to set, not as what JMX reports ("it will be reported ... as -1").
func mentionsMinusOne(text string) bool {
	for _, sentence := range strings.Split(text, ". ") {
		if reMinusOne.MatchString(sentence) && !strings.Contains(sentence, "reported") {
			return true
		}
	}
	return false
}

func textOf(e *etree.Element) string {
	var b strings.Builder
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		for _, t := range e.Child {
			switch t := t.(type) {
			case *etree.CharData:
				b.WriteString(t.Data)
			case *etree.Element:
				walk(t)
			}
		}
	}
	walk(e)
	return strings.TrimSpace(b.String())
}

// classify derives an attribute's kind, default and lower bound from its
// documentation: an explicit "(int)"-style prefix, or else a numeric or
// boolean documented default. -1 is allowed where the text mentions it
// (maxConnections, maxKeepAliveRequests, connectionTimeout), any negative
// value where it says so, otherwise numbers start at 0.
func classify(name, section, text string) AttrSpec {
	s := AttrSpec{Name: name, Section: section, Kind: KindString}
	lower := strings.ToLower(text)
	switch {
	case strings.HasPrefix(lower, "(int)"):
		s.Kind = KindInt
	case strings.HasPrefix(lower, "(long)"):
		s.Kind = KindLong
	case strings.HasPrefix(lower, "(bool)"), strings.HasPrefix(lower, "(boolean)"):
		s.Kind = KindBool
	case strings.HasPrefix(lower, "(string)"):
		s.Kind = KindString
	}
	if m := reDefaultNum.FindStringSubmatch(text); m != nil {
		s.Default = m[1]
		if s.Kind == KindString && !strings.HasPrefix(lower, "(string)") {
			s.Kind = KindInt
		}
	} else if m := reDefaultBool.FindStringSubmatch(text); m != nil {
		s.Default = strings.ToLower(m[1])
		if s.Kind == KindString && !strings.HasPrefix(lower, "(string)") {
			s.Kind = KindBool
		}
	}
	switch {
	case reNegative.MatchString(text):
		s.Min = math.MinInt32
	case mentionsMinusOne(text):
		s.Min = -1
	}
	if s.Kind == KindLong && s.Min == math.MinInt32 {
		s.Min = math.MinInt64
	}
	// A pool needs at least one thread: java.util.concurrent.ThreadPoolExecutor
	// rejects a maximum pool size of 0.
	if name == "maxThreads" {
		s.Min = 1
	}
	return s
}

// Validate checks value for the attribute name of elem (ElemConnector,
// ElemExecutor or ElemAccessLogValve) against Tomcat's documentation. An unknown name returns an
// error compatible with errors.Is(err, ErrUnknownAttr) that suggests the
// closest documented name; a value of the wrong kind or out of range, one
// compatible with ErrInvalidValue. A value holding a ${property}
// placeholder is accepted as is: Tomcat resolves it at start.
func Validate(elem, name, value string) error {
	m, err := Specs(elem)
	if err != nil {
		return err
	}
	spec, ok := m[name]
	if !ok {
		return &AttrError{Elem: elem, Attr: name, Value: value, Err: ErrUnknownAttr, Suggest: suggest(m, name)}
	}
	if placeholder(value) {
		return nil
	}
	switch spec.Kind {
	case KindInt, KindLong:
		bits := 32
		if spec.Kind == KindLong {
			bits = 64
		}
		n, err := strconv.ParseInt(value, 10, bits)
		if err != nil {
			return &AttrError{Elem: elem, Attr: name, Value: value, Err: ErrInvalidValue,
				Expected: fmt.Sprintf("a %d-bit integer (%s)", bits, rangeText(spec, bits))}
		}
		if n < spec.Min {
			return &AttrError{Elem: elem, Attr: name, Value: value, Err: ErrInvalidValue,
				Expected: fmt.Sprintf("an integer %s", rangeText(spec, bits))}
		}
	case KindBool:
		if value != "true" && value != "false" {
			return &AttrError{Elem: elem, Attr: name, Value: value, Err: ErrInvalidValue, Expected: "true or false"}
		}
	}
	return nil
}

func rangeText(s AttrSpec, bits int) string {
	switch s.Min {
	case -1:
		return ">= 0, or -1 for no limit"
	case math.MinInt32, math.MinInt64:
		return fmt.Sprintf("of %d bits", bits)
	default:
		return fmt.Sprintf(">= %d", s.Min)
	}
}

// AttrError is an attribute name or value Tomcat would not accept.
type AttrError struct {
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
func (e *AttrError) Error() string {
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
		fmt.Fprintf(&b, "<%s> has no attribute %q in Tomcat %s's documentation", e.Elem, e.Attr, DocVersion)
		if e.Suggest != "" {
			fmt.Fprintf(&b, "; did you mean %q?", e.Suggest)
		}
	default:
		fmt.Fprintf(&b, "%s=%q on <%s>: want %s", e.Attr, e.Value, e.Elem, e.Expected)
	}
	return b.String()
}

// Unwrap returns ErrUnknownAttr or ErrInvalidValue.
func (e *AttrError) Unwrap() error { return e.Err }

// suggest returns the documented name closest to name by edit distance,
// or "" when none is close.
func suggest(m map[string]AttrSpec, name string) string {
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
