package loadgen_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

func parseTargetsText(t *testing.T, dir, text string) []loadgen.Target {
	t.Helper()
	ts, err := loadgen.ParseTargets(strings.NewReader(text), dir)
	require.NoError(t, err)
	return ts
}

func TestReadTargets(t *testing.T) {
	dir := filepath.Join("testdata", "targets")
	for _, tt := range []struct {
		file string
		want []loadgen.Target
	}{
		{"tomcat.txt", []loadgen.Target{
			{Method: "GET", URL: "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample",
				Headers: []loadgen.Header{{Name: "Accept", Value: "text/html"}, {Name: "User-Agent", Value: "loadgen"}}},
			{Method: "GET", URL: "http://127.0.0.1:8080/examples/jsp/jsp2/el/basic-arithmetic.jsp"},
			{Method: "POST", URL: "http://127.0.0.1:8080/examples/servlets/servlet/RequestParamExample",
				Headers: []loadgen.Header{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}},
				Body:    []byte("firstname=Ada&lastname=Lovelace")},
		}},
		{"api.txt", []loadgen.Target{
			{Method: "GET", URL: "http://localhost:9090/v1/orders?page=2&size=50", Headers: []loadgen.Header{
				{Name: "Authorization", Value: "Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig"}, {Name: "X-Request-Start", Value: "t=1700000000:000"}}},
			{Method: "PUT", URL: "http://localhost:9090/v1/orders/7", Headers: []loadgen.Header{{Name: "Content-Type", Value: "application/json"}},
				Body: []byte("{\"id\":7,\"items\":[{\"sku\":\"A-1\",\"qty\":2}]}\n")},
			{Method: "DELETE", URL: "http://localhost:9090/v1/orders/8", Headers: []loadgen.Header{{Name: "X-Reason", Value: "test: cleanup"}}},
		}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			got, err := loadgen.ReadTargets(filepath.Join(dir, tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestReadTargetsErrors: each fault names the file, the line, what was
// found and the form expected.
func TestReadTargetsErrors(t *testing.T) {
	dir := filepath.Join("testdata", "targets", "bad")
	for _, tt := range []struct {
		file, want string
		line       int
		notExist   bool
	}{
		{"missing-url.txt", `missing-url.txt:1: "GET": want "METHOD URL"`, 1, false},
		{"bad-method.txt", `bad-method.txt:3: "get http://127.0.0.1:8080/x": want "METHOD URL", an upper-case method`, 3, false},
		{"header-without-colon.txt", `header-without-colon.txt:2: "Accept text/html": want a header "Name: value"`, 2, false},
		{"missing-body.txt", `missing-body.txt:3: "@bodies/nowhere.json": want "@FILE", a readable file`, 3, true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			_, err := loadgen.ReadTargets(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "loadgen: "+dir+string(filepath.Separator)+tt.want)
			var te *loadgen.TargetsError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, path, te.File)
			assert.Equal(t, tt.line, te.Line)
			assert.Equal(t, tt.notExist, errors.Is(err, fs.ErrNotExist))
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	_, err := loadgen.ReadTargets(filepath.Join(dir, "no-such-file.txt"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestParseTargetsErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"empty", "", `want at least one "METHOD URL" line`},
		{"comments only", "# nothing\n\n# here\n", `want at least one "METHOD URL" line`},
		{"no scheme", "GET 127.0.0.1:8080/\n", `targets:1: "GET 127.0.0.1:8080/"`},
		{"ftp", "GET ftp://127.0.0.1/\n", `targets:1`},
		{"two URLs", "GET http://a/ http://b/\n", `targets:1`},
		{"header after the body", "POST http://a/\n@b.txt\nX-A: 1\n", `targets:3: "X-A: 1": want a blank line after the body`},
		{"two targets without a blank line", "GET http://a/\nGET http://a/b\n", `targets:2: "GET http://a/b": want a header "Name: value", a body "@FILE" or a blank line before the next target`},
		{"empty body path", "POST http://a/\n@\n", `targets:2: "@": want "@FILE"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "b.txt"), "b")
			_, err := loadgen.ParseTargets(strings.NewReader(tt.in), dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseTargetsForms(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.txt"), "B")
	abs := filepath.Join(dir, "abs.txt")
	writeFile(t, abs, "ABS")
	got := parseTargetsText(t, dir, "\n\n  GET   http://a/x  \n\tX-Empty:\n  # a comment inside a target\n@b.txt\n\n\n\nPATCH https://a/y\n@"+abs+"\n")
	assert.Equal(t, []loadgen.Target{
		{Method: "GET", URL: "http://a/x", Headers: []loadgen.Header{{Name: "X-Empty", Value: ""}}, Body: []byte("B")},
		{Method: "PATCH", URL: "https://a/y", Body: []byte("ABS")},
	}, got)
}

func TestStatusSet(t *testing.T) {
	var zero loadgen.StatusSet
	assert.True(t, zero.Has(200) && zero.Has(399) && !zero.Has(404) && !zero.Has(199))
	assert.Equal(t, loadgen.DefaultOKStatus, zero.String())
	for _, tt := range []struct{ in, str string }{
		{"200,204,3xx", "200,204,3xx"},
		{"2xx,3xx", "2xx,3xx"},
		{" 404 , 200-202", "200-202,404"},
		{"1xx,2XX,500-599,600", "1xx,2xx,5xx,600"},
		{"250-420", "250-299,3xx,400-420"},
	} {
		s, err := loadgen.ParseStatusSet(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.str, s.String(), tt.in)
		again, err := loadgen.ParseStatusSet(s.String())
		require.NoError(t, err)
		assert.Equal(t, s, again, "round trip of %q", tt.in)
	}
	s, err := loadgen.ParseStatusSet("200,204")
	require.NoError(t, err)
	assert.True(t, s.Has(204) && !s.Has(201) && !s.Has(301) && !s.Has(-1) && !s.Has(1000))
	for _, bad := range []string{"", "2x", "99", "1000", "300-200", "abc", "200,", "0xx"} {
		_, err := loadgen.ParseStatusSet(bad)
		assert.ErrorContains(t, err, "want codes, classes or ranges", bad)
	}
}

// FuzzParseTargets: the parser never panics; what it accepts the engine
// can send (a URL Run takes, methods and headers that serialise), and
// what it refuses is a *TargetsError naming the line.
func FuzzParseTargets(f *testing.F) {
	for _, name := range []string{"tomcat.txt", "api.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "targets", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("GET http://a/\n@b.txt\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "bodies"), 0o755))
		for _, p := range []string{"b.txt", "bodies/form.txt", "bodies/order.json"} {
			writeFile(t, filepath.Join(dir, p), "body")
		}
		ts, err := loadgen.ParseTargets(strings.NewReader(string(in)), dir)
		if err != nil {
			var te *loadgen.TargetsError
			require.ErrorAs(t, err, &te)
			if te.Want != `at least one "METHOD URL" line` {
				assert.Positive(t, te.Line, "%v", err)
			}
			return
		}
		require.NotEmpty(t, ts)
		for _, tg := range ts {
			require.NoError(t, loadgen.CheckURL(tg.URL))
			require.NoError(t, loadgen.CheckTarget(tg), "%+v", tg)
		}
	})
}

// TestCheckTargets: targets on the URL's origin pass, a default port
// written or not; one on another port, host or scheme is refused.
func TestCheckTargets(t *testing.T) {
	ok := []loadgen.Target{{URL: "http://127.0.0.1/a"}, {URL: "/b"}, {Method: "POST", URL: "http://127.0.0.1:80/c"}}
	require.NoError(t, loadgen.CheckTargets("http://127.0.0.1:80/", ok))
	require.NoError(t, loadgen.CheckTargets("", ok[:1]))
	for _, tg := range []string{"http://127.0.0.1:8080/a", "https://127.0.0.1/a", "http://[::1]/a"} {
		assert.ErrorContains(t, loadgen.CheckTargets("http://127.0.0.1/", []loadgen.Target{{URL: tg}}), "like the first target", tg)
	}
}
