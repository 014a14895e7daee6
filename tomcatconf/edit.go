package tomcatconf

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// SetOptions tune SetConnector and SetExecutor. A nil *SetOptions means
// the defaults.
type SetOptions struct {
	// ToExecutor sends thread attributes (maxThreads, minSpareThreads,
	// threadPriority) set on a Connector that uses an Executor to that
	// Executor, where Tomcat reads them. Default: false, such a set fails
	// with ErrExecutorThreads.
	ToExecutor bool
	// OverwritePlaceholders lets a new value replace a ${property}
	// placeholder. Default: false, which fails with ErrPlaceholder.
	OverwritePlaceholders bool
	// AllowUnknown accepts attribute names Tomcat's documentation does not
	// list (Tomcat passes them to the protocol handler and logs a warning
	// when nothing takes them). Default: false.
	AllowUnknown bool
}

// threadAttrs are the Connector attributes Tomcat ignores when the
// Connector uses an Executor, and their names on the Executor.
var threadAttrs = map[string]string{
	"maxThreads":      "maxThreads",
	"minSpareThreads": "minSpareThreads",
	"threadPriority":  "threadPriority",
}

// ArmGuideConnectorAttrs returns the Connector attributes the Arm Neoverse
// Tomcat guide sets for a host with `workers` request threads (CPUs - 1):
// minSpareThreads and maxThreads = workers, maxKeepAliveRequests=500000,
// maxConnections=100000.
func ArmGuideConnectorAttrs(workers int) []Attr {
	w := strconv.Itoa(workers)
	return []Attr{
		{Name: "minSpareThreads", Value: w},
		{Name: "maxThreads", Value: w},
		{Name: "maxKeepAliveRequests", Value: "500000"},
		{Name: "maxConnections", Value: "100000"},
	}
}

// Change is one attribute an edit changed.
type Change struct {
	Elem  string // "Connector" or "Executor"
	Name  string // the Connector's Name or the Executor's name
	Attr  string
	Old   string // "" when the attribute was absent
	New   string
	Added bool // the attribute was absent
}

// SetConnector sets attributes on the one Connector q selects, after
// validating every name and value against Tomcat's documentation; on any
// error nothing is changed. Only that Connector's start tag changes:
// existing attributes keep their place and quoting, new ones follow the
// last attribute in the tag's layout. Setting a value equal to the current
// one changes nothing.
//
// When the Connector uses an Executor that exists in its Service, Tomcat
// ignores the Connector's maxThreads, minSpareThreads and threadPriority:
// setting them fails with ErrExecutorThreads, or goes to the Executor with
// SetOptions.ToExecutor. Errors are compatible with ErrNotFound,
// ErrAmbiguous, ErrUnknownAttr, ErrInvalidValue, ErrPlaceholder and
// ErrExecutorThreads.
func (c *Config) SetConnector(q ConnectorQuery, attrs []Attr, opts *SetOptions) ([]Change, error) {
	var o SetOptions
	if opts != nil {
		o = *opts
	}
	cn, err := c.FindConnector(q)
	if err != nil {
		return nil, err
	}
	var own, toExec []Attr
	var exec *Executor
	if cn.Executor != "" {
		if e, err := c.FindExecutor(cn.Service, cn.Executor); err == nil {
			exec = &e
		}
	}
	for _, a := range attrs {
		if ename, ok := threadAttrs[a.Name]; ok && exec != nil {
			if !o.ToExecutor {
				return nil, fmt.Errorf("%w: %s line %d: Connector %s takes %s from Executor %q (line %d); see SetOptions.ToExecutor",
					ErrExecutorThreads, c.path, cn.Line, cn.Name(), a.Name, exec.Name, exec.Line)
			}
			toExec = append(toExec, Attr{Name: ename, Value: a.Value})
			continue
		}
		own = append(own, a)
	}
	// Validate everything before touching anything.
	cnChanges, err := c.plan(elemConnector, cn.Name(), cn.Line, cn.Attrs, own, o)
	if err != nil {
		return nil, err
	}
	var exChanges []Change
	if len(toExec) > 0 {
		if exChanges, err = c.plan(elemExecutor, exec.Name, exec.Line, exec.Attrs, toExec, o); err != nil {
			return nil, err
		}
	}
	saved := c.snapshot()
	if err := c.setAttrs(cn.elem, toAttrChanges(cnChanges)); err != nil {
		return nil, err
	}
	if len(exChanges) > 0 {
		// Element indexes are unchanged by attribute edits.
		if err := c.setAttrs(exec.elem, toAttrChanges(exChanges)); err != nil {
			c.restore(saved)
			return nil, err
		}
	}
	return append(cnChanges, exChanges...), nil
}

// SetExecutor sets attributes on the Executor called name in service
// ("" when only one Service has it), validated like SetConnector.
func (c *Config) SetExecutor(service, name string, attrs []Attr, opts *SetOptions) ([]Change, error) {
	var o SetOptions
	if opts != nil {
		o = *opts
	}
	e, err := c.FindExecutor(service, name)
	if err != nil {
		return nil, err
	}
	changes, err := c.plan(elemExecutor, e.Name, e.Line, e.Attrs, attrs, o)
	if err != nil {
		return nil, err
	}
	if err := c.setAttrs(e.elem, toAttrChanges(changes)); err != nil {
		return nil, err
	}
	return changes, nil
}

// plan validates attrs against the element's current attributes and
// returns the changes that are not no-ops.
func (c *Config) plan(elem, name string, line int, cur, attrs []Attr, o SetOptions) ([]Change, error) {
	var out []Change
	next := map[string]string{}
	for _, a := range cur {
		next[a.Name] = a.Value
	}
	for _, a := range attrs {
		if err := checkXML(a); err != nil {
			return nil, fmt.Errorf("%w: %s line %d: <%s> %s: %v", ErrInvalidValue, c.path, line, elem, name, err)
		}
		if err := validate(elem, a.Name, a.Value); err != nil {
			var ae *attrError
			if errors.As(err, &ae) {
				ae.File, ae.Line = c.path, line
			}
			if !o.AllowUnknown || !errors.Is(err, ErrUnknownAttr) {
				return nil, err
			}
		}
		old, had := lookup(cur, a.Name)
		if had && old == a.Value {
			continue
		}
		if had && placeholder(old) && !o.OverwritePlaceholders {
			return nil, fmt.Errorf("%w: %s line %d: <%s> %s %s=%q; not overwriting it with %q (see SetOptions.OverwritePlaceholders)",
				ErrPlaceholder, c.path, line, elem, name, a.Name, old, a.Value)
		}
		next[a.Name] = a.Value
		out = append(out, Change{Elem: elem, Name: name, Attr: a.Name, Old: old, New: a.Value, Added: !had})
	}
	if err := checkThreads(next); err != nil {
		return nil, fmt.Errorf("%w: %s line %d: <%s> %s: %v", ErrInvalidValue, c.path, line, elem, name, err)
	}
	// Keep the order of attrs but drop repeated names (the last one wins).
	seen := map[string]int{}
	var dedup []Change
	for _, ch := range out {
		if i, ok := seen[ch.Attr]; ok {
			dedup[i].New = ch.New
			continue
		}
		seen[ch.Attr] = len(dedup)
		dedup = append(dedup, ch)
	}
	return dedup, nil
}

// checkXML rejects names that are not XML names and values with
// characters XML cannot hold.
func checkXML(a Attr) error {
	if !reXMLName.MatchString(a.Name) {
		return fmt.Errorf("attribute name %q: want an XML name (letters, digits, '.', '-', '_')", a.Name)
	}
	if !utf8.ValidString(a.Value) {
		return fmt.Errorf("%s=%q: not valid UTF-8", a.Name, a.Value)
	}
	for _, r := range a.Value {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return fmt.Errorf("%s=%q: character %U cannot appear in XML", a.Name, a.Value, r)
		}
	}
	return nil
}

var reXMLName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9._-]*$`)

// checkThreads rejects minSpareThreads > maxThreads, which Tomcat's
// thread pool refuses at start.
func checkThreads(attrs map[string]string) error {
	mx, err1 := strconv.Atoi(attrs["maxThreads"])
	mn, err2 := strconv.Atoi(attrs["minSpareThreads"])
	if err1 == nil && err2 == nil && mn > mx {
		return fmt.Errorf("minSpareThreads=%d is more than maxThreads=%d", mn, mx)
	}
	return nil
}

func toAttrChanges(cs []Change) []attrChange {
	out := make([]attrChange, len(cs))
	for i, ch := range cs {
		out[i] = attrChange{name: ch.Attr, value: ch.New}
	}
	return out
}

// snapshot returns the Config as it is; load never modifies the slices
// of a previous state, so restoring is a plain copy.
func (c *Config) snapshot() Config { return *c }

func (c *Config) restore(s Config) { *c = s }
