//go:build linux

package tomcatconf_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/nspawn"
	"github.com/nettune/nettune/tomcatconf"
)

// InsideContainerEnv, set to 1, says the test binary runs inside the
// systemd container that TestIntegrationUnitInContainer booted, as root,
// where tomcat10.service is real.
const insideContainerEnv = "NETTUNE_IN_CONTAINER"

// unitHelloURL is the examples servlet of Debian's tomcat10-examples, on
// the container's own loopback.
const unitHelloURL = "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample"

// The tests TestIntegrationUnitInContainer runs inside a fresh container
// each.
var insideTests = []string{
	"TestIntegrationUnitInsideRestart",
	"TestIntegrationUnitInsideDropIn",
	"TestIntegrationUnitInsideFailedStart",
	"TestIntegrationUnitInsideInstance",
}

// TestIntegrationUnitInContainer boots a Debian container with a real
// systemd (internal/nspawn) for each test in insideTests, copies this very
// test binary into it, and runs that one test inside through nsenter
// with NETTUNE_IN_CONTAINER=1, so Unit runs with its real defaults: root
// "/", ExecRunner, systemctl talking to the container's systemd.
func TestIntegrationUnitInContainer(t *testing.T) {
	if os.Getenv(insideContainerEnv) == "1" {
		t.Skip("skipped: already inside the container")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, name := range insideTests {
		t.Run(name, func(t *testing.T) {
			t0 := time.Now()
			c := nspawn.ForTest(t, func(upper string) error {
				return copyExecutable(exe, filepath.Join(upper, "usr", "local", "bin", "tomcatconf.test"))
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			t1 := time.Now()
			out, err := c.Run(ctx, []string{insideContainerEnv + "=1"},
				"/usr/local/bin/tomcatconf.test", "-test.run", "^"+name+"$", "-test.v", "-test.count=1")
			t.Logf("inside %s (%s):\n%s", c.Machine, time.Since(t1).Round(time.Millisecond), out)
			require.NoError(t, err)
			require.Contains(t, string(out), "--- PASS: "+name+" ", "the test ran inside and passed")
			assert.NotContains(t, string(out), "--- SKIP")
			t.Logf("%s: boot and run took %s", name, time.Since(t0).Round(time.Millisecond))
		})
	}
}

func copyExecutable(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// insideContainer skips the test unless it runs inside the container, and
// returns Debian's unit with the real defaults.
func insideContainer(t *testing.T) *tomcatconf.Unit {
	t.Helper()
	if os.Getenv(insideContainerEnv) != "1" {
		t.Skipf("skipped: runs inside a systemd container (%s=1); TestIntegrationUnitInContainer runs it there", insideContainerEnv)
	}
	require.True(t, tomcatconf.SystemdBooted(""), "systemd runs inside the container")
	return &tomcatconf.Unit{}
}

// hello GETs the examples servlet and returns its status and body.
func hello(t *testing.T) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(unitHelloURL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// procLine returns the line of /proc/PID/file that starts with prefix,
// read without tomcatconf's parsers.
func procLine(t *testing.T, pid int, file, prefix string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), file))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("/proc/%d/%s has no %q line", pid, file, prefix)
	return ""
}

func isJVM(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && bytes.Contains(b, []byte("-Dcatalina.base=/var/lib/tomcat10\x00"))
}

func TestIntegrationUnitInsideRestart(t *testing.T) {
	u := insideContainer(t)
	ctx := context.Background()
	st, err := u.State(ctx)
	require.NoError(t, err)
	assert.Equal(t, "loaded", st.LoadState)
	assert.True(t, st.Enabled(), "Debian enables tomcat10.service: %s", st)

	opts := &tomcatconf.UnitOptions{ReadyURL: unitHelloURL}
	first, err := u.Restart(ctx, opts)
	require.NoError(t, err)
	second, err := u.Restart(ctx, opts)
	require.NoError(t, err)
	t.Logf("restart: MainPID %d -> %d in %s", second.PreviousPID, second.PID, second.Took)
	assert.Equal(t, first.PID, second.PreviousPID)
	assert.NotEqual(t, first.PID, second.PID, "systemd replaced the main process")
	assert.False(t, isJVM(t, first.PID), "the old JVM %d is gone", first.PID)
	assert.True(t, isJVM(t, second.PID), "MainPID %d is Tomcat's JVM", second.PID)
	pid, err := u.MainPID(ctx)
	require.NoError(t, err)
	assert.Equal(t, second.PID, pid)

	code, body := hello(t)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Hello World!")

	stop, err := u.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, second.PID, stop.PID)
	st, err = u.State(ctx)
	require.NoError(t, err)
	assert.False(t, st.Active(), "%s", st)
	_, err = u.MainPID(ctx)
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)
	started, err := u.Start(ctx, opts)
	require.NoError(t, err)
	assert.True(t, isJVM(t, started.PID))
}

func TestIntegrationUnitInsideDropIn(t *testing.T) {
	u := insideContainer(t)
	ctx := context.Background()
	manager, err := u.ManagerNoFile()
	require.NoError(t, err)
	pid1, err := u.ProcessLimits(1)
	require.NoError(t, err)

	set, err := u.SetDropIn(ctx, tomcatconf.DropIn{LimitNOFILE: 65535, CPUAffinity: []int{0}})
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := u.RestoreDropIn(context.Background(), set); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	t.Logf("drop-in: asked LimitNOFILE=65535, manager's hard limit %d, wrote %d (capped: %t)", manager, set.Written.LimitNOFILE, set.Capped)
	assert.Equal(t, 65535 > manager, set.Capped)
	assert.Equal(t, min(65535, manager), set.Written.LimitNOFILE)
	show, err := tomcatconf.ExecRunner{}.Run(ctx, tomcatconf.Command{Path: "systemctl",
		Args: []string{"show", "tomcat10.service", "-p", "LimitNOFILE,CPUAffinity"}})
	require.NoError(t, err)
	assert.Contains(t, string(show), "LimitNOFILE="+strconv.FormatUint(set.Written.LimitNOFILE, 10)+"\n", "daemon-reload loaded the drop-in")
	assert.Contains(t, string(show), "CPUAffinity=0\n")

	res, err := u.Restart(ctx, &tomcatconf.UnitOptions{ReadyURL: unitHelloURL})
	require.NoError(t, err)
	t.Logf("JVM %d got %+v", res.PID, res.Limits)
	assert.Equal(t, set.Written.LimitNOFILE, res.Limits.NoFileHard)
	assert.Equal(t, set.Written.LimitNOFILE, res.Limits.NoFileSoft)
	assert.Equal(t, []int{0}, res.Limits.CPUs)
	// What the result says is what /proc says.
	fields := strings.Fields(strings.TrimPrefix(procLine(t, res.PID, "limits", "Max open files"), "Max open files"))
	assert.Equal(t, []string{strconv.FormatUint(set.Written.LimitNOFILE, 10), strconv.FormatUint(set.Written.LimitNOFILE, 10), "files"}, fields)
	assert.Equal(t, "Cpus_allowed_list:\t0", procLine(t, res.PID, "status", "Cpus_allowed_list:"))
	code, _ := hello(t)
	assert.Equal(t, http.StatusOK, code)

	rm, err := u.RemoveDropIn(ctx)
	require.NoError(t, err)
	assert.True(t, rm.Changed)
	entries, err := os.ReadDir("/run/systemd/system/tomcat10.service.d")
	if err == nil {
		assert.Empty(t, entries, "no file left in the drop-in directory")
	} else {
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	after, err := u.Restart(ctx, &tomcatconf.UnitOptions{ReadyURL: unitHelloURL})
	require.NoError(t, err)
	st, err := u.State(ctx)
	require.NoError(t, err)
	assert.True(t, st.Active())
	assert.NotEqual(t, res.PID, after.PID, "a new main process")
	assert.Equal(t, pid1.CPUs, after.Limits.CPUs, "without CPUAffinity the JVM gets the manager's CPUs")
}

func TestIntegrationUnitInsideFailedStart(t *testing.T) {
	u := insideContainer(t)
	ctx := context.Background()
	const serverXML = "/etc/tomcat10/server.xml"
	orig, err := os.ReadFile(serverXML)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := os.WriteFile(serverXML, orig, 0o640); err != nil {
			t.Errorf("cleanup: restore %s: %v", serverXML, err)
		}
	})
	broken := bytes.Replace(orig, []byte("<Server "), []byte("<Server <Broken/> "), 1)
	require.NotEqual(t, orig, broken)
	require.NoError(t, os.WriteFile(serverXML, broken, 0o640))

	_, err = u.Restart(ctx, &tomcatconf.UnitOptions{ReadyURL: unitHelloURL, Timeout: 2 * time.Minute})
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	t.Logf("the error:\n%v", err)
	msg := err.Error()
	assert.Contains(t, msg, "ActiveState=failed")
	assert.Contains(t, msg, "Result=exit-code")
	_, journal, ok := strings.Cut(msg, "--- journalctl -u tomcat10.service -n 20 ---\n")
	require.True(t, ok, "the error holds the journal")
	assert.Contains(t, journal, "tomcat10", "the journal lines are the unit's")
	st, err := u.State(ctx)
	require.NoError(t, err)
	assert.Equal(t, "failed", st.ActiveState)
}

// containerRunner runs commands inside a container through nsenter: the
// other way to drive a Unit, from the host, with Root = the container's
// /proc/PID1/root.
type containerRunner struct{ c *nspawn.Container }

func (r containerRunner) Run(ctx context.Context, cmd tomcatconf.Command) ([]byte, error) {
	line := r.c.Command(nil, append([]string{cmd.Path}, cmd.Args...)...)
	return tomcatconf.ExecRunner{}.Run(ctx, tomcatconf.Command{Path: line[0], Args: line[1:]})
}

// TestIntegrationUnitFromHost drives the container's tomcat10.service from
// the host: Runner prefixes `nsenter -t PID1 -a`, Root is
// /proc/PID1/root, where the container's /run and /proc (with its own
// PIDs) are. No HTTP check: the container's network is private.
func TestIntegrationUnitFromHost(t *testing.T) {
	if os.Getenv(insideContainerEnv) == "1" {
		t.Skip("skipped: already inside the container")
	}
	c := nspawn.ForTest(t, nil)
	ctx := context.Background()
	u := &tomcatconf.Unit{Root: c.Root(), Runner: containerRunner{c}}
	require.True(t, tomcatconf.SystemdBooted(c.Root()))
	assert.False(t, tomcatconf.SystemdBooted(""), "this host has no systemd; the container has")

	set, err := u.SetDropIn(ctx, tomcatconf.DropIn{LimitNOFILE: 65535, CPUAffinity: []int{0}})
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(c.Root(), "run", "systemd", "system", "tomcat10.service.d", "nettune.conf"),
		"the host wrote into the container's /run (a tmpfs of its own)")
	res, err := u.Restart(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, set.Written.LimitNOFILE, res.Limits.NoFileHard)
	assert.Equal(t, []int{0}, res.Limits.CPUs)
	// res.PID is a PID of the container's namespace: the host sees that
	// process under /proc/PID1/root/proc. Without a ReadyURL, Restart
	// returns while it may still be Debian's tomcat-start.sh, which execs
	// the JVM in the same process.
	cmdline := filepath.Join(c.Root(), "proc", strconv.Itoa(res.PID), "cmdline")
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(cmdline)
		require.NoError(t, err, "main process %d is gone", res.PID)
		if bytes.Contains(b, []byte("-Dcatalina.base=/var/lib/tomcat10\x00")) {
			break
		}
		require.True(t, time.Now().Before(deadline), "main process %d is still %q", res.PID, b)
		time.Sleep(50 * time.Millisecond) // bounded polling for the exec
	}

	_, err = u.RemoveDropIn(ctx)
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(c.Root(), "run", "systemd", "system", "tomcat10.service.d", "nettune.conf"))
	stop, err := u.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, res.PID, stop.PID)
}

// TestIntegrationUnitInsideInstance drives Debian's tomcat10 through an
// Instance found as a program finds it: it must go through the unit.
func TestIntegrationUnitInsideInstance(t *testing.T) {
	u := insideContainer(t)
	ctx := context.Background()
	in, err := tomcatconf.FindInstance("")
	require.NoError(t, err)
	assert.Equal(t, "tomcat10.service", in.Service)
	c, why, err := in.DetectControl(ctx)
	require.NoError(t, err)
	t.Logf("control: %s (%s)", c, why)
	require.Equal(t, tomcatconf.ControlSystemd, c)
	in.Control = c
	before, err := u.MainPID(ctx)
	require.NoError(t, err)
	manager, err := u.ManagerNoFile()
	require.NoError(t, err)

	in.NoFile = 65535
	res, err := in.Restart(ctx, &tomcatconf.StartOptions{ReadyURL: unitHelloURL})
	require.NoError(t, err)
	t.Cleanup(func() {
		if res.DropIn != nil {
			if err := u.RestoreDropIn(context.Background(), *res.DropIn); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	t.Logf("restart: %+v", res)
	assert.Equal(t, tomcatconf.ControlSystemd, res.Control)
	assert.Equal(t, "tomcat10.service", res.Unit)
	assert.NotEqual(t, before, res.PID, "a new main process")
	main, err := u.MainPID(ctx)
	require.NoError(t, err)
	assert.Equal(t, main, res.PID, "PID is the unit's MainPID")
	assert.True(t, isJVM(t, res.PID), "and the JVM")
	assert.Equal(t, "tomcat", res.User)
	require.NotNil(t, res.DropIn)
	assert.Equal(t, 65535 > manager, res.DropIn.Capped)
	assert.Equal(t, min(65535, manager), res.DropIn.Written.LimitNOFILE)
	assert.Equal(t, res.DropIn.Written.LimitNOFILE, res.NoFile, "the JVM got the capped limit")
	fields := strings.Fields(strings.TrimPrefix(procLine(t, res.PID, "limits", "Max open files"), "Max open files"))
	assert.Equal(t, strconv.FormatUint(res.NoFile, 10), fields[0])
	code, _ := hello(t)
	assert.Equal(t, http.StatusOK, code)

	_, err = in.Start(ctx, nil)
	require.ErrorIs(t, err, tomcatconf.ErrRunning, "the unit is active")
	stop, err := in.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, tomcatconf.StopSystemctl, stop.Method)
	assert.Equal(t, res.PID, stop.PID)
	jvms, err := in.JVMs()
	require.NoError(t, err)
	assert.Empty(t, jvms)
	st, err := u.State(ctx)
	require.NoError(t, err)
	assert.Equal(t, "inactive", st.ActiveState)

	// NoFile 0 leaves the drop-in alone.
	require.NoError(t, u.RestoreDropIn(ctx, *res.DropIn))
	res.DropIn = nil
	in.NoFile = 0
	again, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: unitHelloURL})
	require.NoError(t, err)
	assert.Nil(t, again.DropIn)
	assert.NoFileExists(t, "/run/systemd/system/tomcat10.service.d/nettune.conf")
	assert.True(t, isJVM(t, again.PID))
	all, err := in.StopAll(ctx, nil)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, again.PID, all[0].PID)
	assert.Equal(t, tomcatconf.StopSystemctl, all[0].Method)
}
