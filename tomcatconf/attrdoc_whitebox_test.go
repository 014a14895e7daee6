package tomcatconf

// This file derives the attribute table in attrspecs_gen.go from Tomcat's
// documentation source in ../shared/corpus/tomcat: run
//
//	go test ./tomcatconf -run TestGenerateAttrSpecs -update-specs
//
// Without the flag the test re-derives the table and fails when
// attrspecs_gen.go is stale.

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/nettune/nettune/internal/testutil"
)

var updateSpecs = flag.Bool("update-specs", false, "rewrite attrspecs_gen.go from the corpus's Tomcat docs")

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
func parseAttrDoc(data []byte, elem string) (map[string]attrSpec, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Entity = map[string]string{"project": ""}
	if err := doc.ReadFromBytes(data); err != nil {
		return nil, err
	}
	out := map[string]attrSpec{}
	for _, sub := range doc.FindElements("//subsection") {
		section := sub.SelectAttrValue("name", "")
		parent := sub.Parent()
		inAttributes := parent != nil && parent.SelectAttrValue("name", "") == "Attributes"
		switch elem {
		case elemConnector:
			if !inAttributes && section != "SSL Support - Connector - NIO and NIO2" {
				continue
			}
		case elemExecutor:
			if !inAttributes || section == "Virtual Thread Implementation" {
				continue
			}
		case elemAccessLogValve:
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
	if elem == elemAccessLogValve {
		// AbstractAccessLogValve.setEnabled exists in every Tomcat since 6
		// but the reference page does not list it.
		out["enabled"] = attrSpec{Name: "enabled", Section: "AbstractAccessLogValve", Kind: kindBool, Default: "true"}
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
func classify(name, section, text string) attrSpec {
	s := attrSpec{Name: name, Section: section, Kind: kindString}
	lower := strings.ToLower(text)
	switch {
	case strings.HasPrefix(lower, "(int)"):
		s.Kind = kindInt
	case strings.HasPrefix(lower, "(long)"):
		s.Kind = kindLong
	case strings.HasPrefix(lower, "(bool)"), strings.HasPrefix(lower, "(boolean)"):
		s.Kind = kindBool
	case strings.HasPrefix(lower, "(string)"):
		s.Kind = kindString
	}
	if m := reDefaultNum.FindStringSubmatch(text); m != nil {
		s.Default = m[1]
		if s.Kind == kindString && !strings.HasPrefix(lower, "(string)") {
			s.Kind = kindInt
		}
	} else if m := reDefaultBool.FindStringSubmatch(text); m != nil {
		s.Default = strings.ToLower(m[1])
		if s.Kind == kindString && !strings.HasPrefix(lower, "(string)") {
			s.Kind = kindBool
		}
	}
	switch {
	case reNegative.MatchString(text):
		s.Min = math.MinInt32
	case mentionsMinusOne(text):
		s.Min = -1
	}
	if s.Kind == kindLong && s.Min == math.MinInt32 {
		s.Min = math.MinInt64
	}
	// A pool needs at least one thread: java.util.concurrent.ThreadPoolExecutor
	// rejects a maximum pool size of 0.
	if name == "maxThreads" {
		s.Min = 1
	}
	// Java's Thread.setPriority throws IllegalArgumentException outside
	// Thread.MIN_PRIORITY (1) to Thread.MAX_PRIORITY (10); the documentation
	// names only the default, NORM_PRIORITY (5).
	if name == "threadPriority" {
		s.Min, s.Max = 1, 10
	}
	return s
}

func TestGenerateAttrSpecs(t *testing.T) {
	derived := map[string]map[string]attrSpec{}
	for elem, file := range map[string]string{
		elemConnector:      "http-" + docVersion + ".xml",
		elemExecutor:       "executor-" + docVersion + ".xml",
		elemAccessLogValve: "valve-" + docVersion + ".xml",
	} {
		data, err := os.ReadFile(testutil.CorpusFile(t, "tomcat", file))
		if err != nil {
			t.Fatal(err)
		}
		m, err := parseAttrDoc(data, elem)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		derived[elem] = m
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by TestGenerateAttrSpecs from Tomcat " + docVersion + "'s configuration reference; DO NOT EDIT.\n\n")
	b.WriteString("package tomcatconf\n\n")
	b.WriteString("// attrSpecs holds the documented attributes of each element kind: name,\n// documentation section, kind, default, minimum and maximum.\n")
	b.WriteString("var attrSpecs = map[string]map[string]attrSpec{\n")
	elems := []string{elemAccessLogValve, elemConnector, elemExecutor}
	for _, elem := range elems {
		fmt.Fprintf(&b, "\t%q: {\n", elem)
		names := make([]string, 0, len(derived[elem]))
		for n := range derived[elem] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			s := derived[elem][n]
			max := ""
			if s.Max != 0 {
				max = fmt.Sprintf(", Max: %d", s.Max)
			}
			fmt.Fprintf(&b, "\t\t%q: {Name: %q, Section: %q, Kind: %s, Default: %q, Min: %d%s},\n", n, s.Name, s.Section, kindIdent(s.Kind), s.Default, s.Min, max)
		}
		b.WriteString("\t},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if *updateSpecs {
		if err := os.WriteFile("attrspecs_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := os.ReadFile("attrspecs_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cur, src) {
		t.Fatalf("attrspecs_gen.go is stale: run go test ./tomcatconf -run TestGenerateAttrSpecs -update-specs")
	}
}

func kindIdent(k attrKind) string {
	return [...]string{"kindString", "kindInt", "kindLong", "kindBool"}[k]
}
