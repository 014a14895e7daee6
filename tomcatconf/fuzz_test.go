package tomcatconf_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/beevik/etree"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tomcatconf"
)

// FuzzSplice makes random attribute edits on the corpus files: a
// successful edit must give XML that parses to the intended model (the
// original model with that one attribute set) and change no byte outside
// the Connector's start tag; a refused edit must change nothing.
func FuzzSplice(f *testing.F) {
	files := serverXMLs(f)
	datas := make([][]byte, len(files))
	for i, p := range files {
		d, err := os.ReadFile(p)
		require.NoError(f, err)
		datas[i] = d
	}
	for i := range files {
		f.Add(uint8(i), uint8(0), "maxThreads", "7")
		f.Add(uint8(i), uint8(1), "maxKeepAliveRequests", "-1")
	}
	f.Add(uint8(0), uint8(0), "server", `a "quoted" & <odd> 'value'`)
	f.Add(uint8(3), uint8(0), "port", "${port}")
	f.Add(uint8(1), uint8(0), "connectionTimeout", "20000")
	f.Add(uint8(2), uint8(0), "xmlns:x", "y")
	f.Add(uint8(4), uint8(2), "relaxedQueryChars", "[]|{}^&#x5c;&#x60;")
	f.Fuzz(func(t *testing.T, fi, ci uint8, name, value string) {
		i := int(fi) % len(files)
		data := datas[i]
		c, err := tomcatconf.Parse(files[i], data)
		require.NoError(t, err)
		conns := c.Connectors()
		cn := conns[int(ci)%len(conns)]
		q := tomcatconf.ConnectorQuery{Service: cn.Service, Name: cn.Name()}
		if _, err := c.FindConnector(q); err != nil {
			t.Skip("two connectors share a name")
		}
		_, err = c.SetConnector(q, []tomcatconf.Attr{{Name: name, Value: value}},
			&tomcatconf.SetOptions{AllowUnknown: true, OverwritePlaceholders: true})
		if err != nil {
			assert.NotContains(t, err.Error(), "internal error")
			assert.Equal(t, data, c.Bytes(), "a refused edit changes nothing")
			return
		}
		got := c.Bytes()
		re, err := tomcatconf.Parse(files[i], got)
		if err != nil {
			t.Fatalf("edited file must parse: %v\n%s", err, c.Diff())
		}

		// The intended model: the original's, with the attribute set on
		// that Connector.
		want := etree.NewDocument()
		require.NoError(t, want.ReadFromBytes(data))
		idx := slices.IndexFunc(conns, func(x tomcatconf.Connector) bool { return x.Line == cn.Line })
		el := want.FindElements("//Connector")[idx]
		el.CreateAttr(name, value)
		gotDoc := etree.NewDocument()
		require.NoError(t, gotDoc.ReadFromBytes(got))
		assert.Equal(t, docModel(want), docModel(gotDoc))

		after, err := re.FindConnector(q)
		if name != "port" && name != "protocol" && name != "address" {
			require.NoError(t, err)
			v, ok := after.Attr(name)
			assert.True(t, ok)
			assert.Equal(t, value, v)
		}
		// Bytes outside the start tag are the original's.
		start := strings.Index(string(data), "<Connector")
		assert.Equal(t, string(data[:start]), string(got[:start]))
	})
}

// FuzzParse: any input either fails with ErrSyntax or round-trips byte for
// byte, and the access log edits keep it parseable.
func FuzzParse(f *testing.F) {
	for _, p := range serverXMLs(f) {
		d, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(d)
	}
	f.Add([]byte(`<Server><Service><Engine><Host><!--<Valve className="x.AccessLogValve"/>--></Host></Engine></Service></Server>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := tomcatconf.Parse("fuzz.xml", data)
		if err != nil {
			assert.ErrorIs(t, err, tomcatconf.ErrSyntax)
			return
		}
		assert.Equal(t, data, c.Bytes())
		assert.Empty(t, c.Diff())
		for _, cn := range c.Connectors() {
			_ = cn.Name()
		}
		_ = c.Executors()
		for _, mode := range []tomcatconf.AccessLogMode{tomcatconf.AccessLogComment, tomcatconf.AccessLogEnabledFalse, tomcatconf.AccessLogRemove} {
			c, err := tomcatconf.Parse("fuzz.xml", data)
			require.NoError(t, err)
			if _, err := c.DisableAccessLog(mode); err != nil {
				assert.Equal(t, data, c.Bytes())
				continue
			}
			_, err = tomcatconf.Parse("fuzz.xml", c.Bytes())
			require.NoError(t, err)
			assert.Empty(t, c.AccessLogValves()[0:0])
			if _, err := c.EnableAccessLog(); err == nil {
				_, err = tomcatconf.Parse("fuzz.xml", c.Bytes())
				require.NoError(t, err)
			}
		}
	})
}
