//go:build linux

package tomcatconf_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
)

// packagedDirs are the folders of Debian's tomcat10 that hold only the
// tomcat user's files.
var packagedDirs = []string{"/var/log/tomcat10", "/var/cache/tomcat10"}

// packaged returns Debian's installed instance as FindInstance sets it up
// from the tomcat10 unit, under the packaged-Tomcat lock, with a cleanup
// (registered after the lock) that stops any JVM of its base and checks
// from /proc that none is left, and that no root-owned file appeared under
// its log and cache folders.
func packaged(t *testing.T) *tomcatconf.Instance {
	t.Helper()
	testutil.RequirePackagedTomcat(t)
	testutil.LockPackagedTomcat(t)
	t.Setenv("CATALINA_HOME", "")
	t.Setenv("CATALINA_BASE", "")
	in, err := tomcatconf.FindInstance("")
	require.NoError(t, err)
	require.Equal(t, tomcatconf.DefaultBase, in.Base)
	require.Equal(t, "tomcat", in.User, "from the unit's User=")
	require.Equal(t, tomcatconf.DefaultService, in.Service)
	jvms, err := in.JVMs()
	require.NoError(t, err)
	require.Empty(t, jvms, "a JVM of %s runs before the test (not started by a test holding the lock)", in.Base)
	rootBefore := testutil.RootOwnedFiles(t, packagedDirs...)
	t.Cleanup(func() {
		for _, j := range mustJVMs(t, in) {
			if _, err := in.Stop(context.Background(), &tomcatconf.StopOptions{PID: j.PID}); err != nil && !errors.Is(err, tomcatconf.ErrNotRunning) {
				t.Errorf("cleanup: stop JVM %d: %v", j.PID, err)
			}
		}
		requireNoJVM(t, in)
		assert.Equal(t, rootBefore, testutil.RootOwnedFiles(t, packagedDirs...), "no new root-owned files under %v", packagedDirs)
	})
	return in
}

func mustJVMs(t *testing.T, in *tomcatconf.Instance) []tomcatconf.JVM {
	t.Helper()
	jvms, err := in.JVMs()
	require.NoError(t, err)
	return jvms
}

// procUID reads the real UID of pid from /proc/PID/status.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
			uid, err := strconv.Atoi(strings.Fields(rest)[0])
			require.NoError(t, err)
			return uid
		}
	}
	t.Fatalf("no Uid: line in /proc/%d/status", pid)
	return -1
}

func uidOf(t *testing.T, name string) int {
	t.Helper()
	u, err := user.Lookup(name)
	require.NoError(t, err)
	uid, err := strconv.Atoi(u.Uid)
	require.NoError(t, err)
	return uid
}

// TestIntegrationPackagedTomcat starts and stops Debian's installed
// tomcat10 itself (/var/lib/tomcat10, no copy): first as its unit does,
// without nettune — Start then refuses a second JVM beside it, and Stop
// finds it in /proc with no PID file — then with Start, which runs it as
// user tomcat through the unit's start script.
func TestIntegrationPackagedTomcat(t *testing.T) {
	in := packaged(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	tomcat := uidOf(t, "tomcat")
	client := &http.Client{Timeout: 10 * time.Second}

	unitPID := testutil.StartPackagedTomcatAsUnit(t)
	pid, err := in.PID()
	require.NoError(t, err, "found in /proc without a PID file")
	assert.Equal(t, unitPID, pid)
	jvms := mustJVMs(t, in)
	require.Len(t, jvms, 1)
	assert.Equal(t, "tomcat", jvms[0].User)
	_, err = in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: testutil.PackagedTomcatURL})
	require.ErrorIs(t, err, tomcatconf.ErrRunning, "no second JVM beside the running one")
	assert.Len(t, mustJVMs(t, in), 1)
	stop, err := in.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, unitPID, stop.PID)
	assert.Equal(t, tomcatconf.StopSIGTERM, stop.Method, "Debian's <Server port=\"-1\">")
	t.Logf("stopped the unit-started JVM %d with %s in %s", stop.PID, stop.Method, stop.Took)
	require.Empty(t, mustJVMs(t, in))

	res, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: testutil.PackagedTomcatURL})
	require.NoError(t, err)
	t.Logf("started JVM %d as %s in %s, open files %d: %s", res.PID, res.User, res.Ready, res.NoFile, res.Command)
	assert.Equal(t, "tomcat", res.User)
	assert.Equal(t, tomcat, procUID(t, res.PID), "the JVM runs as user tomcat")
	assert.Contains(t, res.Command, testutil.PackagedTomcatStart)
	assert.Positive(t, res.NoFile)
	fi, err := os.Stat(in.CatalinaOut())
	require.NoError(t, err)
	assert.Equal(t, tomcat, statUID(fi), "catalina.out belongs to tomcat")
	resp, err := client.Get(testutil.PackagedTomcatURL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	pid, err = in.PID()
	require.NoError(t, err)
	assert.Equal(t, res.PID, pid)
	stop, err = in.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, res.PID, stop.PID)
	t.Logf("stopped JVM %d with %s in %s", stop.PID, stop.Method, stop.Took)
	assert.Empty(t, mustJVMs(t, in))
}

// TestIntegrationTomcatPIDFileUnwritable: catalina.sh start (Daemon) with a
// CATALINA_PID it cannot write starts the JVM and exits 0; Start finds the
// JVM in /proc, stops it and fails.
func TestIntegrationTomcatPIDFileUnwritable(t *testing.T) {
	in := newBase(t)
	port := freePort(t)
	setPort(t, in, port, nil)
	in.Daemon = true
	in.PIDFile = filepath.Join(in.Base, "no-temp", "catalina.pid")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: fmt.Sprintf("http://127.0.0.1:%d%s", port, helloPath)})
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	t.Logf("start error: %v", err)
	assert.Contains(t, err.Error(), "catalina.sh start wrote no PID to "+in.PIDFile)
	assert.Empty(t, mustJVMs(t, in), "the JVM catalina.sh start left is stopped")
}

// TestIntegrationTomcatDiesDuringStart: a server.xml Tomcat cannot parse
// makes the JVM exit; Start says so, with the log, and nothing is left.
func TestIntegrationTomcatDiesDuringStart(t *testing.T) {
	in := newBase(t)
	port := freePort(t)
	setPort(t, in, port, nil)
	data, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	// Cut in the middle: Catalina cannot parse it, has no Server and exits.
	require.NoError(t, os.WriteFile(in.ServerXML(), data[:len(data)/2], 0o640))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: fmt.Sprintf("http://127.0.0.1:%d%s", port, helloPath)})
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	t.Logf("start error: %v", err)
	assert.Contains(t, err.Error(), "exited before")
	assert.Contains(t, err.Error(), "server.xml")
	assert.Empty(t, mustJVMs(t, in))
}

// TestIntegrationTomcatReadyTimeout: a JVM that does not answer in time is
// stopped before Start returns.
func TestIntegrationTomcatReadyTimeout(t *testing.T) {
	in := newBase(t)
	port := freePort(t)
	setPort(t, in, port, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: fmt.Sprintf("http://127.0.0.1:%d/no-such-page", port), ReadyTimeout: 3 * time.Second})
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	t.Logf("start error: %v", err)
	assert.Contains(t, err.Error(), "did not answer within 3s")
	assert.Empty(t, mustJVMs(t, in), "stopped before Start returned")
}

// TestIntegrationTarballAsOwner: an upstream-style install (CATALINA_HOME =
// CATALINA_BASE, bin/ lib/ conf/ webapps/ logs/ temp/ work/, as
// ~/apache-tomcat-11.0.10 unpacks) owned by a non-root user runs as that
// user, not as root.
func TestIntegrationTarballAsOwner(t *testing.T) {
	testutil.RequirePackagedTomcat(t)
	const name = "nettunetc"
	if _, err := user.Lookup(name); err == nil {
		t.Fatalf("user %s exists already (left by an earlier run?): remove it with userdel %s", name, name)
	}
	out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
	require.NoError(t, err, "useradd: %s", out)
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("cleanup: userdel %s: %v: %s", name, err, out)
		}
	})
	dir, err := os.MkdirTemp("", "apache-tomcat-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	for _, c := range [][]string{
		{"cp", "-rL", tomcatconf.DefaultHome + "/bin", tomcatconf.DefaultHome + "/lib", dir},
		{"cp", "-rL", tomcatconf.DefaultBase + "/conf", dir},
		{"mkdir", "-p", dir + "/webapps", dir + "/logs", dir + "/temp", dir + "/work"},
		{"cp", "-rL", tomcatconf.DefaultBase + "/webapps/ROOT", dir + "/webapps"},
		{"chown", "-R", name + ":", dir},
	} {
		out, err := exec.Command(c[0], c[1:]...).CombinedOutput()
		require.NoError(t, err, "%v: %s", c, out)
	}
	in := &tomcatconf.Instance{Home: dir, Base: dir}
	t.Cleanup(func() {
		if _, err := in.Stop(context.Background(), nil); err != nil && !errors.Is(err, tomcatconf.ErrNotRunning) {
			t.Errorf("cleanup: stop: %v", err)
		}
		requireNoJVM(t, in)
	})
	port := freePort(t)
	setPort(t, in, port, nil)
	require.NoError(t, exec.Command("chown", name+":", in.ServerXML()).Run())
	a, err := in.Account()
	require.NoError(t, err)
	assert.Equal(t, name, a.Name, "the owner of conf/")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: fmt.Sprintf("http://127.0.0.1:%d%s", port, helloPath)})
	require.NoError(t, err)
	t.Logf("started JVM %d as %s in %s: %s", res.PID, res.User, res.Ready, res.Command)
	assert.Equal(t, uidOf(t, name), procUID(t, res.PID))
	root := testutil.RootOwnedFiles(t, filepath.Join(dir, "logs"), filepath.Join(dir, "work"), filepath.Join(dir, "temp"))
	assert.Empty(t, root, "the JVM's files are the owner's")
	_, err = in.Stop(ctx, nil)
	require.NoError(t, err)
}

// setPort moves in's HTTP/1.1 Connector from 8080 to port, adding attrs.
func setPort(t *testing.T, in *tomcatconf.Instance, port int, attrs []tomcatconf.Attr) {
	t.Helper()
	c, err := tomcatconf.Load(in.ServerXML())
	require.NoError(t, err)
	_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, append([]tomcatconf.Attr{{Name: "port", Value: strconv.Itoa(port)}}, attrs...), nil)
	require.NoError(t, err)
	_, err = c.Save(nil)
	require.NoError(t, err)
}

// TestIntegrationTomcatPortTaken: a listener on the Connector's port makes
// Start fail before it launches anything.
func TestIntegrationTomcatPortTaken(t *testing.T) {
	in := newBase(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	setPort(t, in, port, nil)
	_, err = in.Start(context.Background(), &tomcatconf.StartOptions{ReadyURL: fmt.Sprintf("http://127.0.0.1:%d%s", port, helloPath)})
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	assert.Contains(t, err.Error(), fmt.Sprintf("port %d of Connector http-nio-%d", port, port))
	assert.Empty(t, mustJVMs(t, in))
}

// TestIntegrationCopyTo copies Debian's installed instance (conf/ is a link
// to /etc/tomcat10, root:tomcat 0640) into a temporary CATALINA_BASE on
// another port, and runs the copy as user tomcat, as the unit runs the
// instance. A failed copy leaves nothing behind.
func TestIntegrationCopyTo(t *testing.T) {
	in := packaged(t)
	tomcat := uidOf(t, "tomcat")
	parent, err := os.MkdirTemp("", "tomcatconf-copy-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(parent) })
	require.NoError(t, os.Chmod(parent, 0o755))

	_, err = in.CopyTo(context.Background(), filepath.Join(parent, "bad"), tomcatconf.ConnectorQuery{Port: "1"}, freePort(t))
	require.ErrorIs(t, err, tomcatconf.ErrNotFound, "no Connector on port 1")
	assert.NoDirExists(t, filepath.Join(parent, "bad"), "a failed copy removes what it made")

	dir := filepath.Join(parent, "base")
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cp, err := in.CopyTo(ctx, dir, tomcatconf.ConnectorQuery{Port: "8080"}, port)
	require.NoError(t, err)
	assert.Equal(t, dir, cp.Base)
	assert.Equal(t, in.Home, cp.Home)
	assert.Equal(t, "tomcat", cp.User)
	assert.Equal(t, tomcatconf.ControlProcess, cp.Control, "no unit runs the copy")
	for _, d := range []string{".", "conf", "conf/server.xml", "webapps", "logs", "temp", "work"} {
		fi, err := os.Lstat(filepath.Join(dir, d))
		require.NoError(t, err, d)
		assert.Equal(t, tomcat, statUID(fi), "%s belongs to tomcat", d)
		assert.Equal(t, d == "conf/server.xml", fi.Mode().IsRegular(), "%s: links followed", d)
	}
	c, err := tomcatconf.Load(cp.ServerXML())
	require.NoError(t, err)
	_, err = c.FindConnector(tomcatconf.ConnectorQuery{Port: strconv.Itoa(port)})
	require.NoError(t, err, "the copy's Connector is on the new port")
	orig, err := tomcatconf.Load(in.ServerXML())
	require.NoError(t, err)
	_, err = orig.FindConnector(tomcatconf.ConnectorQuery{Port: "8080"})
	require.NoError(t, err, "the instance's own server.xml is untouched")

	t.Cleanup(func() {
		if _, err := cp.Stop(context.Background(), nil); err != nil && !errors.Is(err, tomcatconf.ErrNotRunning) {
			t.Errorf("cleanup: stop the copy: %v", err)
		}
		requireNoJVM(t, cp)
	})
	res, err := cp.Start(ctx, &tomcatconf.StartOptions{ReadyURL: fmt.Sprintf("http://127.0.0.1:%d%s", port, helloPath)})
	require.NoError(t, err)
	t.Logf("started the copy's JVM %d as %s in %s: %s", res.PID, res.User, res.Ready, res.Command)
	assert.Equal(t, tomcat, procUID(t, res.PID), "the copy runs as user tomcat")
	assert.Empty(t, mustJVMs(t, in), "the instance itself is not started")
	_, err = cp.Stop(ctx, nil)
	require.NoError(t, err)
}
