package tomcatconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/beevik/etree"
)

// Sentinel errors, matched with errors.Is.
var (
	// errSyntax: the file is not well-formed XML, or not a server.xml.
	errSyntax = errors.New("tomcatconf: malformed server.xml")
	// ErrNotFound: no element matches (a Connector, Executor or Valve).
	ErrNotFound = errors.New("tomcatconf: not found")
	// ErrAmbiguous: a query matches more than one element.
	ErrAmbiguous = errors.New("tomcatconf: ambiguous")
	// ErrUnknownAttr: an attribute name Tomcat's documentation does not list.
	ErrUnknownAttr = errors.New("tomcatconf: unknown attribute")
	// ErrInvalidValue: a value outside what Tomcat's documentation allows.
	ErrInvalidValue = errors.New("tomcatconf: invalid value")
	// ErrPlaceholder: the current value is a ${property} placeholder, which
	// is not overwritten unless SetOptions.OverwritePlaceholders is set.
	ErrPlaceholder = errors.New("tomcatconf: value is a ${property} placeholder")
	// ErrExecutorThreads: a thread attribute was set on a Connector that
	// uses a shared Executor, where Tomcat ignores it.
	ErrExecutorThreads = errors.New("tomcatconf: connector uses an executor")
)

// Attr is one attribute, its value unescaped.
type Attr struct {
	Name  string
	Value string
}

// Config is a loaded server.xml: the original bytes, the current bytes
// with every edit so far spliced in, and the model parsed from them with
// etree. Edits change only the bytes of the elements they touch; Bytes
// returns the result and Diff a unified diff against the original.
//
// A Config is not safe for concurrent use.
type Config struct {
	path     string
	orig     []byte
	src      []byte
	doc      *etree.Document
	elems    []*etree.Element // document order, parallel to spans
	spans    []span
	comments []commentSpan
	index    map[*etree.Element]int
	newlines []int // offsets of '\n' in src
}

// Load reads and parses the server.xml at path (for Debian's instance,
// /var/lib/tomcat10/conf/server.xml, a symlink to /etc/tomcat10). It needs
// read access to the file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tomcatconf: %w", err)
	}
	return Parse(path, data)
}

// Parse parses data as a server.xml; name is used in error messages and as
// the path Save writes to. A file that is not well-formed XML with a
// <Server> root is an error naming the file and the line.
func Parse(name string, data []byte) (*Config, error) {
	c := &Config{path: name, orig: bytes.Clone(data)}
	if err := c.load(bytes.Clone(data)); err != nil {
		return nil, err
	}
	if c.doc.Root() == nil || c.doc.Root().Tag != "Server" {
		got := "no root element"
		if c.doc.Root() != nil {
			got = "root element <" + c.doc.Root().FullTag() + ">"
		}
		return nil, fmt.Errorf("%w: %s: %s, want <Server>", errSyntax, name, got)
	}
	return c, nil
}

// load parses src into the model and the byte ranges.
func (c *Config) load(src []byte) error {
	spans, comments, err := scan(src)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errSyntax, c.path, err)
	}
	doc := etree.NewDocument()
	doc.ReadSettings.PreserveCData = true
	if err := doc.ReadFromBytes(src); err != nil {
		return fmt.Errorf("%w: %s: %v", errSyntax, c.path, err)
	}
	var elems []*etree.Element
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		elems = append(elems, e)
		for _, ch := range e.ChildElements() {
			walk(ch)
		}
	}
	for _, e := range doc.ChildElements() {
		walk(e)
	}
	if len(elems) != len(spans) {
		return fmt.Errorf("%w: %s: etree found %d elements, the scanner %d", errSyntax, c.path, len(elems), len(spans))
	}
	c.src, c.doc, c.elems, c.spans, c.comments = src, doc, elems, spans, comments
	c.newlines = c.newlines[:0:0]
	for i, b := range src {
		if b == '\n' {
			c.newlines = append(c.newlines, i)
		}
	}
	c.index = make(map[*etree.Element]int, len(elems))
	for i, e := range elems {
		c.index[e] = i
	}
	return nil
}

// splice replaces src[from:to] with repl and re-parses; on a parse error
// nothing changes.
func (c *Config) splice(from, to int, repl string) error {
	next := make([]byte, 0, len(c.src)-(to-from)+len(repl))
	next = append(next, c.src[:from]...)
	next = append(next, repl...)
	next = append(next, c.src[to:]...)
	return c.replace(next)
}

func (c *Config) replace(next []byte) error {
	old := *c
	if err := c.load(next); err != nil {
		*c = old
		return fmt.Errorf("tomcatconf: %s: internal error, the edit made the file unparsable: %w", c.path, err)
	}
	return nil
}

// Path returns the file the Config was loaded from.
func (c *Config) Path() string { return c.path }

// Bytes returns the current contents: the original with every edit
// spliced in. Bytes the edits did not touch are the original bytes.
func (c *Config) Bytes() []byte { return bytes.Clone(c.src) }

// Original returns the bytes the Config was loaded from.
func (c *Config) Original() []byte { return bytes.Clone(c.orig) }

// Changed reports whether the current contents differ from the original.
func (c *Config) Changed() bool { return !bytes.Equal(c.src, c.orig) }

// line returns the 1-based line of byte offset off in the current bytes.
func (c *Config) line(off int) int { return sort.SearchInts(c.newlines, off) + 1 }

// attrs returns e's attributes, unescaped, in document order.
func attrsOf(e *etree.Element) []Attr {
	out := make([]Attr, 0, len(e.Attr))
	for _, a := range e.Attr {
		out = append(out, Attr{Name: a.FullKey(), Value: a.Value})
	}
	return out
}

func lookup(attrs []Attr, name string) (string, bool) {
	for _, a := range attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return "", false
}

// setAttrs rewrites the start tag of element i.
func (c *Config) setAttrs(i int, changes []attrChange) error {
	sp := c.spans[i]
	tag := string(c.src[sp.start:sp.tagEnd])
	out, err := rewriteStartTag(tag, changes)
	if err != nil {
		return fmt.Errorf("tomcatconf: %s line %d: %w", c.path, c.line(sp.start), err)
	}
	if out == tag {
		return nil
	}
	return c.splice(sp.start, sp.tagEnd, out)
}

// ancestor returns the nearest ancestor of e with the given tag, or nil.
func ancestor(e *etree.Element, tag string) *etree.Element {
	for p := e.Parent(); p != nil; p = p.Parent() {
		if p.Tag == tag {
			return p
		}
	}
	return nil
}

// placeholder reports whether v holds a ${property} reference, which
// Tomcat replaces from system properties when it reads server.xml.
func placeholder(v string) bool {
	i := strings.Index(v, "${")
	return i >= 0 && strings.Contains(v[i:], "}")
}
