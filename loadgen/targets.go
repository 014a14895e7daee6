package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Target is one request of a run that sends several (Config.Targets).
type Target struct {
	// Method is the request method. Default: GET.
	Method string
	// URL is http[s]://host[:port]/path?query, or a path ("/path?query")
	// on Config.URL's host. Every target of a run has the same scheme,
	// host and port: a run keeps one pool of connections.
	URL string
	// Headers are sent after Config.Headers (a Host header here replaces
	// the one derived from URL).
	Headers []Header
	// Body is sent with a Content-Length header when not empty.
	Body []byte
}

// TargetsError is a fault in a targets file: where, what was found and
// what was expected. A body file that cannot be read is wrapped (Err), so
// errors.Is(err, fs.ErrNotExist) holds for a missing one.
type TargetsError struct {
	File  string // the targets file; "" from ParseTargets
	Line  int    // 1-based; 0 for the file as a whole
	Value string // the offending text
	Want  string // the expected form
	Err   error  // the cause, or nil
}

// Error says where, what and what was expected:
// "loadgen: targets.txt:3: "GET": want "METHOD URL"".
func (e *TargetsError) Error() string {
	where := e.File
	if where == "" {
		where = "targets"
	}
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, e.Line)
	}
	s := fmt.Sprintf("loadgen: %s: %q: want %s", where, e.Value, e.Want)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *TargetsError) Unwrap() error { return e.Err }

// Expected forms, in TargetsError.Want.
const (
	wantRequestLine = `"METHOD URL", an upper-case method such as GET and an http:// or https:// URL`
	wantHeaderLine  = `a header "Name: value", a body "@FILE" or a blank line before the next target`
	wantAfterBody   = `a blank line after the body "@FILE" line`
	wantBodyFile    = `"@FILE", a readable file (relative to the targets file's directory)`
	wantSomeTarget  = `at least one "METHOD URL" line`
	maxTargetsLine  = 1 << 20
)

// ReadTargets reads a targets file in vegeta's format (see ParseTargets);
// body files are relative to the file's directory. Errors name the file
// and the line (a *TargetsError).
func ReadTargets(path string) ([]Target, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loadgen: targets: %w", err)
	}
	defer f.Close()
	ts, err := ParseTargets(f, filepath.Dir(path))
	var te *TargetsError
	if errors.As(err, &te) {
		te.File = path
	}
	return ts, err
}

// ParseTargets parses vegeta's HTTP targets format: a target is a line
// "METHOD URL", then zero or more header lines "Name: value", then an
// optional line "@path/to/body" (a relative path is relative to dir);
// targets are separated by blank lines; lines starting with # are
// comments. Errors are *TargetsError values naming the line.
//
//	GET http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample
//	Accept: text/html
//
//	POST http://127.0.0.1:8080/api/orders
//	Content-Type: application/json
//	@order.json
func ParseTargets(r io.Reader, dir string) ([]Target, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxTargetsLine)
	var out []Target
	const (
		between = iota // expecting a request line
		inHead         // after the request line or a header
		afterBody
	)
	state := between
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") {
			continue
		}
		if text == "" {
			state = between
			continue
		}
		fail := func(want string, err error) error {
			return &TargetsError{Line: line, Value: text, Want: want, Err: err}
		}
		switch state {
		case between:
			t, ok := parseRequestLine(text)
			if !ok {
				return nil, fail(wantRequestLine, nil)
			}
			out = append(out, t)
			state = inHead
		case inHead:
			t := &out[len(out)-1]
			if path, ok := strings.CutPrefix(text, "@"); ok {
				if path == "" {
					return nil, fail(wantBodyFile, nil)
				}
				if !filepath.IsAbs(path) {
					path = filepath.Join(dir, path)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, fail(wantBodyFile, err)
				}
				t.Body = b
				state = afterBody
				continue
			}
			h, ok := parseHeaderLine(text)
			if !ok {
				return nil, fail(wantHeaderLine, nil)
			}
			t.Headers = append(t.Headers, h)
		case afterBody:
			return nil, fail(wantAfterBody, nil)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &TargetsError{Line: line + 1, Value: "(a line over 1 MiB)", Want: "lines shorter than 1 MiB", Err: err}
	}
	if len(out) == 0 {
		return nil, &TargetsError{Value: "", Want: wantSomeTarget}
	}
	return out, nil
}

// parseRequestLine parses "METHOD URL".
func parseRequestLine(s string) (Target, bool) {
	method, url, ok := strings.Cut(s, " ")
	url = strings.TrimSpace(url)
	if !ok || !isMethod(method) || url == "" || strings.ContainsAny(url, " \t") || CheckURL(url) != nil {
		return Target{}, false
	}
	return Target{Method: method, URL: url}, true
}

// isMethod reports whether m looks like a request method as targets files
// write them: upper-case letters, digits, '-' and '_', a letter first.
func isMethod(m string) bool {
	if m == "" || m[0] < 'A' || m[0] > 'Z' {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// parseHeaderLine parses "Name: value" with a name the engine sends.
func parseHeaderLine(s string) (Header, bool) {
	h, err := ParseHeader(s)
	if err != nil || !validHeader(h) {
		return Header{}, false
	}
	return h, true
}

// validHeader reports whether h can be written as one header line.
func validHeader(h Header) bool {
	return h.Name != "" && !strings.ContainsAny(h.Name, ": \t\r\n") && !strings.ContainsAny(h.Value, "\r\n") &&
		bytes.IndexByte([]byte(h.Name), 0) < 0
}
