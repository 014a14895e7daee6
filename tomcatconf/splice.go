package tomcatconf

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// span is where one element sits in the original bytes: its start tag is
// src[start:tagEnd] and the whole element, end tag included, src[start:end].
type span struct {
	start, tagEnd, end int
}

// commentSpan is one comment, <!-- and --> included, and the index of the
// element it sits in (-1 at the top level).
type commentSpan struct {
	start, end int
	parent     int
	text       string // between <!-- and -->
}

// scan walks src with encoding/xml and records the byte range of every
// element, in document order, and of every comment. Comments are not
// elements: a <Connector inside <!-- --> is never reported.
func scan(src []byte) ([]span, []commentSpan, error) {
	d := xml.NewDecoder(bytes.NewReader(src))
	d.Strict = true
	var (
		spans    []span
		comments []commentSpan
		open     []int
	)
	for {
		off := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		end := int(d.InputOffset())
		switch t := tok.(type) {
		case xml.StartElement:
			spans = append(spans, span{start: off, tagEnd: end, end: -1})
			open = append(open, len(spans)-1)
		case xml.EndElement:
			if len(open) == 0 {
				return nil, nil, fmt.Errorf("unexpected end element </%s>", t.Name.Local)
			}
			spans[open[len(open)-1]].end = end
			open = open[:len(open)-1]
		case xml.Comment:
			parent := -1
			if len(open) > 0 {
				parent = open[len(open)-1]
			}
			comments = append(comments, commentSpan{start: off, end: end, parent: parent, text: string(t)})
		}
	}
	if len(open) != 0 {
		return nil, nil, fmt.Errorf("unexpected end of file: %d element(s) not closed", len(open))
	}
	return spans, comments, nil
}

// attrSpan is one attribute inside a start tag, as offsets into the tag's
// text: the whitespace before it begins at ws, the name at name, the value
// (between the quotes) is [val, valEnd), and the attribute ends at end
// (after the closing quote).
type attrSpan struct {
	name                    string
	ws, nameAt, val, valEnd int
	end                     int
	quote                   byte
	rawValue                string
	lineIndent              string // whitespace after the last newline before the name, if any
	onOwnLine               bool   // a newline precedes the attribute
}

// startTag is the parsed text of one start tag.
type startTag struct {
	name    string
	nameEnd int // offset just after the element name
	attrs   []attrSpan
	closeAt int // offset of "/>" or ">"
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseStartTag tokenises a start tag that encoding/xml already accepted,
// keeping offsets so that a value can be replaced without touching the
// bytes around it.
func parseStartTag(s string) (startTag, error) {
	var st startTag
	if len(s) < 2 || s[0] != '<' {
		return st, fmt.Errorf("not a start tag: %.40q", s)
	}
	i := 1
	for i < len(s) && !isSpace(s[i]) && s[i] != '>' && s[i] != '/' {
		i++
	}
	st.name = s[1:i]
	st.nameEnd = i
	for {
		ws := i
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return st, fmt.Errorf("start tag <%s> not closed", st.name)
		}
		if s[i] == '>' || s[i] == '/' {
			st.closeAt = i
			return st, nil
		}
		a := attrSpan{ws: ws, nameAt: i}
		if nl := strings.LastIndexByte(s[ws:i], '\n'); nl >= 0 {
			a.onOwnLine = true
			a.lineIndent = s[ws+nl+1 : i]
		}
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' {
			i++
		}
		a.name = s[a.nameAt:i]
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] != '=' {
			return st, fmt.Errorf("attribute %s in <%s> has no value", a.name, st.name)
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) || (s[i] != '"' && s[i] != '\'') {
			return st, fmt.Errorf("attribute %s in <%s> is not quoted", a.name, st.name)
		}
		a.quote = s[i]
		i++
		a.val = i
		j := strings.IndexByte(s[i:], a.quote)
		if j < 0 {
			return st, fmt.Errorf("attribute %s in <%s> is not closed", a.name, st.name)
		}
		a.valEnd = i + j
		a.rawValue = s[a.val:a.valEnd]
		i = a.valEnd + 1
		a.end = i
		st.attrs = append(st.attrs, a)
	}
}

// escapeAttr escapes v for an attribute quoted with q, escaping only what
// must be: &, <, the quote in use, and characters that attribute-value
// normalisation would otherwise turn into spaces.
func escapeAttr(v string, q byte) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '&':
			b.WriteString("&amp;")
		case c == '<':
			b.WriteString("&lt;")
		case c == '"' && q == '"':
			b.WriteString("&quot;")
		case c == '\'' && q == '\'':
			b.WriteString("&apos;")
		case c == '\n':
			b.WriteString("&#xA;")
		case c == '\r':
			b.WriteString("&#xD;")
		case c == '\t':
			b.WriteString("&#x9;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// attrChange is one change to a start tag: set name to value, or remove
// the attribute when remove is true.
type attrChange struct {
	name   string
	value  string
	remove bool
}

// rewriteStartTag applies changes to the text of one start tag. An
// existing attribute keeps its place, quote and surroundings and gets only
// a new value; a new attribute goes after the last one, in the last one's
// quote style, on its own line indented like the last attribute that
// starts a line when the tag spans lines, or after a space otherwise. A removed attribute takes the
// whitespace before it with it.
func rewriteStartTag(tag string, changes []attrChange) (string, error) {
	for _, ch := range changes {
		st, err := parseStartTag(tag)
		if err != nil {
			return "", err
		}
		idx := -1
		for i, a := range st.attrs {
			if a.name == ch.name {
				idx = i
				break
			}
		}
		switch {
		case ch.remove && idx < 0:
			// nothing to remove
		case ch.remove:
			a := st.attrs[idx]
			tag = tag[:a.ws] + tag[a.end:]
		case idx >= 0:
			a := st.attrs[idx]
			tag = tag[:a.val] + escapeAttr(ch.value, a.quote) + tag[a.valEnd:]
		default:
			q := byte('"')
			insertAt := st.nameEnd
			sep := " "
			if n := len(st.attrs); n > 0 {
				last := st.attrs[n-1]
				q = last.quote
				insertAt = last.end
				// A tag that puts attributes on lines of their own gets the
				// new one on its own line, indented like the last such line.
				for k := n - 1; k >= 0; k-- {
					if a := st.attrs[k]; a.onOwnLine {
						nl := "\n"
						if strings.Contains(tag[a.ws:a.nameAt], "\r\n") {
							nl = "\r\n"
						}
						sep = nl + a.lineIndent
						break
					}
				}
			}
			tag = tag[:insertAt] + sep + ch.name + "=" + string(q) + escapeAttr(ch.value, q) + string(q) + tag[insertAt:]
		}
	}
	return tag, nil
}
