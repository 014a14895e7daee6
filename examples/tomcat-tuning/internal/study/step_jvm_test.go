//go:build linux

package study

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
)

// TestJVMStep: jvm:OPTION writes CATALINA_BASE/bin/setenv.sh with the
// option added to JAVA_OPTS (a new file and its directory on the
// upstream layout, which has none), and the journal removes both; an
// existing setenv.sh keeps its lines. An option the JVM refuses, or one
// that is not a single option, is refused before any step is planned.
func TestJVMStep(t *testing.T) {
	h, _, _ := guideHost(t)
	o := DefaultOptions()
	o.Root, o.Steps = h.Root, []string{"jvm:-XX:+UseSerialGC"}
	setenv := filepath.Join(h.Tomcat.Instance.Base, "bin", "setenv.sh")
	require.NoDirExists(t, filepath.Dir(setenv))
	steps, err := Steps(h, o, nil)
	require.NoError(t, err)
	require.Len(t, steps, 1)

	res, revert := applySteps(t, h.Root, steps)
	assert.Equal(t, tuning.StatusApplied, res[0].Status)
	got, err := os.ReadFile(setenv)
	require.NoError(t, err)
	assert.Equal(t, "#!/bin/sh\n# Written by nettune's tomcat-tuning; remove this file to undo it.\n"+
		`JAVA_OPTS="$JAVA_OPTS -XX:+UseSerialGC" # nettune: -steps jvm:-XX:+UseSerialGC`+"\n", string(got))
	if sh, err := exec.LookPath("sh"); err == nil {
		out, err := exec.Command(sh, "-c", `JAVA_OPTS=-Dx=1; . "$0"; printf %s "$JAVA_OPTS"`, setenv).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, "-Dx=1 -XX:+UseSerialGC", string(out), "what catalina.sh gets from it")
	}
	revert()
	assert.NoFileExists(t, setenv)
	assert.NoDirExists(t, filepath.Dir(setenv), "the directory the step made")

	// A setenv.sh of the user's keeps its lines, the option after them.
	require.NoError(t, os.MkdirAll(filepath.Dir(setenv), 0o755))
	require.NoError(t, os.WriteFile(setenv, []byte("CATALINA_OPTS=-Xms1g"), 0o755))
	e, err := setenvEdit(h, "-Xmx2g")
	require.NoError(t, err)
	assert.Equal(t, "CATALINA_OPTS=-Xms1g\n"+setenvLine("-Xmx2g"), string(e.Data))

	for _, tt := range []struct{ step, want string }{
		{"jvm:-XX:+NoSuchOption", "-steps jvm:-XX:+NoSuchOption: the JVM refuses it"},
		{"jvm:-Xmx2g -Xms1g", `option "-Xmx2g -Xms1g": want one option without spaces`},
		{"jvm:UseSerialGC", `option "UseSerialGC": want one JVM option, e.g. -XX:+UseSerialGC`},
		{"jvm:-Dx=$(id)", "shell characters"},
	} {
		o.Steps = []string{"access-log", tt.step}
		_, err := Steps(h, o, nil)
		if tt.step == "jvm:-XX:+NoSuchOption" {
			if _, lerr := exec.LookPath("java"); lerr != nil {
				continue // no JVM here to ask
			}
		}
		assert.ErrorContains(t, err, tt.want, tt.step)
	}

	// -persist writes the file whole, journaled; -export puts it beside
	// the others.
	p, err := PlanPersist(h, o, nil, []string{"jvm:-XX:+UseSerialGC"})
	require.NoError(t, err)
	require.Len(t, p.Files, 1)
	assert.Equal(t, setenv, p.Files[0].Path)
	dir := t.TempDir()
	files, err := p.Export(h, dir)
	require.NoError(t, err)
	rel, err := filepath.Rel(h.Root, setenv)
	require.NoError(t, err)
	assert.Contains(t, files, rel)
}

// TestCheckJVMArg: the JVM's command line in /proc has the option, or
// the error names the file that was not read.
func TestCheckJVMArg(t *testing.T) {
	self := os.Getpid()
	assert.NoError(t, checkJVMArg(self, os.Args[0]))
	assert.ErrorContains(t, checkJVMArg(self, "-XX:+UseSerialGC"), "was started without -XX:+UseSerialGC: its CATALINA_BASE/bin/setenv.sh was not read")
}

// TestParseStepsEscapedComma: a comma of a step's own (a JVM option's) is
// written "\,"; the others separate steps, as before.
func TestParseStepsEscapedComma(t *testing.T) {
	names, err := ParseSteps(`access-log,jvm:-XX:CompileCommand=exclude\,java/lang/String.indexOf, sysctl:net.ipv4.ip_local_reserved_ports=8080\,8081`)
	require.NoError(t, err)
	assert.Equal(t, []string{"access-log", "jvm:-XX:CompileCommand=exclude,java/lang/String.indexOf",
		"sysctl:net.ipv4.ip_local_reserved_ports=8080,8081"}, names)
	assert.Equal(t, []string{"a", `b\c`, ""}, splitSteps(`a,b\c,`), "a backslash before anything else is kept")
	_, err = ParseSteps("jvm:-XX:CompileCommand=exclude,java/lang/String.indexOf")
	assert.ErrorContains(t, err, `unknown step "java/lang/String.indexOf"`, "an unescaped comma splits")
}
