//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cliflag"
)

// TestCLIConvention: -h answers (exit 0) with every option of the mode
// and its description, -version with the module, and a bad or
// contradictory command line exits 2 before any load is sent (the URL
// refuses connections: a run would fail with status 1).
func TestCLIConvention(t *testing.T) {
	const dead = "http://127.0.0.1:1/"
	body := filepath.Join(t.TempDir(), "body")
	require.NoError(t, os.WriteFile(body, []byte("x=1"), 0o644))
	for _, tt := range []struct {
		name  string
		args  []string
		code  int
		specs []optSpec // -h must describe each
		want  string    // in stdout
	}{
		{"wrk2 -h", []string{"-h"}, cliflag.ExitOK, wrkSpecs, usage},
		{"wrk2 --help", []string{"--help"}, cliflag.ExitOK, wrkSpecs, usage},
		{"ab -h", []string{"ab", "-h"}, cliflag.ExitOK, abSpecs, "ab mode options:"},
		{"sweep -h", []string{"sweep", "-h"}, cliflag.ExitOK, sweepSpecs, "sweep options:"},
		{"merge -h", []string{"merge", "-h"}, cliflag.ExitOK, mergeSpecs, "merge options:"},
		{"compare -h", []string{"compare", "-h"}, cliflag.ExitOK, compareSpecs, "compare options:"},
		{"-version", []string{"-version"}, cliflag.ExitOK, nil, "loadgen github.com/nettune/nettune "},
		{"--version", []string{"--version"}, cliflag.ExitOK, nil, "loadgen github.com/nettune/nettune "},
		{"-v, wrk's", []string{"-v"}, cliflag.ExitOK, nil, "loadgen github.com/nettune/nettune "},
		{"ab -V, ab's", []string{"ab", "-V"}, cliflag.ExitOK, nil, "loadgen github.com/nettune/nettune "},
		{"unknown option", []string{"-x", dead}, cliflag.ExitUsage, nil, ""},
		{"unknown long option", []string{"--remote", dead}, cliflag.ExitUsage, nil, ""},
		{"ab unknown option", []string{"ab", "-X", dead}, cliflag.ExitUsage, nil, ""},
		{"bad value", []string{"-d", "soon", dead}, cliflag.ExitUsage, nil, ""},
		{"bad URL", []string{"ftp://127.0.0.1/"}, cliflag.ExitUsage, nil, ""},
		{"ab without URL", []string{"ab", "-n", "10"}, cliflag.ExitUsage, nil, ""},
		{"Lua", []string{"-s", "x.lua", dead}, cliflag.ExitUsage, nil, ""},
		{"--slack without -R", []string{"--slack", "1ms", dead}, cliflag.ExitUsage, nil, ""},
		{"--insecure on http", []string{"--insecure", dead}, cliflag.ExitUsage, nil, ""},
		{"--shard without -R", []string{"--shard", "0/2", dead}, cliflag.ExitUsage, nil, ""},
		{"ab -i -p", []string{"ab", "-i", "-p", body, dead}, cliflag.ExitUsage, nil, ""},
		{"ab -p -u", []string{"ab", "-p", body, "-u", body, dead}, cliflag.ExitUsage, nil, ""},
		{"sweep --pid --process", []string{"sweep", "-c", "1,2", "--pid", "1", "--process", "java", dead}, cliflag.ExitUsage, nil, ""},
		{"sweep --slack without -R", []string{"sweep", "-c", "1,2", "--slack", "1ms", dead}, cliflag.ExitUsage, nil, ""},
		{"a failed run", []string{"ab", "-p", filepath.Join(t.TempDir(), "missing"), dead}, cliflag.ExitFailure, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), tt.args, &out, devNull(t))
			assert.Equal(t, tt.code, cliflag.ExitCode(err), "%v", err)
			if tt.code == cliflag.ExitUsage {
				assert.NotContains(t, err.Error(), "\n", "one line")
				assert.Empty(t, out.String(), "nothing ran")
			}
			assert.Contains(t, out.String(), tt.want)
			for _, s := range tt.specs {
				name := "--" + s.long
				if s.short != "" {
					name = "-" + s.short
				}
				assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(name)+`\b.*  `+regexp.QuoteMeta(s.help)+`$`, out.String())
				assert.NotEmpty(t, s.help, name)
			}
		})
	}
}

// TestREADMEUsage: the README shows the usage -h prints, and the sources'
// two lines.
func TestREADMEUsage(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	assert.Contains(t, readme, "```\n"+usage+"\n```")
	for _, line := range []string{
		"wrk -c1280 -t128 -R500000 -d60 http://${tomcat_ip}:8080/examples/servlets/servlet/HelloWorldExample",
		"loadgen -c1280 -t128 -R500000 -d60 http://${tomcat_ip}:8080/examples/servlets/servlet/HelloWorldExample",
		"ab -k -n 100000 -c 149 http://192.168.5.44:8080/",
		"loadgen ab -k -n 100000 -c 149 http://192.168.5.44:8080/",
	} {
		assert.Contains(t, readme, line)
	}
	// Every option of every mode is in the mode's usage lines, but -h and
	// -v (the last line) and those accepted only to be refused or ignored.
	between := func(from, to string) string {
		i, j := strings.Index(usage, from), strings.Index(usage, to)
		require.True(t, i >= 0 && j > i, "%q, %q", from, to)
		return usage[i:j]
	}
	for _, m := range []struct {
		specs []optSpec
		usage string
	}{
		{wrkSpecs, between("usage: loadgen", "loadgen sweep")},
		{sweepSpecs, between("loadgen sweep", "loadgen merge")},
		{mergeSpecs, between("loadgen merge", "loadgen compare")},
		{compareSpecs, between("loadgen compare", "loadgen ab")},
		{abSpecs, between("loadgen ab", "loadgen -h")},
	} {
		for _, s := range m.specs {
			if s.help == helpHelp || s.long == "version" || regexp.MustCompile(`refused|ignored|accepted`).MatchString(s.help) {
				continue
			}
			name := "--" + s.long
			if s.short != "" {
				name = "-" + s.short
			}
			assert.Regexp(t, `[\s\[(|]`+regexp.QuoteMeta(name)+`[\s\])|]`, m.usage, "%s is not in its mode's usage", name)
		}
	}
}
