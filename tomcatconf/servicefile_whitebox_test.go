package tomcatconf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Debian 12's tomcat10 10.1.60-1~deb12u1 unit, as installed in
// /lib/systemd/system.
const debianUnit = "testdata/tomcat10.service"

func TestParseServiceFileDebian(t *testing.T) {
	f, err := os.Open(debianUnit)
	require.NoError(t, err)
	defer f.Close()
	sf, err := parseServiceFile(debianUnit, f)
	require.NoError(t, err)
	assert.Equal(t, "tomcat", sf.User)
	assert.Equal(t, "tomcat", sf.Group)
	assert.Equal(t, []string{
		"CATALINA_HOME=/usr/share/tomcat10",
		"CATALINA_BASE=/var/lib/tomcat10",
		"CATALINA_TMPDIR=/tmp",
		"JAVA_OPTS=-Djava.awt.headless=true",
	}, sf.Environment)
	assert.Equal(t, []string{"/bin/sh", "/usr/libexec/tomcat10/tomcat-start.sh"}, sf.ExecStart)
	assert.Empty(t, sf.EnvironmentFiles)
	v, ok := sf.Get("CATALINA_BASE")
	assert.True(t, ok)
	assert.Equal(t, DefaultBase, v)
}

// The installed unit, when the package is there, reads as the copy does.
func TestReadServiceFileInstalled(t *testing.T) {
	sf, err := readServiceFile("", DefaultService)
	if err != nil {
		require.ErrorIs(t, err, ErrNotFound)
		t.Skipf("skipped: %v", err)
	}
	assert.Equal(t, "tomcat", sf.User)
	v, _ := sf.Get("CATALINA_BASE")
	assert.Equal(t, DefaultBase, v)
	assert.NotEmpty(t, sf.ExecStart)
}

// unitRoot is a host root with Debian's unit in lib/systemd/system.
func unitRoot(t *testing.T) string {
	root := t.TempDir()
	data, err := os.ReadFile(debianUnit)
	require.NoError(t, err)
	write(t, filepath.Join(root, "lib/systemd/system", DefaultService), string(data))
	return root
}

func write(t *testing.T, p, s string) {
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
}

func TestReadServiceFileDropIns(t *testing.T) {
	root := unitRoot(t)
	// /etc's drop-in hides /lib's of the same name; they apply by name.
	write(t, filepath.Join(root, "lib/systemd/system/tomcat10.service.d/50-java.conf"), "[Service]\nEnvironment=JAVA_OPTS=hidden\n")
	write(t, filepath.Join(root, "etc/systemd/system/tomcat10.service.d/50-java.conf"),
		"[Service]\nEnvironment=\"JAVA_OPTS=-Xmx1g -Dq=\\\"a b\\\"\" \\\n   EXTRA=1\n")
	write(t, filepath.Join(root, "etc/systemd/system/tomcat10.service.d/10-user.conf"),
		"# local account\n[Service]\nUser=tc\nEnvironmentFile=-/etc/default/nope\nEnvironmentFile=/etc/default/tc\n")
	write(t, filepath.Join(root, "etc/default/tc"), "# comment\nJAVA_HOME=\"/opt/jdk 21\"\n; other\nX=y\n")
	sf, err := readServiceFile(root, DefaultService)
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join(root, "lib/systemd/system/tomcat10.service"),
		filepath.Join(root, "etc/systemd/system/tomcat10.service.d/10-user.conf"),
		filepath.Join(root, "etc/systemd/system/tomcat10.service.d/50-java.conf"),
	}, sf.Paths)
	assert.Equal(t, "tc", sf.User)
	assert.Equal(t, "tomcat", sf.Group)
	assert.Equal(t, []envFile{{Path: "/etc/default/nope", Optional: true}, {Path: "/etc/default/tc"}}, sf.EnvironmentFiles)
	env, err := sf.Env(root)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"CATALINA_HOME=/usr/share/tomcat10",
		"CATALINA_BASE=/var/lib/tomcat10",
		"CATALINA_TMPDIR=/tmp",
		"JAVA_OPTS=-Djava.awt.headless=true",
		`JAVA_OPTS=-Xmx1g -Dq="a b"`,
		"EXTRA=1",
		"JAVA_HOME=/opt/jdk 21",
		"X=y",
	}, env)

	// UseService applies to the unit's CATALINA_BASE only.
	in := &Instance{Home: filepath.Join(root, DefaultHome), Base: filepath.Join(root, DefaultBase), Root: root, Env: []string{"MINE=1"}}
	ok, err := in.useServiceFile(sf)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "tc", in.User)
	assert.Equal(t, DefaultService, in.Service)
	assert.Equal(t, []string{"/bin/sh", "/usr/libexec/tomcat10/tomcat-start.sh"}, in.RunCommand)
	assert.Equal(t, "MINE=1", in.Env[len(in.Env)-1], "the instance's own environment comes last")
	other := &Instance{Home: DefaultHome, Base: t.TempDir(), Root: root}
	ok, err = other.useServiceFile(sf)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Empty(t, other.User)

	// A required environment file that is missing is an error.
	require.NoError(t, os.Remove(filepath.Join(root, "etc/default/tc")))
	_, err = sf.Env(root)
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "EnvironmentFile=/etc/default/tc")

	// A whole unit in /etc overrides /lib's.
	write(t, filepath.Join(root, "etc/systemd/system", DefaultService), "[Service]\nUser=override\nExecStart=!!/usr/bin/env run\n")
	sf, err = readServiceFile(root, DefaultService)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "etc/systemd/system", DefaultService), sf.Paths[0])
	assert.Equal(t, "tc", sf.User, "the drop-ins still apply")
	assert.Equal(t, []string{"/usr/bin/env", "run"}, sf.ExecStart)
	assert.Empty(t, sf.Group)
}

func TestReadServiceFileMissingOrMasked(t *testing.T) {
	root := t.TempDir()
	_, err := readServiceFile(root, DefaultService)
	require.ErrorIs(t, err, ErrNotFound)
	root = unitRoot(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc/systemd/system"), 0o755))
	require.NoError(t, os.Symlink(os.DevNull, filepath.Join(root, "etc/systemd/system", DefaultService)))
	_, err = readServiceFile(root, DefaultService)
	require.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "masked")
}

func TestParseServiceFileErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no equals", "[Service]\nUser tomcat\n", `unit:2: "User tomcat": want KEY=VALUE`},
		{"open quote", "[Service]\nEnvironment=\"A=b\n", "unit:2: Environment:"},
		{"bad name", "[Service]\nEnvironment=1A=b\n", `assignment "1A=b": want NAME=VALUE`},
		{"no assignment", "[Service]\nEnvironment=A\n", `assignment "A": want NAME=VALUE`},
		{"relative file", "[Service]\nEnvironmentFile=etc/x\n", "want an absolute path"},
		{"empty command", "[Service]\nExecStart=-\n", "want a command"},
		{"header", "[Service\n", "want [Name]"},
		{"continued at the end", "[Service]\nUser=a \\\n", "ends in a continued line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseServiceFile("unit", strings.NewReader(tc.text))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "tomcatconf: "), err.Error())
		})
	}
	// Other sections are not interpreted; ExecStart's prefixes go.
	sf, err := parseServiceFile("unit", strings.NewReader("[Unit]\nUser=no\n[Service]\nExecStart=-@/bin/x a\\sb 'c d'\n; User=no\n"))
	require.NoError(t, err)
	assert.Empty(t, sf.User)
	assert.Equal(t, []string{"/bin/x", "a b", "c d"}, sf.ExecStart)
}

// renderService writes sf as a unit file whose parse gives sf again.
func renderService(sf *serviceFile) string {
	var b strings.Builder
	b.WriteString("[Service]\n")
	for _, kv := range []struct{ k, v string }{{"User", sf.User}, {"Group", sf.Group}, {"WorkingDirectory", sf.WorkingDirectory}} {
		if kv.v != "" {
			b.WriteString(kv.k + "=" + kv.v + "\n")
		}
	}
	quote := func(words []string) string {
		q := make([]string, len(words))
		for i, w := range words {
			r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\r", `\r`)
			q[i] = `"` + r.Replace(w) + `"`
		}
		return strings.Join(q, " ")
	}
	if len(sf.Environment) > 0 {
		b.WriteString("Environment=" + quote(sf.Environment) + "\n")
	}
	for _, ef := range sf.EnvironmentFiles {
		p := ef.Path
		if ef.Optional {
			p = "-" + p
		}
		b.WriteString("EnvironmentFile=" + p + "\n")
	}
	if len(sf.ExecStart) > 0 {
		b.WriteString("ExecStart=" + quote(sf.ExecStart) + "\n")
	}
	return b.String()
}

func sameService(a, b *serviceFile) bool {
	eq := func(x, y []string) bool {
		return strings.Join(x, "\x00") == strings.Join(y, "\x00") && len(x) == len(y)
	}
	if a.User != b.User || a.Group != b.Group || a.WorkingDirectory != b.WorkingDirectory ||
		!eq(a.Environment, b.Environment) || !eq(a.ExecStart, b.ExecStart) || len(a.EnvironmentFiles) != len(b.EnvironmentFiles) {
		return false
	}
	for i := range a.EnvironmentFiles {
		if a.EnvironmentFiles[i] != b.EnvironmentFiles[i] {
			return false
		}
	}
	return true
}

// FuzzParseServiceFile: any text parses or fails with a message; what
// parses renders to a unit that parses to the same settings.
func FuzzParseServiceFile(f *testing.F) {
	data, err := os.ReadFile(debianUnit)
	require.NoError(f, err)
	f.Add(string(data))
	f.Add("[Service]\nEnvironment=\"A=b c\" 'D=e'\\\n  F=\\x\nEnvironmentFile=-/etc/default/x\nExecStart=+/bin/sh -c 'exec \"$0\"'\n")
	f.Fuzz(func(t *testing.T, text string) {
		sf, err := parseServiceFile("fuzz", strings.NewReader(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tomcatconf: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
			return
		}
		out := renderService(sf)
		again, err := parseServiceFile("rendered", strings.NewReader(out))
		if err != nil {
			t.Fatalf("rendered unit does not parse: %v\n%s", err, out)
		}
		if !sameService(sf, again) {
			t.Fatalf("round trip changed the settings:\n%#v\n%#v\nrendered:\n%s", sf, again, out)
		}
	})
}

// FuzzParseEnvFile: any text parses or fails with a message, and every
// assignment it returns has a valid name.
func FuzzParseEnvFile(f *testing.F) {
	f.Add([]byte("# c\nA=1\nB=\"two words\"\n; x\nC='q'\n"))
	f.Add([]byte("JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := parseEnvFile("fuzz", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tomcatconf: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
			return
		}
		for _, kv := range env {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || !validEnvName(k) || bytes.Contains([]byte(k), []byte("\n")) {
				t.Fatalf("bad assignment %q", kv)
			}
		}
	})
}
