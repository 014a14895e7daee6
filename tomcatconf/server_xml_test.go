package tomcatconf_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beevik/etree"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
)

// serverXMLs returns every server.xml of the shared corpus and Debian's
// tomcat10 one (copied into testdata).
func serverXMLs(t testing.TB) []string {
	t.Helper()
	dir := filepath.Join(testutil.CorpusDir(t), "tomcat")
	all, err := filepath.Glob(filepath.Join(dir, "*.xml"))
	require.NoError(t, err)
	var out []string
	for _, f := range all {
		switch b := filepath.Base(f); {
		case strings.HasPrefix(b, "http-"), strings.HasPrefix(b, "executor-"), strings.HasPrefix(b, "valve-"):
			continue // Tomcat's documentation, not server.xml files
		}
		out = append(out, f)
	}
	out = append(out, filepath.Join("testdata", "debian-tomcat10-10.1.60-server.xml"))
	require.GreaterOrEqual(t, len(out), 9)
	return out
}

func load(t testing.TB, path string) (*tomcatconf.Config, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	c, err := tomcatconf.Parse(path, data)
	require.NoError(t, err)
	return c, data
}

func TestModelCorpus(t *testing.T) {
	type want struct {
		connectors []string
		executors  []string
		services   int
		accessLogs int
	}
	tests := map[string]want{
		"server-10.1.59.xml":                              {[]string{"http-nio-8080"}, nil, 1, 1},
		"server-9.0.121.xml":                              {[]string{"http-nio-8080"}, nil, 1, 1},
		"server-8.5.100.xml":                              {[]string{"http-nio-8080"}, nil, 1, 1},
		"debian-tomcat10-10.1.60-server.xml":              {[]string{"http-nio-8080"}, nil, 1, 1},
		"030-docker-pega7-tomcat-ready-server.xml":        {[]string{"http-nio-8080", "http-nio-8090"}, nil, 2, 2},
		"atomgraph-letsencrypt-tomcat-c51dbfb-server.xml": {[]string{"http-nio-8080", "https-jsse-nio-8443", "ajp-nio-8009"}, nil, 1, 1},
		"cdluc3-tomcat8_catalina_base-server.xml":         {[]string{"http-nio-START_PORT_PLACEHOLDER"}, nil, 1, 1},
		"zstack-AlanJager-35a5c4c-server.xml":             {[]string{"http-nio-8080", "ajp-nio-8009"}, []string{"tomcatThreadPool"}, 1, 1},
		"dogtagpki-pki-server.xml-template-2014.xml":      {[]string{"http-nio-[PKI_UNSECURE_PORT]", "https-jsse-nio-[PKI_SECURE_PORT]", "ajp-nio-127.0.0.1-[PKI_AJP_PORT]"}, nil, 1, 1},
	}
	for _, f := range serverXMLs(t) {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			w, ok := tests[name]
			require.True(t, ok, "no expectation for %s", name)
			c, _ := load(t, f)
			var got []string
			for _, cn := range c.Connectors() {
				got = append(got, cn.Name())
			}
			assert.Equal(t, w.connectors, got, "commented-out <Connector> blocks must not count")
			var ex []string
			for _, e := range c.Executors() {
				ex = append(ex, e.Name)
			}
			assert.Equal(t, w.executors, ex)
			assert.Len(t, c.Services(), w.services)
			assert.Len(t, c.AccessLogValves(), w.accessLogs)
		})
	}
}

// outside checks that a and b differ only inside one region of a: the
// bytes before from and after to are the same in both.
func outside(t *testing.T, orig, got []byte, from, to int) {
	t.Helper()
	require.GreaterOrEqual(t, len(got), from)
	assert.Equal(t, string(orig[:from]), string(got[:from]), "bytes before the element changed")
	tail := len(orig) - to
	require.GreaterOrEqual(t, len(got), tail)
	assert.Equal(t, string(orig[to:]), string(got[len(got)-tail:]), "bytes after the element changed")
}

// elementRange returns the byte range of the start tag at 1-based line.
func elementRange(src []byte, line int, tag string) (int, int) {
	off := 0
	for l := 1; l < line; l++ {
		off += bytes.IndexByte(src[off:], '\n') + 1
	}
	start := off + bytes.Index(src[off:], []byte("<"+tag))
	end := start + bytes.IndexByte(src[start:], '>') + 1
	return start, end
}

func TestNoOpIsByteIdentical(t *testing.T) {
	for _, f := range serverXMLs(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, orig := load(t, f)
			assert.Equal(t, orig, c.Bytes())
			for _, cn := range c.Connectors() {
				// Set every attribute to its current value.
				ch, err := c.SetConnector(tomcatconf.ConnectorQuery{Service: cn.Service, Name: cn.Name()}, cn.Attrs, &tomcatconf.SetOptions{AllowUnknown: true})
				require.NoError(t, err)
				assert.Empty(t, ch)
			}
			assert.Equal(t, orig, c.Bytes(), "a no-op edit must be byte-identical")
			assert.False(t, c.Changed())
			assert.Empty(t, c.Diff())
		})
	}
}

func TestSetConnectorTouchesOnlyItsElement(t *testing.T) {
	attrs := tomcatconf.ArmGuideConnectorAttrs(7)
	for _, f := range serverXMLs(t) {
		c0, orig := load(t, f)
		for _, cn := range c0.Connectors() {
			t.Run(filepath.Base(f)+"/"+cn.Name(), func(t *testing.T) {
				c, _ := load(t, f)
				q := tomcatconf.ConnectorQuery{Service: cn.Service, Name: cn.Name()}
				changes, err := c.SetConnector(q, attrs, &tomcatconf.SetOptions{OverwritePlaceholders: true})
				require.NoError(t, err)
				require.NotEmpty(t, changes)
				got := c.Bytes()
				from, to := elementRange(orig, cn.Line, "Connector")
				outside(t, orig, got, from, to)

				// The diff's changed lines all lie in the element's lines.
				firstLine, lastLine := cn.Line, cn.Line+bytes.Count(orig[from:to], []byte("\n"))
				for _, l := range changedOldLines(t, c.Diff()) {
					assert.True(t, l >= firstLine && l <= lastLine, "diff touches line %d outside %d-%d", l, firstLine, lastLine)
				}

				// The new file parses to the intended model.
				re, err := tomcatconf.Parse(f, got)
				require.NoError(t, err)
				after, err := re.FindConnector(q)
				require.NoError(t, err)
				for _, a := range attrs {
					v, ok := after.Attr(a.Name)
					assert.True(t, ok)
					assert.Equal(t, a.Value, v)
				}
				for _, a := range cn.Attrs { // untouched attributes keep their values
					if v, ok := lookupAttr(attrs, a.Name); ok {
						a.Value = v
					}
					v, _ := after.Attr(a.Name)
					assert.Equal(t, a.Value, v, a.Name)
				}

				// A second identical edit changes nothing.
				changes, err = re.SetConnector(q, attrs, nil)
				require.NoError(t, err)
				assert.Empty(t, changes)
				assert.Equal(t, got, re.Bytes())
				assert.Empty(t, re.Diff())

				// Entities, quoting and the (missing) trailing newline survive.
				for _, s := range []string{"&quot;", "&#x5c;", "'"} {
					assert.Equal(t, bytes.Count(orig, []byte(s)), bytes.Count(got, []byte(s)), "count of %q", s)
				}
				assert.Equal(t, orig[len(orig)-1], got[len(got)-1], "last byte")
			})
		}
	}
}

func lookupAttr(attrs []tomcatconf.Attr, name string) (string, bool) {
	for _, a := range attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return "", false
}

// changedOldLines returns the old-file line numbers a unified diff
// removes, and the line before each insertion.
func changedOldLines(t *testing.T, diff string) []int {
	t.Helper()
	var out []int
	old := 0
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "@@ "):
			var a, b, c, d int
			if n, _ := sscanHunk(l, &a, &b, &c, &d); n < 2 {
				t.Fatalf("bad hunk header %q", l)
			}
			old = a
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"), strings.HasPrefix(l, `\`):
		case strings.HasPrefix(l, "-"):
			out = append(out, old)
			old++
		case strings.HasPrefix(l, "+"):
			out = append(out, old-1)
		case strings.HasPrefix(l, " "):
			old++
		}
	}
	return out
}

func sscanHunk(h string, a, b, c, d *int) (int, error) {
	h = strings.NewReplacer("@@ -", "", " +", " ", " @@", "", ",", " ").Replace(h)
	f := strings.Fields(h)
	var vals []int
	for _, s := range f {
		n := 0
		for _, r := range s {
			n = n*10 + int(r-'0')
		}
		vals = append(vals, n)
	}
	if len(vals) > 0 {
		*a = vals[0]
	}
	return len(vals), nil
}

func TestAccessLogRoundTrip(t *testing.T) {
	for _, f := range serverXMLs(t) {
		for _, mode := range []tomcatconf.AccessLogMode{tomcatconf.AccessLogComment, tomcatconf.AccessLogEnabledFalse, tomcatconf.AccessLogRemove} {
			t.Run(filepath.Base(f)+"/"+mode.String(), func(t *testing.T) {
				c, orig := load(t, f)
				before := c.AccessLogValves()
				valves, err := c.DisableAccessLog(mode)
				require.NoError(t, err)
				require.Len(t, valves, len(before))
				require.NotEmpty(t, valves)
				got := c.Bytes()
				re, err := tomcatconf.Parse(f, got)
				require.NoError(t, err)
				if mode == tomcatconf.AccessLogEnabledFalse {
					for _, v := range re.AccessLogValves() {
						en, _ := v.Attr("enabled")
						assert.Equal(t, "false", en)
					}
				} else {
					assert.Empty(t, re.AccessLogValves())
				}
				if len(valves) == 1 {
					v := valves[0]
					from, _ := elementRange(orig, v.Line, "Valve")
					to := from + bytes.Index(orig[from:], []byte("/>")) + 2
					if mode == tomcatconf.AccessLogRemove {
						from = bytes.LastIndexByte(orig[:from], '\n') + 1
						to += bytes.IndexByte(orig[to:], '\n') + 1
					}
					outside(t, orig, got, from, to)
				}
				// Disabling again does nothing.
				again, err := re.DisableAccessLog(mode)
				require.NoError(t, err)
				assert.Empty(t, again)
				assert.Equal(t, got, re.Bytes())

				n, err := c.EnableAccessLog()
				if mode == tomcatconf.AccessLogRemove {
					require.ErrorIs(t, err, tomcatconf.ErrNotFound)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, len(valves), n)
				assert.Equal(t, string(orig), string(c.Bytes()), "re-enable restores the original exactly")
			})
		}
	}
}

func TestEnableAccessLogUncommentsArmGuideStyle(t *testing.T) {
	// The guide's own comment, inside a Host.
	src := `<?xml version="1.0" encoding="UTF-8"?>
<Server port="8005" shutdown="SHUTDOWN">
  <Service name="Catalina">
    <Connector port="8080" protocol="HTTP/1.1"/>
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost"  appBase="webapps">
        <!--
        <Valve className="org.apache.catalina.authenticator.SingleSignOn" />
        -->
<!-- 
    <Valve className="org.apache.catalina.valves.AccessLogValve" directory="logs"
        prefix="localhost_access_log" suffix=".txt"
        pattern="%h %l %u %t &quot;%r&quot; %s %b" />
-->
      </Host>
    </Engine>
  </Service>
</Server>
`
	c, err := tomcatconf.Parse("guide.xml", []byte(src))
	require.NoError(t, err)
	assert.Empty(t, c.AccessLogValves())
	n, err := c.EnableAccessLog()
	require.NoError(t, err)
	assert.Equal(t, 1, n, "only the access log comment is uncommented, not SingleSignOn")
	v := c.AccessLogValves()
	require.Len(t, v, 1)
	p, _ := v[0].Attr("pattern")
	assert.Equal(t, `%h %l %u %t "%r" %s %b`, p)
	assert.Contains(t, string(c.Bytes()), "<!--\n        <Valve className=\"org.apache.catalina.authenticator.SingleSignOn\" />\n        -->")
}

// executorXML is the upstream server.xml with its shared Executor and the
// Connector that uses it uncommented.
func executorXML(t *testing.T) (string, []byte) {
	f := filepath.Join(testutil.CorpusDir(t), "tomcat", "server-10.1.59.xml")
	data, err := os.ReadFile(f)
	require.NoError(t, err)
	s := string(data)
	for _, cut := range []struct{ from, to string }{
		{"    <!--\n    <Executor name=\"tomcatThreadPool\"", "    <Executor name=\"tomcatThreadPool\""},
		{"minSpareThreads=\"4\"/>\n    -->", "minSpareThreads=\"4\"/>"},
		{"    <!--\n    <Connector executor=\"tomcatThreadPool\"\n               port=\"8080\"", "    <Connector executor=\"tomcatThreadPool\"\n               port=\"8081\""},
	} {
		require.Contains(t, s, cut.from)
		s = strings.Replace(s, cut.from, cut.to, 1)
	}
	i := strings.Index(s, "port=\"8081\"")
	j := strings.Index(s[i:], "-->")
	s = s[:i+j] + s[i+j+len("-->"):]
	return "server-executor.xml", []byte(s)
}

func TestExecutorThreads(t *testing.T) {
	name, data := executorXML(t)
	c, err := tomcatconf.Parse(name, data)
	require.NoError(t, err)
	ex := c.Executors()
	require.Len(t, ex, 1)
	assert.Equal(t, []string{"http-nio-8081"}, ex[0].UsedBy)

	q := tomcatconf.ConnectorQuery{Port: "8081"}
	_, err = c.SetConnector(q, []tomcatconf.Attr{{Name: "maxThreads", Value: "7"}}, nil)
	require.ErrorIs(t, err, tomcatconf.ErrExecutorThreads)
	assert.Contains(t, err.Error(), `Executor "tomcatThreadPool"`)
	assert.Equal(t, data, c.Bytes(), "a failed set changes nothing")

	changes, err := c.SetConnector(q, tomcatconf.ArmGuideConnectorAttrs(7), &tomcatconf.SetOptions{ToExecutor: true})
	require.NoError(t, err)
	require.Len(t, changes, 4)
	re, err := tomcatconf.Parse(name, c.Bytes())
	require.NoError(t, err)
	e := re.Executors()[0]
	v, _ := e.Attr("maxThreads")
	assert.Equal(t, "7", v)
	v, _ = e.Attr("minSpareThreads")
	assert.Equal(t, "7", v)
	cn, err := re.FindConnector(q)
	require.NoError(t, err)
	_, has := cn.Attr("maxThreads")
	assert.False(t, has, "thread attributes go to the Executor, not the Connector")
	v, _ = cn.Attr("maxKeepAliveRequests")
	assert.Equal(t, "500000", v)
}

func TestBadInput(t *testing.T) {
	f := filepath.Join(testutil.CorpusDir(t), "tomcat", "server-10.1.59.xml")
	tests := []struct {
		name    string
		q       tomcatconf.ConnectorQuery
		attrs   []tomcatconf.Attr
		target  error
		message string
	}{
		{"unknown attribute", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThread", Value: "7"}}, tomcatconf.ErrUnknownAttr, `did you mean "maxThreads"?`},
		{"wrong case", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxthreads", Value: "7"}}, tomcatconf.ErrUnknownAttr, `did you mean "maxThreads"?`},
		{"non-numeric maxThreads", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "seven"}}, tomcatconf.ErrInvalidValue, `maxThreads="seven" on <Connector>: want a 32-bit integer`},
		{"maxThreads 0", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "0"}}, tomcatconf.ErrInvalidValue, "want an integer >= 1"},
		{"maxThreads overflow", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "4294967296"}}, tomcatconf.ErrInvalidValue, "32-bit"},
		{"-2 where -1 is allowed", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxConnections", Value: "-2"}}, tomcatconf.ErrInvalidValue, "or -1 for no limit"},
		{"min above max", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "4"}, {Name: "minSpareThreads", Value: "8"}}, tomcatconf.ErrInvalidValue, "minSpareThreads=8 is more than maxThreads=4"},
		{"boolean", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "tcpNoDelay", Value: "yes"}}, tomcatconf.ErrInvalidValue, "true or false"},
		{"threadPriority above Java's MAX_PRIORITY", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "threadPriority", Value: "11"}}, tomcatconf.ErrInvalidValue, `threadPriority="11" on <Connector>: want an integer from 1 to 10`},
		{"threadPriority below MIN_PRIORITY", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "threadPriority", Value: "0"}}, tomcatconf.ErrInvalidValue, "from 1 to 10"},
		{"not an XML name", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "a b", Value: "1"}}, tomcatconf.ErrInvalidValue, "want an XML name"},
		{"no such connector", tomcatconf.ConnectorQuery{Port: "9999"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "7"}}, tomcatconf.ErrNotFound, "the file has http-nio-8080 (line 70)"},
		{"valid first, invalid second", tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "7"}, {Name: "maxConnections", Value: "lots"}}, tomcatconf.ErrInvalidValue, "maxConnections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, orig := load(t, f)
			_, err := c.SetConnector(tt.q, tt.attrs, nil)
			require.ErrorIs(t, err, tt.target)
			assert.Contains(t, err.Error(), tt.message)
			assert.Contains(t, err.Error(), f, "the error names the file")
			assert.Equal(t, orig, c.Bytes(), "nothing changed")
		})
	}

	t.Run("access log valve typo", func(t *testing.T) {
		c, orig := load(t, f)
		_, err := c.SetAccessLog([]tomcatconf.Attr{{Name: "requestAttributesEnable", Value: "true"}}, nil)
		require.ErrorIs(t, err, tomcatconf.ErrUnknownAttr)
		assert.Contains(t, err.Error(), `did you mean "requestAttributesEnabled"?`)
		assert.Equal(t, orig, c.Bytes())
	})

	t.Run("placeholder", func(t *testing.T) {
		f := filepath.Join(testutil.CorpusDir(t), "tomcat", "030-docker-pega7-tomcat-ready-server.xml")
		c, orig := load(t, f)
		_, err := c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "7"}}, nil)
		require.ErrorIs(t, err, tomcatconf.ErrPlaceholder)
		assert.Contains(t, err.Error(), `maxThreads="${maxThreads}"`)
		assert.Equal(t, orig, c.Bytes())
		// Setting a placeholder is accepted without numeric validation.
		_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8090"}, []tomcatconf.Attr{{Name: "maxConnections", Value: "${maxConn}"}}, nil)
		require.NoError(t, err)
	})

	t.Run("ambiguous", func(t *testing.T) {
		f := filepath.Join(testutil.CorpusDir(t), "tomcat", "030-docker-pega7-tomcat-ready-server.xml")
		c, _ := load(t, f)
		_, err := c.FindConnector(tomcatconf.ConnectorQuery{Protocol: "HTTP/1.1"})
		require.ErrorIs(t, err, tomcatconf.ErrAmbiguous)
	})

	t.Run("malformed", func(t *testing.T) {
		_, orig := load(t, f)
		for _, bad := range [][]byte{
			orig[:len(orig)/2],
			bytes.Replace(orig, []byte(`port="8080"`), []byte(`port="8080`), 1),
			bytes.Replace(orig, []byte("</Host>"), []byte("</Hots>"), 1),
			[]byte("<Foo/>"),
			{},
		} {
			_, err := tomcatconf.Parse("bad.xml", bad)
			require.ErrorIs(t, err, tomcatconf.ErrSyntax)
			assert.Contains(t, err.Error(), "bad.xml")
		}
	})
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "server.xml")
	_, orig := load(t, filepath.Join("testdata", "debian-tomcat10-10.1.60-server.xml"))
	require.NoError(t, os.WriteFile(p, orig, 0o640))
	require.NoError(t, os.Chmod(p, 0o640))
	uid, gid := os.Getuid(), os.Getgid()
	if os.Getuid() == 0 {
		uid, gid = 4242, 4343 // a Debian-like root:tomcat split, with ids nobody uses
		require.NoError(t, os.Chown(p, uid, gid))
	}

	c, err := tomcatconf.Load(p)
	require.NoError(t, err)
	res, err := c.Save(nil)
	require.NoError(t, err)
	assert.False(t, res.Changed, "unchanged bytes are not rewritten")
	assert.Empty(t, res.Backup)

	_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, tomcatconf.ArmGuideConnectorAttrs(7), nil)
	require.NoError(t, err)
	_, err = c.DisableAccessLog(tomcatconf.AccessLogComment)
	require.NoError(t, err)
	res, err = c.Save(nil)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Equal(t, p+".nettune.bak", res.Backup)
	bak, err := os.ReadFile(res.Backup)
	require.NoError(t, err)
	assert.Equal(t, orig, bak)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, c.Bytes(), got)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	assert.Equal(t, uid, statUID(fi))
	assert.Equal(t, gid, statGID(fi))
	assert.Empty(t, c.Diff(), "after Save the diff is against the saved file")

	// Someone else edits the file: Save refuses to lose that.
	_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "8"}}, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, append(got, "<!-- admin -->\n"...), 0o640))
	_, err = c.Save(nil)
	require.ErrorIs(t, err, tomcatconf.ErrModified)
	now, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.True(t, bytes.HasSuffix(now, []byte("<!-- admin -->\n")))
}

func TestDiffGolden(t *testing.T) {
	f := filepath.Join(testutil.CorpusDir(t), "tomcat", "server-10.1.59.xml")
	data, err := os.ReadFile(f)
	require.NoError(t, err)
	c, err := tomcatconf.Parse("conf/server.xml", data)
	require.NoError(t, err)
	_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, tomcatconf.ArmGuideConnectorAttrs(7), nil)
	require.NoError(t, err)
	_, err = c.DisableAccessLog(tomcatconf.AccessLogComment)
	require.NoError(t, err)
	golden(t, "upstream-10.1.59-armguide.diff", c.Diff())

	// The diff applies: patch(1) semantics checked by rebuilding the new
	// file from the old one and the hunks.
	assert.Equal(t, string(c.Bytes()), applyDiff(t, string(data), c.Diff()))
}

// applyDiff applies a unified diff to old.
func applyDiff(t *testing.T, old, diff string) string {
	t.Helper()
	oldLines := strings.SplitAfter(old, "\n")
	var out []string
	pos := 0 // 0-based index into oldLines
	lines := strings.SplitAfter(diff, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		text := ""
		if len(l) > 0 {
			text = l[1:]
		}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\`) {
			text = strings.TrimSuffix(text, "\n")
		}
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "@@ "):
			var a, b, c, d int
			sscanHunk(l, &a, &b, &c, &d)
			for pos < a-1 {
				out = append(out, oldLines[pos])
				pos++
			}
		case strings.HasPrefix(l, `\`):
		case strings.HasPrefix(l, "-"):
			require.Equal(t, text, oldLines[pos])
			pos++
		case strings.HasPrefix(l, "+"):
			out = append(out, text)
		case strings.HasPrefix(l, " "):
			require.Equal(t, text, oldLines[pos])
			out = append(out, oldLines[pos])
			pos++
		}
	}
	out = append(out, oldLines[pos:]...)
	return strings.Join(out, "")
}

func TestUnifiedDiffNoTrailingNewline(t *testing.T) {
	old := "a\nb\nc"
	new := "a\nb\nC"
	d := tomcatconf.UnifiedDiff("x", "y", []byte(old), []byte(new), 3)
	assert.Equal(t, "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+C\n\\ No newline at end of file\n", d)
	assert.Equal(t, new, applyDiff(t, old, d))
	assert.Empty(t, tomcatconf.UnifiedDiff("x", "y", []byte(old), []byte(old), 3))
}

// docModel renders every element of doc as "path attr=value" lines, for
// comparing models (in memory: serialising with etree would lose a \r).
func docModel(doc *etree.Document) []string {
	var out []string
	var walk func(e *etree.Element, path string)
	walk = func(e *etree.Element, path string) {
		path += "/" + e.Tag
		for _, a := range e.Attr {
			out = append(out, path+" "+a.FullKey()+"="+a.Value)
		}
		for i, ch := range e.ChildElements() {
			walk(ch, fmt.Sprintf("%s[%d]", path, i))
		}
	}
	walk(doc.Root(), "")
	return out
}

// TestUnifiedDiffMatchesGNU compares Diff with diff -u (GNU diffutils) on
// every corpus file after editing every Connector and removing the access
// log.
func TestUnifiedDiffMatchesGNU(t *testing.T) {
	gnu, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("diff(1) not installed")
	}
	for _, f := range serverXMLs(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, orig := load(t, f)
			for _, cn := range c.Connectors() {
				_, err := c.SetConnector(tomcatconf.ConnectorQuery{Service: cn.Service, Name: cn.Name()}, tomcatconf.ArmGuideConnectorAttrs(3), &tomcatconf.SetOptions{OverwritePlaceholders: true})
				require.NoError(t, err)
			}
			_, err := c.DisableAccessLog(tomcatconf.AccessLogRemove)
			require.NoError(t, err)
			newFile := filepath.Join(t.TempDir(), "new.xml")
			require.NoError(t, os.WriteFile(newFile, c.Bytes(), 0o644))
			out, err := exec.Command(gnu, "-u", "--label", "a", "--label", "b", f, newFile).Output()
			var exit *exec.ExitError
			require.True(t, err == nil || errors.As(err, &exit), "diff: %v", err)
			assert.Equal(t, string(out), tomcatconf.UnifiedDiff("a", "b", orig, c.Bytes(), 3))
		})
	}
}

func TestSetExecutor(t *testing.T) {
	// zstack's server.xml has an active Executor no Connector uses.
	f := filepath.Join(testutil.CorpusDir(t), "tomcat", "zstack-AlanJager-35a5c4c-server.xml")
	c, orig := load(t, f)
	ex, err := c.FindExecutor("", "tomcatThreadPool")
	require.NoError(t, err)
	assert.Empty(t, ex.UsedBy)

	_, err = c.SetExecutor("", "tomcatThreadPool", []tomcatconf.Attr{{Name: "maxThread", Value: "7"}}, nil)
	require.ErrorIs(t, err, tomcatconf.ErrUnknownAttr)
	assert.Contains(t, err.Error(), `did you mean "maxThreads"?`)
	_, err = c.SetExecutor("", "tomcatThreadPool", []tomcatconf.Attr{{Name: "maxThreads", Value: "2"}}, nil)
	require.ErrorIs(t, err, tomcatconf.ErrInvalidValue, "minSpareThreads=4 in the file is more than 2")
	_, err = c.SetExecutor("", "nope", []tomcatconf.Attr{{Name: "maxThreads", Value: "7"}}, nil)
	require.ErrorIs(t, err, tomcatconf.ErrNotFound)
	assert.Equal(t, orig, c.Bytes())

	changes, err := c.SetExecutor("", "tomcatThreadPool", []tomcatconf.Attr{{Name: "maxThreads", Value: "7"}, {Name: "minSpareThreads", Value: "7"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, []tomcatconf.Change{
		{Elem: "Executor", Name: "tomcatThreadPool", Attr: "maxThreads", Old: "500", New: "7"},
		{Elem: "Executor", Name: "tomcatThreadPool", Attr: "minSpareThreads", Old: "4", New: "7"},
	}, changes)
	from, to := elementRange(orig, ex.Line, "Executor")
	outside(t, orig, c.Bytes(), from, to)
	assert.Contains(t, string(c.Bytes()), `maxThreads="7" minSpareThreads="7"/>`)
}

func TestConnectorWithMissingExecutorUsesItsOwnPool(t *testing.T) {
	// Tomcat falls back to the Connector's own pool when the named
	// Executor does not exist, so its maxThreads counts.
	src := []byte(`<Server><Service name="S"><Connector port="8080" executor="gone"/></Service></Server>`)
	c, err := tomcatconf.Parse("x.xml", src)
	require.NoError(t, err)
	_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "maxThreads", Value: "7"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, `<Server><Service name="S"><Connector port="8080" executor="gone" maxThreads="7"/></Service></Server>`, string(c.Bytes()))
}

func TestEntitiesAndQuotesSurvive(t *testing.T) {
	// Tomcat's docs suggest relaxedQueryChars with character references;
	// single quotes and tabs as users write them.
	src := "<Server port=\"-1\">\r\n\t<Service name='Catalina'>\r\n" +
		"\t\t<Connector port='8080' relaxedQueryChars=\"&#x5c;[]|{}^&#x60;\"\r\n" +
		"\t\t\tserver='a \"quoted\" name' connectionTimeout = '20000' />\r\n" +
		"\t</Service>\r\n</Server>"
	c, err := tomcatconf.Parse("x.xml", []byte(src))
	require.NoError(t, err)
	cn, err := c.FindConnector(tomcatconf.ConnectorQuery{Port: "8080"})
	require.NoError(t, err)
	v, _ := cn.Attr("relaxedQueryChars")
	assert.Equal(t, `\[]|{}^`+"`", v)

	_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{
		{Name: "connectionTimeout", Value: "30000"},
		{Name: "server", Value: `it's "new"`},
		{Name: "maxThreads", Value: "7"},
	}, nil)
	require.NoError(t, err)
	want := "<Server port=\"-1\">\r\n\t<Service name='Catalina'>\r\n" +
		"\t\t<Connector port='8080' relaxedQueryChars=\"&#x5c;[]|{}^&#x60;\"\r\n" +
		"\t\t\tserver='it&apos;s \"new\"' connectionTimeout = '30000'\r\n" +
		"\t\t\tmaxThreads='7' />\r\n" +
		"\t</Service>\r\n</Server>"
	assert.Equal(t, want, string(c.Bytes()))
	re, err := tomcatconf.Parse("x.xml", c.Bytes())
	require.NoError(t, err)
	cn, err = re.FindConnector(tomcatconf.ConnectorQuery{Port: "8080"})
	require.NoError(t, err)
	v, _ = cn.Attr("server")
	assert.Equal(t, `it's "new"`, v)
}

func TestValvesByClass(t *testing.T) {
	// Valves on the Engine, a Host and a Context; one commented out.
	src := `<Server port="-1"><Service name="A">
  <Engine name="E" defaultHost="h1">
    <Valve className="org.apache.catalina.valves.RemoteIpValve"/>
    <Host name="h1">
      <!-- <Valve className="org.apache.catalina.valves.RequestDumperValve"/> -->
      <Valve className="org.apache.catalina.valves.AccessLogValve" prefix="h1"/>
      <Context path="/app"><Valve className="org.apache.catalina.valves.ExtendedAccessLogValve"/></Context>
    </Host>
  </Engine></Service></Server>`
	c, err := tomcatconf.Parse("v.xml", []byte(src))
	require.NoError(t, err)
	var got []string
	for _, v := range c.Valves("") {
		got = append(got, v.ClassName+" host="+v.Host+" context="+v.Context)
	}
	assert.Equal(t, []string{
		"org.apache.catalina.valves.RemoteIpValve host= context=",
		"org.apache.catalina.valves.AccessLogValve host=h1 context=",
		"org.apache.catalina.valves.ExtendedAccessLogValve host=h1 context=/app",
	}, got)
	assert.Len(t, c.Valves("AccessLogValve"), 1)
	assert.Len(t, c.Valves("org.apache.catalina.valves.AccessLogValve"), 1)
	assert.Empty(t, c.Valves("LogValve"), "a simple name matches whole")
	assert.Empty(t, c.Valves("RequestDumperValve"), "commented out")
	assert.Len(t, c.AccessLogValves(), 2, "AccessLogValve and ExtendedAccessLogValve")
}

func TestSaveThroughDebianSymlink(t *testing.T) {
	// Debian: /var/lib/tomcat10/conf -> /etc/tomcat10.
	root := t.TempDir()
	etc := filepath.Join(root, "etc", "tomcat10")
	base := filepath.Join(root, "var", "lib", "tomcat10")
	require.NoError(t, os.MkdirAll(etc, 0o755))
	require.NoError(t, os.MkdirAll(base, 0o755))
	require.NoError(t, os.Symlink(etc, filepath.Join(base, "conf")))
	_, orig := load(t, filepath.Join("testdata", "debian-tomcat10-10.1.60-server.xml"))
	require.NoError(t, os.WriteFile(filepath.Join(etc, "server.xml"), orig, 0o640))

	c, err := tomcatconf.Load(filepath.Join(base, "conf", "server.xml"))
	require.NoError(t, err)
	_, err = c.DisableAccessLog(tomcatconf.AccessLogComment)
	require.NoError(t, err)
	res, err := c.Save(nil)
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(res.Path)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(etc, "server.xml"), real, "the file in /etc/tomcat10 is replaced")
	assert.FileExists(t, filepath.Join(etc, "server.xml.nettune.bak"))
	fi, err := os.Lstat(filepath.Join(base, "conf"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink, "the symlink stays")
	got, err := os.ReadFile(filepath.Join(etc, "server.xml"))
	require.NoError(t, err)
	assert.Equal(t, c.Bytes(), got)
}
