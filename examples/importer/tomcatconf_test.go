package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nettune/nettune/tomcatconf"
)

// The Arm guide's server.xml steps on Debian's packaged file, from another
// module: the access log off and the guide's connector attributes, saved
// safely; and the census's recommendation from a Census value.
func TestTomcatconf(t *testing.T) {
	src, err := os.ReadFile("../../tomcatconf/testdata/debian-tomcat10-10.1.60-server.xml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "server.xml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := tomcatconf.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	valves, err := cfg.DisableAccessLog(tomcatconf.AccessLogComment)
	if err != nil || len(valves) != 1 {
		t.Fatalf("access log: %d valves, %v", len(valves), err)
	}
	if _, err := cfg.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, tomcatconf.ArmGuideConnectorAttrs(7), &tomcatconf.SetOptions{ToExecutor: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Save(nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `maxThreads="7"`) || strings.Contains(string(b), "\n        <Valve className=\"org.apache.catalina.valves.AccessLogValve\"") {
		t.Fatalf("saved server.xml:\n%s", b)
	}
	r := tomcatconf.Census{CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}.Recommend(0.5)
	if r.MaxThreads != 8 {
		t.Fatalf("8 CPUs, no busy threads: maxThreads %d (%s)", r.MaxThreads, r.Reason)
	}
	in := &tomcatconf.Instance{Home: "/usr/share/tomcat10", Base: t.TempDir()}
	if _, err := in.PID(); err == nil {
		t.Fatal("a base with no JVM has a PID")
	}
}
