//go:build linux

package tomcatconf_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/tomcatconf"
)

// standInLoop is a stand-in JVM: a shell whose command line holds
// -Dcatalina.base=BASE (its $0) and which exits on SIGTERM.
const standInLoop = `trap "exit 143" TERM; while :; do sleep 0.05; done`

// standInCatalina is a bin/catalina.sh whose `run` execs a stand-in JVM, as
// catalina.sh run execs java, and whose `start` backgrounds one and writes
// its PID to CATALINA_PID, going on when it cannot, as catalina.sh start
// does.
const standInCatalina = `#!/bin/sh
case "$1" in
run)
	echo "stand-in JVM of $CATALINA_BASE as $(id -un), nofile $(ulimit -n), tmp $CATALINA_TMPDIR"
	exec sh -c '` + standInLoop + `' "-Dcatalina.base=$CATALINA_BASE" ;;
start)
	sh -c '` + standInLoop + `' "-Dcatalina.base=$CATALINA_BASE" >>"$CATALINA_OUT" 2>&1 &
	echo $! >"$CATALINA_PID"
	echo "Tomcat started."
	exit 0 ;;
esac
exit 2
`

// standInInstance returns an instance whose Home holds standInCatalina and
// whose Base has a server.xml with a Connector on port (0: none).
func standInInstance(t *testing.T, port int) *tomcatconf.Instance {
	t.Helper()
	in := fakeBase(t)
	in.Home = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(in.Home, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in.Home, "bin", "catalina.sh"), []byte(standInCatalina), 0o755))
	xml := `<Server port="-1"><Service name="Catalina"></Service></Server>`
	if port > 0 {
		xml = fmt.Sprintf(`<Server port="-1"><Service name="Catalina"><Connector port="%d" protocol="HTTP/1.1"/></Service></Server>`, port)
	}
	require.NoError(t, os.WriteFile(in.ServerXML(), []byte(xml), 0o644))
	t.Cleanup(func() { requireNoJVM(t, in) })
	return in
}

// requireNoJVM checks from /proc that no process of in's base is left,
// and kills any it finds so that a failing test leaves none.
func requireNoJVM(t *testing.T, in *tomcatconf.Instance) {
	t.Helper()
	var jvms []tomcatconf.JVM
	// A process signalled a moment ago may still be exiting.
	for deadline := time.Now().Add(10 * time.Second); ; {
		var err error
		jvms, err = in.JVMs()
		require.NoError(t, err)
		if len(jvms) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, j := range jvms {
		_ = syscall.Kill(j.PID, syscall.SIGKILL)
	}
	assert.Empty(t, jvms, "no process with -Dcatalina.base=%s is left", in.Base)
}

func TestStartHoldsForegroundChild(t *testing.T) {
	in := standInInstance(t, 0)
	in.Env = []string{"CATALINA_TMPDIR=/tmp"}
	ctx := context.Background()
	res, err := in.Start(ctx, nil)
	require.NoError(t, err)
	pid, err := in.PID()
	require.NoError(t, err, "found in /proc without a PID file")
	assert.Equal(t, res.PID, pid)
	assert.NoFileExists(t, filepath.Join(in.Base, "temp", "catalina.pid"))
	jvms, err := in.JVMs()
	require.NoError(t, err)
	require.Len(t, jvms, 1)
	assert.Equal(t, os.Getuid(), jvms[0].UID, "the owner of Base/conf")
	// In its own session, so that a kept JVM outlives this program.
	sid, err := unixGetsid(pid)
	require.NoError(t, err)
	assert.Equal(t, pid, sid)
	var hard syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &hard))
	assert.Equal(t, min(uint64(4096), hard.Max), res.NoFile, "NoFile from /proc/PID/limits")
	assert.Equal(t, filepath.Join(in.Base, "logs", "catalina.out"), res.Log)
	// The command's output is appended to catalina.out.
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(in.CatalinaOut())
		return containsLine(string(data), fmt.Sprintf("stand-in JVM of %s as %s, nofile %d, tmp /tmp", in.Base, res.User, res.NoFile))
	}, 10*time.Second, 20*time.Millisecond)

	_, err = in.Start(ctx, nil)
	require.ErrorIs(t, err, tomcatconf.ErrRunning, "a second Start beside it")
	stop, err := in.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, tomcatconf.StopSIGTERM, stop.Method)
	assert.Equal(t, pid, stop.PID)
	_, err = in.PID()
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)
}

func unixGetsid(pid int) (int, error) {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(sid), nil
}

func containsLine(s, line string) bool {
	for _, l := range splitLines(s) {
		if l == line {
			return true
		}
	}
	return false
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

// A command that exits instead of exec'ing the JVM fails the start and
// leaves nothing.
func TestStartCommandExits(t *testing.T) {
	in := standInInstance(t, 0)
	in.RunCommand = []string{"/bin/sh", "-c", "echo no JVM here; exit 3"}
	_, err := in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	assert.Contains(t, err.Error(), "exited before it became the JVM: exit status 3")
	assert.Contains(t, err.Error(), "no JVM here", "the command's output, from catalina.out")
	assert.NotContains(t, err.Error(), "catalina.out line 30", "not an earlier run's lines")
}

// A log the JVM's user cannot open fails the start with the shell's
// message; nothing runs.
func TestStartLogNotWritable(t *testing.T) {
	in := standInInstance(t, 0)
	require.NoError(t, os.Remove(in.CatalinaOut()))
	require.NoError(t, os.Mkdir(in.CatalinaOut(), 0o755))
	_, err := in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	assert.Contains(t, err.Error(), "exit status")
	assert.Contains(t, err.Error(), "catalina.out")
}

// A Connector port another process holds fails the start before anything
// is launched.
func TestStartPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	in := standInInstance(t, port)
	marker := filepath.Join(t.TempDir(), "ran")
	in.RunCommand = []string{"/bin/sh", "-c", `touch "$1"; exec "$2" run`, "sh", marker, filepath.Join(in.Home, "bin", "catalina.sh")}
	_, err = in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	assert.Contains(t, err.Error(), fmt.Sprintf("port %d of Connector http-nio-%d", port, port))
	assert.ErrorIs(t, err, syscall.EADDRINUSE)
	assert.NoFileExists(t, marker, "nothing launched")
}

// The ready URL never answers: Start stops the JVM it launched.
func TestStartReadyTimeoutStops(t *testing.T) {
	in := standInInstance(t, 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + l.Addr().String() + "/"
	require.NoError(t, l.Close())
	_, err = in.Start(context.Background(), &tomcatconf.StartOptions{ReadyURL: url, ReadyTimeout: 500 * time.Millisecond})
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	assert.Contains(t, err.Error(), "did not answer within 500ms")
	jvms, err := in.JVMs()
	require.NoError(t, err)
	assert.Empty(t, jvms, "the JVM is stopped before Start returns")
}

// catalina.sh start that cannot write CATALINA_PID still starts the JVM
// and exits 0: Start finds it in /proc, stops it and fails.
func TestStartDaemonPIDFileUnwritable(t *testing.T) {
	in := standInInstance(t, 0)
	in.Daemon = true
	in.PIDFile = filepath.Join(in.Base, "no-such-dir", "catalina.pid")
	_, err := in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	assert.Contains(t, err.Error(), "catalina.sh start wrote no PID to "+in.PIDFile)
	jvms, err := in.JVMs()
	require.NoError(t, err)
	assert.Empty(t, jvms, "the JVM catalina.sh start left is stopped")
}

// catalina.sh start that writes its PID: the JVM is found and stopped.
// It inherits the open-files limit Start raised in this process.
func TestStartDaemon(t *testing.T) {
	in := standInInstance(t, 0)
	in.Daemon = true
	res, err := in.Start(context.Background(), nil)
	require.NoError(t, err)
	var hard syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &hard))
	assert.Equal(t, min(uint64(4096), hard.Max), res.NoFile, "NoFile from /proc/PID/limits, without a shell ulimit")
	data, err := os.ReadFile(filepath.Join(in.Base, "temp", "catalina.pid"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(res.PID)+"\n", string(data))
	_, err = in.Stop(context.Background(), nil)
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(in.Base, "temp", "catalina.pid"), "Stop removes the PID file that named the JVM")
}

// startUnitWay starts a stand-in JVM for in the way systemd runs Debian's
// unit — a foreground command, no PID file — without the library.
func startUnitWay(t *testing.T, in *tomcatconf.Instance) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", standInLoop, "-Dcatalina.base="+in.Base)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	require.Eventually(t, func() bool {
		jvms, err := in.JVMs()
		return err == nil && len(jvms) > 0
	}, 10*time.Second, 10*time.Millisecond)
	return cmd
}

// Two JVMs of one base: PID refuses to pick one; Stop takes a PID.
func TestPIDAmbiguous(t *testing.T) {
	in := standInInstance(t, 0)
	a := startUnitWay(t, in)
	b := startUnitWay(t, in)
	_, err := in.PID()
	require.ErrorIs(t, err, tomcatconf.ErrAmbiguous)
	assert.Contains(t, err.Error(), fmt.Sprintf("PIDs %d, %d", min(a.Process.Pid, b.Process.Pid), max(a.Process.Pid, b.Process.Pid)))
	_, err = in.Stop(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrAmbiguous)
	_, err = in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrRunning)
	res, err := in.Stop(context.Background(), &tomcatconf.StopOptions{PID: a.Process.Pid})
	require.NoError(t, err)
	assert.Equal(t, a.Process.Pid, res.PID)
	pid, err := in.PID()
	require.NoError(t, err)
	assert.Equal(t, b.Process.Pid, pid)
	_, err = in.Stop(context.Background(), &tomcatconf.StopOptions{PID: os.Getpid()})
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning, "never signals a process that is not the instance's JVM")
	_, err = in.Stop(context.Background(), nil)
	require.NoError(t, err)
}

// A launch left by a program killed before its command exec'd the JVM
// (here: a script that waits, then execs a stand-in JVM) is seen by
// Launches though not yet by JVMs; StopAll waits for it to become the
// JVM, then stops it.
func TestStopAllWaitsForLaunch(t *testing.T) {
	in := standInInstance(t, 0)
	cmd := exec.Command("sh", "-c", `read go; exec sh -c '`+standInLoop+`' "-Dcatalina.base=$1"`, "launch", in.Base)
	cmd.Env = append(os.Environ(), tomcatconf.LaunchEnv+"="+in.Base)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })

	require.Eventually(t, func() bool {
		l, err := in.Launches()
		return err == nil && len(l) == 1 && l[0] == cmd.Process.Pid
	}, 10*time.Second, 10*time.Millisecond)
	jvms, err := in.JVMs()
	require.NoError(t, err)
	assert.Empty(t, jvms, "not a JVM yet")
	_, err = in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrRunning, "no second launch beside a pending one")
	assert.Contains(t, err.Error(), "has not exec'd its JVM yet")

	type result struct {
		res []tomcatconf.StopResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		res, err := in.StopAll(context.Background(), &tomcatconf.StopOptions{Timeout: 20 * time.Second})
		got <- result{res, err}
	}()
	_, err = stdin.Write([]byte("go\n")) // the launch now execs its JVM
	require.NoError(t, err)
	r := <-got
	require.NoError(t, r.err)
	require.Len(t, r.res, 1, "the launch became the JVM and was stopped")
	assert.Equal(t, cmd.Process.Pid, r.res[0].PID)
	assert.Equal(t, tomcatconf.StopSIGTERM, r.res[0].Method)
	<-done
	l, err := in.Launches()
	require.NoError(t, err)
	assert.Empty(t, l)
}

// Start marks its launch: the JVM is among Launches.
func TestStartMarksLaunch(t *testing.T) {
	in := standInInstance(t, 0)
	res, err := in.Start(context.Background(), nil)
	require.NoError(t, err)
	l, err := in.Launches()
	require.NoError(t, err)
	assert.Equal(t, []int{res.PID}, l)
	stopped, err := in.StopAll(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, stopped, 1)
	assert.Equal(t, res.PID, stopped[0].PID)
}

// Without User, the JVM runs as the owner of conf/, or — conf/ being
// root's — as the owner of logs/, as in Debian's layout (/var/log/tomcat10
// is tomcat's).
func TestAccountFromOwners(t *testing.T) {
	in := fakeBase(t)
	a, err := in.Account()
	require.NoError(t, err)
	assert.Equal(t, uint32(os.Geteuid()), a.UID)
	if os.Geteuid() != 0 {
		t.Skip("skipped: giving logs/ to another user needs root")
	}
	nobody, err := user.Lookup("nobody")
	require.NoError(t, err)
	uid, err := strconv.Atoi(nobody.Uid)
	require.NoError(t, err)
	require.NoError(t, os.Chown(filepath.Join(in.Base, "logs"), uid, -1))
	a, err = in.Account()
	require.NoError(t, err)
	assert.Equal(t, "nobody", a.Name)
	assert.Equal(t, uint32(uid), a.UID)
	in.User, in.Group = "root", "nogroup"
	a, err = in.Account()
	require.NoError(t, err)
	assert.Equal(t, uint32(0), a.UID, "User wins")
	g, err := user.LookupGroup("nogroup")
	require.NoError(t, err)
	assert.Equal(t, g.Gid, strconv.Itoa(int(a.GID)))
	in.User = "no-such-user-nettune"
	_, err = in.Account()
	require.ErrorContains(t, err, `tomcatconf: user "no-such-user-nettune"`)
}

// TestStartOnCPUs: a foreground start with CPUs runs its command on them
// from the start (what a JVM sizes itself by), and this process keeps its
// own CPUs.
func TestStartOnCPUs(t *testing.T) {
	var mine unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &mine))
	if mine.Count() < 2 {
		t.Skip("skipped: this process may use one CPU; nothing to narrow")
	}
	first := -1
	for c := 0; first < 0; c++ {
		if mine.IsSet(c) {
			first = c
		}
	}
	in := standInInstance(t, 0)
	in.CPUs = []int{first}
	res, err := in.Start(context.Background(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = in.Stop(context.Background(), nil) })
	var child unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(res.PID, &child))
	assert.Equal(t, 1, child.Count(), "the JVM's CPUs from its start")
	assert.True(t, child.IsSet(first))
	for range 50 { // on every thread this process has
		var now unix.CPUSet
		require.NoError(t, unix.SchedGetaffinity(0, &now))
		require.Equal(t, mine, now, "this process's CPUs are its own")
		runtime.Gosched()
	}

	bad := standInInstance(t, 0)
	bad.CPUs = []int{4096}
	_, err = bad.Start(context.Background(), nil)
	assert.ErrorContains(t, err, "run on CPUs [4096]: CPU 4096 out of range")
}
