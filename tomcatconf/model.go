package tomcatconf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

// service is one <Service> with what it holds.
type service struct {
	Name       string
	Line       int // line of the start tag, 1-based
	Connectors []Connector
	Executors  []Executor
	Valves     []Valve // in its Engine, Hosts and Contexts, document order
}

// Connector is one active <Connector> (never one inside a comment).
type Connector struct {
	Service  string // name of the enclosing Service
	Port     string // as written: "8080", "-1", "${port}", or "" when absent
	Protocol string // as written; "" means HTTP/1.1
	Address  string
	Executor string // the executor attribute; "" when the Connector has its own pool
	Attrs    []Attr // every attribute, unescaped, in file order
	Line     int

	elem int
}

// Attr returns the value of the named attribute and whether it is set.
func (c Connector) Attr(name string) (string, bool) { return lookup(c.Attrs, name) }

func (c Connector) attr(name string) string {
	v, _ := c.Attr(name)
	return v
}

// Name is the name Tomcat gives the Connector's protocol handler and uses
// as the prefix of its thread names: "http-nio-8080", "ajp-nio-8009",
// "http-nio2-8081", "https-jsse-nio-8443" (SSLEnabled; "openssl" instead
// of "jsse" when sslImplementationName names OpenSSL), with the address
// inserted when one is set ("http-nio-127.0.0.1-8080"; Tomcat prints the
// resolved IP, this the address as written).
func (c Connector) Name() string {
	p := c.Protocol
	scheme, io := "http", "nio"
	switch {
	case strings.HasSuffix(p, "Nio2Protocol"):
		io = "nio2"
	case strings.HasSuffix(p, "AprProtocol"):
		io = "apr"
	}
	switch {
	case strings.HasPrefix(p, "AJP") || strings.Contains(p, "coyote.ajp."):
		scheme = "ajp"
	case c.attr("SSLEnabled") == "true":
		scheme = "https-jsse"
		if io == "apr" || strings.Contains(c.attr("sslImplementationName"), "OpenSSL") {
			scheme = "https-openssl"
		}
	}
	prefix := scheme + "-" + io
	if c.Address != "" {
		return prefix + "-" + c.Address + "-" + c.Port
	}
	return prefix + "-" + c.Port
}

// Executor is one active <Executor>, a thread pool Connectors can share.
type Executor struct {
	Service string
	Name    string
	Attrs   []Attr
	Line    int
	UsedBy  []string // Names of the Connectors whose executor attribute names it

	elem int
}

// Attr returns the value of the named attribute and whether it is set.
func (e Executor) Attr(name string) (string, bool) { return lookup(e.Attrs, name) }

// Valve is one active <Valve> in an Engine, Host or Context.
type Valve struct {
	Service   string
	Engine    string
	Host      string // "" for a Valve on the Engine
	Context   string // the Context's path, "" unless the Valve is in a Context
	ClassName string
	Attrs     []Attr
	Line      int

	elem int
}

// Attr returns the value of the named attribute and whether it is set.
func (v Valve) Attr(name string) (string, bool) { return lookup(v.Attrs, name) }

// services returns every <Service> of the <Server>, with its Connectors,
// Executors and Valves.
func (c *Config) services() []service {
	var out []service
	for _, se := range c.doc.Root().SelectElements("Service") {
		s := service{Name: se.SelectAttrValue("name", ""), Line: c.line(c.spans[c.index[se]].start)}
		for _, ee := range se.SelectElements("Executor") {
			s.Executors = append(s.Executors, Executor{
				Service: s.Name, Name: ee.SelectAttrValue("name", ""), Attrs: attrsOf(ee),
				Line: c.line(c.spans[c.index[ee]].start), elem: c.index[ee],
			})
		}
		for _, ce := range se.SelectElements("Connector") {
			s.Connectors = append(s.Connectors, Connector{
				Service:  s.Name,
				Port:     ce.SelectAttrValue("port", ""),
				Protocol: ce.SelectAttrValue("protocol", ""),
				Address:  ce.SelectAttrValue("address", ""),
				Executor: ce.SelectAttrValue("executor", ""),
				Attrs:    attrsOf(ce),
				Line:     c.line(c.spans[c.index[ce]].start),
				elem:     c.index[ce],
			})
		}
		for i := range s.Executors {
			for _, cn := range s.Connectors {
				if cn.Executor == s.Executors[i].Name {
					s.Executors[i].UsedBy = append(s.Executors[i].UsedBy, cn.Name())
				}
			}
		}
		for _, eng := range se.SelectElements("Engine") {
			s.Valves = append(s.Valves, c.valvesIn(s.Name, eng)...)
		}
		out = append(out, s)
	}
	return out
}

func (c *Config) valvesIn(service string, eng *etree.Element) []Valve {
	var out []Valve
	for _, ve := range eng.FindElements(".//Valve") {
		v := Valve{
			Service: service, Engine: eng.SelectAttrValue("name", ""),
			ClassName: ve.SelectAttrValue("className", ""), Attrs: attrsOf(ve),
			Line: c.line(c.spans[c.index[ve]].start), elem: c.index[ve],
		}
		if h := ancestor(ve, "Host"); h != nil {
			v.Host = h.SelectAttrValue("name", "")
		}
		if ctx := ancestor(ve, "Context"); ctx != nil {
			v.Context = ctx.SelectAttrValue("path", "")
		}
		out = append(out, v)
	}
	return out
}

// Connectors returns every active Connector of every Service, in file order.
func (c *Config) Connectors() []Connector {
	var out []Connector
	for _, s := range c.services() {
		out = append(out, s.Connectors...)
	}
	return out
}

// Executors returns every active Executor of every Service, in file order.
func (c *Config) Executors() []Executor {
	var out []Executor
	for _, s := range c.services() {
		out = append(out, s.Executors...)
	}
	return out
}

// Valves returns the active Valves whose className is class, in every
// Engine, Host and Context of every Service. class is either the full
// class name or its simple name ("AccessLogValve"); "" returns every Valve.
func (c *Config) Valves(class string) []Valve {
	var out []Valve
	for _, s := range c.services() {
		for _, v := range s.Valves {
			if classMatches(v.ClassName, class) {
				out = append(out, v)
			}
		}
	}
	return out
}

func classMatches(className, class string) bool {
	if class == "" || className == class {
		return true
	}
	return !strings.Contains(class, ".") && strings.HasSuffix(className, "."+class)
}

// ConnectorQuery selects Connectors; empty fields match anything.
type ConnectorQuery struct {
	Service  string // the enclosing Service's name
	Port     string // the port attribute as written ("8080", "${port}")
	Protocol string // "HTTP/1.1", "AJP/1.3" or a class name; an absent protocol matches "HTTP/1.1"
	Name     string // the handler name, Connector.Name ("http-nio-8080")
}

// String describes the query ("port=8080 protocol=HTTP/1.1").
func (q ConnectorQuery) String() string {
	var parts []string
	for _, kv := range [][2]string{{"service", q.Service}, {"port", q.Port}, {"protocol", q.Protocol}, {"name", q.Name}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if len(parts) == 0 {
		return "any connector"
	}
	return strings.Join(parts, " ")
}

func (q ConnectorQuery) matches(cn Connector) bool {
	proto := cn.Protocol
	if proto == "" {
		proto = "HTTP/1.1"
	}
	return (q.Service == "" || q.Service == cn.Service) &&
		(q.Port == "" || q.Port == cn.Port) &&
		(q.Protocol == "" || q.Protocol == proto) &&
		(q.Name == "" || q.Name == cn.Name())
}

// FindConnector returns the one active Connector that q selects. No match
// is an error compatible with errors.Is(err, ErrNotFound), several with
// ErrAmbiguous; both list the Connectors that exist.
func (c *Config) FindConnector(q ConnectorQuery) (Connector, error) {
	all := c.Connectors()
	var found []Connector
	for _, cn := range all {
		if q.matches(cn) {
			found = append(found, cn)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Connector{}, fmt.Errorf("%w: %s: no Connector with %s; the file has %s", ErrNotFound, c.path, q, describe(all))
	default:
		return Connector{}, fmt.Errorf("%w: %s: %d Connectors match %s (%s); add a port, protocol or service", ErrAmbiguous, c.path, len(found), q, describe(found))
	}
}

// FindExecutor returns the Executor called name; service may be "" when
// only one Service has such an Executor.
func (c *Config) FindExecutor(service, name string) (Executor, error) {
	var found []Executor
	for _, e := range c.Executors() {
		if e.Name == name && (service == "" || e.Service == service) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Executor{}, fmt.Errorf("%w: %s: no Executor named %q", ErrNotFound, c.path, name)
	default:
		return Executor{}, fmt.Errorf("%w: %s: %d Services have an Executor named %q; name the service", ErrAmbiguous, c.path, len(found), name)
	}
}

func describe(cs []Connector) string {
	if len(cs) == 0 {
		return "no active Connector"
	}
	var parts []string
	for _, cn := range cs {
		parts = append(parts, fmt.Sprintf("%s (line %d)", cn.Name(), cn.Line))
	}
	return strings.Join(parts, ", ")
}

// MaxThreads returns the size of the request-processing pool of the one
// Connector q selects, as Tomcat would run it: its Executor's maxThreads
// when it uses an Executor that exists, else its own, else Tomcat's
// documented default (200). A value that is not a number (a ${...}
// placeholder) is an error naming the file, the element and the value.
func (c *Config) MaxThreads(q ConnectorQuery) (int, error) {
	cn, err := c.FindConnector(q)
	if err != nil {
		return 0, err
	}
	elem, what := elemConnector, "Connector "+cn.Name()
	v, set := cn.Attr("maxThreads")
	if cn.Executor != "" {
		if ex, err := c.FindExecutor(cn.Service, cn.Executor); err == nil {
			elem, what = elemExecutor, fmt.Sprintf("Executor %q", ex.Name)
			v, set = ex.Attr("maxThreads")
		}
	}
	if !set {
		m, err := specs(elem)
		if err != nil {
			return 0, err
		}
		v = m["maxThreads"].Default
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: %s: %s: maxThreads=%q: want a whole number of threads, 1 or more", ErrInvalidValue, c.path, what, v)
	}
	return n, nil
}
