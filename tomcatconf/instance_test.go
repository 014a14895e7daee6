package tomcatconf_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tomcatconf"
)

// fakeRunner records commands and runs fn instead.
type fakeRunner struct {
	cmds []tomcatconf.Command
	fn   func(tomcatconf.Command) ([]byte, error)
}

func (f *fakeRunner) Run(_ context.Context, c tomcatconf.Command) ([]byte, error) {
	f.cmds = append(f.cmds, c)
	return f.fn(c)
}

func fakeBase(t *testing.T) *tomcatconf.Instance {
	base := t.TempDir()
	for _, d := range []string{"conf", "logs", "temp"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	var out strings.Builder
	for i := 1; i <= 30; i++ {
		out.WriteString("catalina.out line " + strconv.Itoa(i) + "\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(base, "logs", "catalina.out"), []byte(out.String()), 0o644))
	return &tomcatconf.Instance{Home: "/nonexistent/tomcat", Base: base, NoFile: 4096}
}

// TestStartFailureShowsCatalinaOut: a failed catalina.sh start (Daemon)
// reports what the JVM wrote to catalina.out during this start — its
// SEVERE records and last lines — and not the lines of earlier runs.
func TestStartFailureShowsCatalinaOut(t *testing.T) {
	in := fakeBase(t)
	in.Daemon = true
	r := &fakeRunner{fn: func(tomcatconf.Command) ([]byte, error) {
		f, err := os.OpenFile(in.CatalinaOut(), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		fmt.Fprintln(f, "SEVERE: Failed to initialize connector [Connector[HTTP/1.1-8080]]")
		for i := 31; i <= 60; i++ {
			fmt.Fprintf(f, "catalina.out line %d\n", i)
		}
		require.NoError(t, f.Close())
		return []byte("Cannot find /nonexistent/tomcat/bin/catalina.sh"), errors.New("exit status 127")
	}}
	in.Runner = r
	_, err := in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	msg := err.Error()
	assert.Contains(t, msg, "SEVERE: Failed to initialize connector")
	assert.Contains(t, msg, "catalina.out line 60")
	assert.NotContains(t, msg, "catalina.out line 35\n", "only the tail")
	assert.NotContains(t, msg, "catalina.out line 30\n", "not an earlier run's lines")
	require.Len(t, r.cmds, 1)
	c := r.cmds[0]
	// No shell ulimit: the limit is raised in this process around the
	// start and inherited (TestStartDaemon reads it from /proc).
	assert.Equal(t, "/nonexistent/tomcat/bin/catalina.sh", c.Path)
	assert.Equal(t, []string{"start"}, c.Args)
	assert.Contains(t, c.Env, "CATALINA_BASE="+in.Base)
	assert.Contains(t, c.Env, "CATALINA_PID="+filepath.Join(in.Base, "temp", "catalina.pid"))
	require.NotNil(t, c.As, "catalina.sh start runs as the instance's user")
	assert.Equal(t, uint32(os.Geteuid()), c.As.UID, "the owner of Base/conf")
}

func TestStartPIDNotOurJVM(t *testing.T) {
	in := fakeBase(t)
	in.Daemon = true
	in.Runner = &fakeRunner{fn: func(tomcatconf.Command) ([]byte, error) {
		// catalina.sh "started" something that is not this instance's JVM:
		// this test process. Start must not adopt it, Stop must not signal it.
		return nil, os.WriteFile(filepath.Join(in.Base, "temp", "catalina.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	}}
	_, err := in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	assert.Contains(t, err.Error(), "is not this instance's JVM")
	_, err = in.Stop(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)
}

// startStubborn starts a stand-in for in's JVM that ignores SIGTERM: a
// shell whose command line holds -Dcatalina.base=Base, its PID in
// CATALINA_PID.
func startStubborn(t *testing.T, in *tomcatconf.Instance) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.1; done`, "-Dcatalina.base="+in.Base)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make([]byte, 6)
	_, err = io.ReadFull(out, line) // the trap is set
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Base, "temp", "catalina.pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644))
	return cmd
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	in := fakeBase(t)
	cmd := startStubborn(t, in)
	res, err := in.Stop(context.Background(), &tomcatconf.StopOptions{Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, tomcatconf.StopSIGKILL, res.Method)
	assert.Equal(t, cmd.Process.Pid, res.PID)
	_, err = in.PID()
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)
}

// A cancelled context ends Stop's wait without SIGKILL and says so,
// rather than "still runs 30s after SIGKILL".
func TestStopCancelled(t *testing.T) {
	in := fakeBase(t)
	cmd := startStubborn(t, in)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := in.Stop(ctx, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "sent SIGTERM, stopped waiting")
	pid, err := in.PID()
	require.NoError(t, err, "not killed")
	assert.Equal(t, cmd.Process.Pid, pid)
}

func TestStopNotRunning(t *testing.T) {
	in := fakeBase(t)
	_, err := in.Stop(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)
	_, err = in.PID()
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)
}

func TestFindInstance(t *testing.T) {
	in := fakeBase(t)
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "bin", "catalina.sh"), []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("CATALINA_HOME", home)
	t.Setenv("CATALINA_BASE", in.Base)
	_, err := tomcatconf.FindInstance("")
	require.ErrorIs(t, err, tomcatconf.ErrNotFound, "no conf/server.xml yet")
	assert.Contains(t, err.Error(), filepath.Join(in.Base, "conf", "server.xml"))
	require.NoError(t, os.WriteFile(filepath.Join(in.Base, "conf", "server.xml"), []byte("<Server/>"), 0o644))
	got, err := tomcatconf.FindInstance("")
	require.NoError(t, err)
	assert.Equal(t, home, got.Home)
	assert.Equal(t, in.Base, got.Base)

	// Debian's instance on this host, when installed.
	t.Setenv("CATALINA_HOME", "")
	t.Setenv("CATALINA_BASE", "")
	got, err = tomcatconf.FindInstance("")
	if _, statErr := os.Stat(filepath.Join(tomcatconf.DefaultHome, "bin", "catalina.sh")); statErr != nil {
		require.ErrorIs(t, err, tomcatconf.ErrNotFound)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, tomcatconf.DefaultBase, got.Base)
	assert.Equal(t, filepath.Join(tomcatconf.DefaultBase, "conf", "server.xml"), got.ServerXML())
}
