package bootcfg_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/bootcfg"
)

// commandStubs are stand-ins for the commands the corpus files run in
// command substitutions. They are used only for files that have a
// command substitution ($(...) or backticks, as our parser reports), by
// putting a directory of these scripts first in PATH: the real tools read
// the machine (lsb_release, dpkg, /etc/system-release) or do not exist
// here (str_replace, from Kicksecure's helper-scripts), and the test must
// not depend on either. sed is only stubbed for the Fedora line that reads
// /etc/system-release; str_replace is implemented with the real sed.
var commandStubs = map[string]string{
	"lsb_release": "echo Debian",
	"dpkg":        "echo amd64",
	"dpkg-query":  "echo 6.1.0",
	"sed":         "echo Fedora Linux",
	"str_replace": `exec /bin/sed "s/$1/$2/g"`,
}

// shellEnv sources files in order with the real /bin/sh ("set -a" exports
// every assignment) in an empty environment and returns the variables it
// ends with, minus the shell's own (PWD, SHLVL, PATH, _).
func shellEnv(t *testing.T, files ...string) map[string]string {
	t.Helper()
	path := "/usr/bin:/bin"
	stubbed := false
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		pf, err := bootcfg.ParseFile(f, data)
		require.NoError(t, err)
		for _, a := range bootcfg.Assignments(pf) {
			for _, e := range a.Expansions {
				if e.Kind == bootcfg.ExpandCommand || e.Kind == bootcfg.ExpandBacktick {
					stubbed = true
				}
			}
		}
	}
	if stubbed {
		dir := t.TempDir()
		for name, body := range commandStubs {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
		}
		path = dir + ":" + path
	}
	script := "set -a\n"
	for i := range files {
		script += `. "$` + string(rune('1'+i)) + "\"\n"
	}
	script += "exec env -0\n"
	cmd := exec.Command("/bin/sh", append([]string{"-c", script, "sh"}, files...)...)
	cmd.Env = []string{"PATH=" + path}
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "sh: %s", stderr.String())
	vars := map[string]string{}
	for _, kv := range strings.Split(string(out), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "PWD" || k == "SHLVL" || k == "PATH" || k == "_" || k == "OLDPWD" {
			continue
		}
		vars[k] = v
	}
	return vars
}
