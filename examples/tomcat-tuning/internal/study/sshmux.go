//go:build linux

package study

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// masterReady is what the master connection's session prints once the
// connection is authenticated and its control socket listens.
const masterReady = "tomcat-tuning-ssh-master-ready"

// masterScript runs in the master connection's session: it says the
// connection is up, then holds the session until its stdin (a pipe of
// this process) closes: at Close, or when this process dies.
const masterScript = "echo " + masterReady + "; exec cat >/dev/null"

// sshDirPrefix names the private folders of the control sockets in the
// temporary directory.
const sshDirPrefix = "tomcat-tuning-ssh-"

// masterStopWait is how long Close waits for the master to end after its
// session's stdin closes, before SIGTERM, and again before SIGKILL.
const masterStopWait = 5 * time.Second

// master is the OpenSSH master connection (ControlMaster) of a client:
// every later ssh command to it is a session multiplexed over it, with no
// new TCP connection, key exchange or authentication.
type master struct {
	dir   string   // private local directory of the control socket
	lock  *os.File // its owner's lock (ownedTempDir)
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error // the master's exit
	errb  *tailBuffer
}

// Connect opens the client's master connection (ssh -M, ControlPersist=no)
// as a child of this process, in a private local directory (0700) for its
// control socket, and returns once it is authenticated: the later commands
// of Setup, MeasureClock, Run and Cleanup are sessions over it (OpenSSH
// connection sharing), each started in milliseconds instead of a new
// connection's handshake. Close ends it. When this process dies the
// master's stdin closes and the kernel sends it SIGTERM
// (PR_SET_PDEATHSIG), so no connection outlives the study. A master that
// cannot connect fails as a command would (ErrHostKey, ErrAuth,
// ErrUnreachable), and nothing is left.
func (c *SSHClient) Connect(ctx context.Context) error {
	if c.mux != nil {
		return nil
	}
	// A run killed with its master leaves the folder: the next one
	// removes it.
	removeStale(io.Discard, sshDirPrefix, "", nil)
	dir, lock, err := ownedTempDir(sshDirPrefix)
	if err != nil {
		return fmt.Errorf("%s: the control socket's folder: %w", c.where(), err)
	}
	m := &master{dir: dir, lock: lock, done: make(chan error, 1), errb: &tailBuffer{max: 4 << 10}}
	fail := func(err error) error {
		os.RemoveAll(dir)
		lock.Close()
		return err
	}
	argv := c.baseArgs("-M", "-S", m.socket(), "-o", "ControlPersist=no")
	argv = append(argv, "--", c.host, masterScript)
	m.cmd = exec.Command(argv[0], argv[1:]...)
	m.cmd.Stderr = m.errb
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if m.stdin, err = m.cmd.StdinPipe(); err != nil {
		return fail(err)
	}
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	// PR_SET_PDEATHSIG fires when the thread that forked the master ends:
	// fork from a thread kept for the master's lifetime.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := m.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		m.done <- m.cmd.Wait()
	}()
	if err := <-started; err != nil {
		return fail(fmt.Errorf("%s: start ssh: %w", c.where(), err))
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != masterReady {
			err = fmt.Errorf("the master session printed %q, want %q", strings.TrimSpace(line), masterReady)
		}
		ready <- err
		_, _ = io.Copy(io.Discard, stdout)
	}()
	timer := time.NewTimer(sshTimeout)
	defer timer.Stop()
	var failed error
	select {
	case err := <-ready:
		if err == nil {
			c.mux = m
			return nil
		}
		failed = err
	case <-ctx.Done():
		failed = ctx.Err()
	case <-timer.C:
		failed = fmt.Errorf("not connected within %s", sshTimeout)
	}
	m.stop()
	return c.sshError("open the master connection (ssh -M)", failed, m.errb.String())
}

// Close ends the master connection Connect opened, if any: its session's
// stdin closes, so the session and the master end; SIGTERM and then
// SIGKILL follow if it does not. The control socket's directory goes.
// Sessions still running over it end with it.
func (c *SSHClient) Close() error {
	if c.mux == nil {
		return nil
	}
	err := c.mux.stop()
	c.mux = nil
	if err != nil {
		return fmt.Errorf("%s: the master connection: %w", c.where(), err)
	}
	return nil
}

// socket is the master's ControlPath.
func (m *master) socket() string { return filepath.Join(m.dir, "control") }

// stop ends the master and waits for it, then removes its folder. An
// exit caused by the stop itself is no error.
func (m *master) stop() error {
	defer func() {
		os.RemoveAll(m.dir)
		m.lock.Close()
	}()
	_ = m.stdin.Close()
	select {
	case <-m.done:
		return nil
	case <-time.After(masterStopWait):
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
		return nil
	case <-time.After(masterStopWait):
	}
	_ = m.cmd.Process.Kill()
	<-m.done
	return errors.New("did not end on SIGTERM; killed")
}
