//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/internal/testutil"
)

// cli runs the program's command line in the test process: its stdout
// and exit status.
func cli(args ...string) (string, int) {
	var out bytes.Buffer
	err := runArgs(args, &out)
	return out.String(), cliflag.ExitCode(err)
}

// serverXML copies Debian's tomcat10 server.xml into a temporary folder.
func serverXML(t *testing.T) (path string, orig []byte) {
	t.Helper()
	orig, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "tomcatconf", "testdata", "debian-tomcat10-10.1.60-server.xml"))
	require.NoError(t, err)
	path = filepath.Join(t.TempDir(), "server.xml")
	require.NoError(t, os.WriteFile(path, orig, 0o640))
	return path, orig
}

// TestCLI: -h, -version and an unknown flag as every example program
// answers them; a contradictory or pointless command line exits 2 with
// one line before server.xml is read.
func TestCLI(t *testing.T) {
	testutil.CheckCLI(t, "tomcatconf", cli, []string{"access-log", "access-log-mode", "apply", "census", "file",
		"overwrite-placeholders", "port", "service", "set", "to-executor"})
	file, orig := serverXML(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-port", "8080"}, "-port goes with -set"},
		{[]string{"-service", "Catalina", "-access-log=false"}, "-service goes with -set"},
		{[]string{"-to-executor", "-apply"}, "-to-executor goes with -set"},
		{[]string{"-overwrite-placeholders"}, "-overwrite-placeholders goes with -set"},
		{[]string{"-access-log-mode", "remove"}, "-access-log-mode says how -access-log=false disables"},
		{[]string{"-access-log", "-access-log-mode", "remove"}, "-access-log-mode says how -access-log=false disables"},
		{[]string{"-apply"}, "-apply writes the edits of -set and -access-log"},
		{[]string{"-census", "5", "-apply"}, "-census takes a census of the running instance and changes nothing: drop -apply"},
		{[]string{"-census", "0"}, "-census 0s: want an interval > 0"},
		{[]string{"-access-log", "off", "-apply"}, `unexpected arguments ["off" "-apply"]`},
		{[]string{"-access-log=false", "-access-log-mode", "shred"}, "-access-log-mode: "},
		{[]string{"-set", "maxThreads", "-apply"}, `-set "maxThreads": want name=value`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := runArgs(append([]string{"-file", file}, tt.args...), &out)
			assert.Equal(t, cliflag.ExitUsage, cliflag.ExitCode(err), "%v", err)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
			assert.Empty(t, out.String(), "refused before server.xml is read")
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, orig, b)
		})
	}
	_, code := cli("-file", filepath.Join(t.TempDir(), "missing.xml"))
	assert.Equal(t, cliflag.ExitFailure, code)
}

// TestAccessLogFlag: -access-log=false disables the AccessLogValve (a dry
// run until -apply), -access-log enables it again, and without the flag
// it is left alone.
func TestAccessLogFlag(t *testing.T) {
	file, orig := serverXML(t)
	out, code := cli("-file", file, "-set", "maxThreads=7", "-access-log=false")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, `+               maxThreads="7"`)
	assert.Contains(t, out, "+        <!--<Valve className=\"org.apache.catalina.valves.AccessLogValve\"")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, orig, b, "a dry run")

	out, code = cli("-file", file, "-access-log=false", "-apply")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "# wrote "+file)
	out, code = cli("-file", file, "-set", "maxThreads=7")
	require.Equal(t, 0, code, out)
	assert.NotContains(t, out, "AccessLogValve\" directory", "left alone without -access-log")
	out, code = cli("-file", file, "-access-log", "-apply")
	require.Equal(t, 0, code, out)
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, orig, b, "enabled again as it was")
}
