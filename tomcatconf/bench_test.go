package tomcatconf_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beevik/etree"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
)

// BenchmarkArmGuideEdit is the guide's whole server.xml change with minimal
// diffs: parse, set four Connector attributes, comment out the access log,
// render the bytes. Compare with BenchmarkEtreeRewrite, which does the same
// edit the naive way (and reformats the file).
func BenchmarkArmGuideEdit(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testutil.CorpusDir(b), "tomcat", "server-10.1.59.xml"))
	require.NoError(b, err)
	attrs := tomcatconf.ArmGuideConnectorAttrs(7)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		c, err := tomcatconf.Parse("server.xml", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, attrs, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := c.DisableAccessLog(tomcatconf.AccessLogComment); err != nil {
			b.Fatal(err)
		}
		_ = c.Bytes()
	}
}

// BenchmarkEtreeRewrite: parse with etree, set the attributes, remove the
// Valve, re-serialise — the baseline BenchmarkArmGuideEdit is compared with.
func BenchmarkEtreeRewrite(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testutil.CorpusDir(b), "tomcat", "server-10.1.59.xml"))
	require.NoError(b, err)
	attrs := tomcatconf.ArmGuideConnectorAttrs(7)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(data); err != nil {
			b.Fatal(err)
		}
		cn := doc.FindElement("//Connector[@port='8080']")
		for _, a := range attrs {
			cn.CreateAttr(a.Name, a.Value)
		}
		v := doc.FindElement("//Valve[@className='org.apache.catalina.valves.AccessLogValve']")
		v.Parent().RemoveChild(v)
		if _, err := doc.WriteToBytes(); err != nil {
			b.Fatal(err)
		}
	}
}
