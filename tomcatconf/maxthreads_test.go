package tomcatconf_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
)

// TestMaxThreads reads the pool size each real server.xml gives its HTTP
// Connector: Tomcat's default where none is set, the Executor's when the
// Connector uses one, and an error naming a placeholder.
func TestMaxThreads(t *testing.T) {
	corpus := filepath.Join(testutil.CorpusDir(t), "tomcat")
	tests := []struct {
		file string
		q    tomcatconf.ConnectorQuery
		want int
		err  string
	}{
		{file: filepath.Join("testdata", "debian-tomcat10-10.1.60-server.xml"), q: tomcatconf.ConnectorQuery{Port: "8080"}, want: 200},
		{file: filepath.Join(corpus, "server-10.1.59.xml"), q: tomcatconf.ConnectorQuery{Port: "8080"}, want: 200},
		{file: filepath.Join(corpus, "atomgraph-letsencrypt-tomcat-c51dbfb-server.xml"), q: tomcatconf.ConnectorQuery{Port: "8443"}, want: 150},
		{file: filepath.Join(corpus, "030-docker-pega7-tomcat-ready-server.xml"), q: tomcatconf.ConnectorQuery{Port: "8080"},
			err: `maxThreads="${maxThreads}": want a whole number`},
		{file: filepath.Join(corpus, "server-10.1.59.xml"), q: tomcatconf.ConnectorQuery{Port: "9999"}, err: "no Connector"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file)+" "+tt.q.Port, func(t *testing.T) {
			c, _ := load(t, tt.file)
			n, err := c.MaxThreads(tt.q)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, n)
		})
	}
}

// TestMaxThreadsFollowsTheEdits: after the guide's edit the Connector's
// (or its Executor's) maxThreads is the one set.
func TestMaxThreadsFollowsTheEdits(t *testing.T) {
	for _, file := range serverXMLs(t) {
		c, _ := load(t, file)
		for _, cn := range c.Connectors() {
			q := tomcatconf.ConnectorQuery{Service: cn.Service, Name: cn.Name()}
			if _, err := c.SetConnector(q, tomcatconf.ArmGuideConnectorAttrs(7), &tomcatconf.SetOptions{ToExecutor: true}); err != nil {
				continue // placeholders, ambiguous queries: covered elsewhere
			}
			n, err := c.MaxThreads(q)
			if assert.NoError(t, err, "%s: %s", file, cn.Name()) {
				assert.Equal(t, 7, n, "%s: %s", file, cn.Name())
			}
		}
	}
}

// TestMaxThreadsExecutor: a Connector that uses an Executor runs the
// Executor's pool, whatever its own maxThreads says (Tomcat ignores it).
func TestMaxThreadsExecutor(t *testing.T) {
	const xml = `<Server port="-1"><Service name="Catalina">
  <Executor name="pool" namePrefix="exec-" maxThreads="64"/>
  <Executor name="dflt" namePrefix="d-"/>
  <Connector executor="pool" port="8080" protocol="HTTP/1.1" maxThreads="9"/>
  <Connector executor="dflt" port="8081" protocol="HTTP/1.1"/>
  <Engine name="Catalina" defaultHost="localhost"/>
</Service></Server>`
	c, err := tomcatconf.Parse("inline.xml", []byte(xml))
	require.NoError(t, err)
	n, err := c.MaxThreads(tomcatconf.ConnectorQuery{Port: "8080"})
	require.NoError(t, err)
	assert.Equal(t, 64, n)
	n, err = c.MaxThreads(tomcatconf.ConnectorQuery{Port: "8081"})
	require.NoError(t, err)
	assert.Equal(t, 200, n, "the Executor's documented default")
}
