//go:build linux

package study

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiscoverMalformedServerXML: a CATALINA_BASE whose server.xml does
// not parse is an error naming the file, not a plan that says "run as
// root or as tomcat" and measures the built-in page (issue 24, case 8).
func TestDiscoverMalformedServerXML(t *testing.T) {
	home, base := t.TempDir(), t.TempDir()
	xml := filepath.Join(base, "conf", "server.xml")
	require.NoError(t, os.MkdirAll(filepath.Dir(xml), 0o755))
	require.NoError(t, os.WriteFile(xml, []byte("<Server><Service name=\"Catalina\">"), 0o644))
	o := DefaultOptions()
	o.Home, o.Base = home, base
	_, err := Discover(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the Tomcat instance's configuration")
	assert.Contains(t, err.Error(), xml)
	assert.NotContains(t, err.Error(), "run as root")
}
