package tomcatconf_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tomcatconf"
)

// fakeSystemd answers systemctl and journalctl as systemd 252 does, from a
// list of states that each `systemctl show` steps through (the last one
// repeats), and records every command.
type fakeSystemd struct {
	mu      sync.Mutex
	states  []tomcatconf.UnitState
	journal string
	fail    map[string]error // by verb ("restart", "daemon-reload")
	cmds    []string
}

func (f *fakeSystemd) Run(_ context.Context, c tomcatconf.Command) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = append(f.cmds, c.String())
	switch {
	case c.Path == "journalctl":
		return []byte(f.journal), nil
	case c.Path != "systemctl" || len(c.Args) == 0:
		return nil, fmt.Errorf("fake: unexpected command %s", c)
	case c.Args[0] == "show":
		s := f.states[0]
		if len(f.states) > 1 {
			f.states = f.states[1:]
		}
		return fmt.Appendf(nil, "MainPID=%d\nResult=%s\nLoadState=%s\nActiveState=%s\nSubState=%s\nUnitFileState=%s\n",
			s.MainPID, s.Result, s.LoadState, s.ActiveState, s.SubState, s.UnitFileState), nil
	}
	if err := f.fail[c.Args[0]]; err != nil {
		return []byte("Job failed. See \"journalctl -xe\" for details.\n"), fmt.Errorf("%s: %w", c, err)
	}
	return nil, nil
}

func (f *fakeSystemd) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cmds...)
}

func (f *fakeSystemd) count(prefix string) int {
	n := 0
	for _, c := range f.commands() {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func running(pid int) tomcatconf.UnitState {
	return tomcatconf.UnitState{LoadState: "loaded", ActiveState: "active", SubState: "running", UnitFileState: "enabled", Result: "success", MainPID: pid}
}

// systemdRoot builds a host root with /run/systemd/system, PID 1's limits
// as systemd's in the container (open files 20000 hard), and the given
// processes' limits and status as the container's JVM had them.
func systemdRoot(t *testing.T, pids ...int) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run", "systemd", "system"), 0o755))
	copyTo := func(src string, dst ...string) {
		b, err := os.ReadFile(filepath.Join("testdata", "systemd", src))
		require.NoError(t, err)
		p := filepath.Join(append([]string{root}, dst...)...)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	copyTo("limits-systemd-container.txt", "proc", "1", "limits")
	copyTo("status-jvm-container.txt", "proc", "1", "status")
	for _, pid := range pids {
		copyTo("limits-jvm-dropin-container.txt", "proc", fmt.Sprint(pid), "limits")
		copyTo("status-jvm-pinned-container.txt", "proc", fmt.Sprint(pid), "status")
	}
	return root
}

func TestSystemdBooted(t *testing.T) {
	root := t.TempDir()
	assert.False(t, tomcatconf.SystemdBooted(root))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run", "systemd"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "run", "systemd", "system"), nil, 0o644))
	assert.False(t, tomcatconf.SystemdBooted(root), "a file is not the directory sd_booted checks")
	require.NoError(t, os.Remove(filepath.Join(root, "run", "systemd", "system")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "run", "systemd", "system"), 0o755))
	assert.True(t, tomcatconf.SystemdBooted(root))
	assert.False(t, tomcatconf.SystemdBooted(filepath.Join(root, "missing")))
}

func TestUnitWithoutSystemd(t *testing.T) {
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(7)}}
	u := &tomcatconf.Unit{Root: t.TempDir(), Runner: f}
	_, err := u.State(context.Background())
	require.ErrorIs(t, err, tomcatconf.ErrNoSystemd)
	assert.Contains(t, err.Error(), "run/systemd/system")
	_, err = u.Restart(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrNoSystemd)
	_, err = u.SetDropIn(context.Background(), tomcatconf.DropIn{LimitNOFILE: 1})
	require.ErrorIs(t, err, tomcatconf.ErrNoSystemd)
	assert.Empty(t, f.commands(), "nothing is run without systemd")
}

func TestUnitStateAndMainPID(t *testing.T) {
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(37), {LoadState: "loaded", ActiveState: "inactive", SubState: "dead", Result: "success"}}}
	u := &tomcatconf.Unit{Root: systemdRoot(t), Runner: f}
	st, err := u.State(context.Background())
	require.NoError(t, err)
	assert.True(t, st.Active())
	assert.True(t, st.Enabled())
	assert.Equal(t, 37, st.MainPID)
	assert.Equal(t, []string{"systemctl show tomcat10.service -p LoadState,ActiveState,SubState,UnitFileState,Result,MainPID --no-pager"}, f.commands())
	_, err = u.MainPID(context.Background())
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)
}

func TestUnitRestartWaitsForANewMainPID(t *testing.T) {
	f := &fakeSystemd{states: []tomcatconf.UnitState{
		running(37), // before
		running(37), // systemctl restart returned before the old one went
		{LoadState: "loaded", ActiveState: "activating", SubState: "start-pre", Result: "success"},
		running(114),
	}}
	u := &tomcatconf.Unit{Root: systemdRoot(t, 114), Runner: f}
	res, err := u.Restart(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, 37, res.PreviousPID)
	assert.Equal(t, 114, res.PID)
	assert.Equal(t, tomcatconf.ProcessLimits{PID: 114, NoFileSoft: 20000, NoFileHard: 20000, CPUs: []int{0}}, res.Limits)
	assert.Equal(t, 1, f.count("systemctl restart tomcat10.service"))
}

func TestUnitFailedStartHasTheJournal(t *testing.T) {
	journal := "Dec 03 07:29:57 vm tomcat10[177]: Cannot start server. Server instance is not configured.\n" +
		"Dec 03 07:29:58 vm systemd[1]: tomcat10.service: Failed with result 'exit-code'.\n"
	failed := tomcatconf.UnitState{LoadState: "loaded", ActiveState: "failed", SubState: "failed", UnitFileState: "enabled", Result: "exit-code"}
	t.Run("the unit fails after systemctl returned", func(t *testing.T) {
		f := &fakeSystemd{journal: journal, states: []tomcatconf.UnitState{running(37), failed}}
		u := &tomcatconf.Unit{Root: systemdRoot(t), Runner: f}
		_, err := u.Restart(context.Background(), &tomcatconf.UnitOptions{Timeout: time.Minute})
		require.ErrorIs(t, err, tomcatconf.ErrStart)
		assert.Contains(t, err.Error(), "ActiveState=failed")
		assert.Contains(t, err.Error(), "Result=exit-code")
		assert.Contains(t, err.Error(), "Cannot start server")
		assert.Equal(t, 1, f.count("journalctl -u tomcat10.service -n 20 --no-pager"))
	})
	t.Run("systemctl fails", func(t *testing.T) {
		f := &fakeSystemd{journal: journal, states: []tomcatconf.UnitState{failed},
			fail: map[string]error{"start": errors.New("exit status 1")}}
		u := &tomcatconf.Unit{Root: systemdRoot(t), Runner: f}
		_, err := u.Start(context.Background(), nil)
		require.ErrorIs(t, err, tomcatconf.ErrStart)
		assert.Contains(t, err.Error(), "systemctl start tomcat10.service")
		assert.Contains(t, err.Error(), "Failed with result 'exit-code'")
	})
}

func TestUnitStop(t *testing.T) {
	root := systemdRoot(t)
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(37), {LoadState: "loaded", ActiveState: "inactive", SubState: "dead", Result: "success"}}}
	u := &tomcatconf.Unit{Root: root, Runner: f}
	res, err := u.Stop(context.Background(), nil)
	require.NoError(t, err, "PID 37 is not in the fake /proc: gone")
	assert.Equal(t, 37, res.PID)
	assert.Equal(t, 1, f.count("systemctl stop tomcat10.service"))

	// A main process still in /proc is waited for, within the timeout.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", "38"), 0o755))
	f = &fakeSystemd{states: []tomcatconf.UnitState{running(38), {LoadState: "loaded", ActiveState: "inactive", SubState: "dead", Result: "success"}}}
	u.Runner = f
	_, err = u.Stop(context.Background(), &tomcatconf.UnitOptions{Timeout: 300 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "main process 38 gone: false")
}

func TestDropInRender(t *testing.T) {
	b, err := tomcatconf.DropIn{LimitNOFILE: 65535, CPUAffinity: []int{3, 0, 1, 2, 8}}.Render()
	require.NoError(t, err)
	assert.Equal(t, "# Written by nettune (tomcatconf.Unit.SetDropIn); RemoveDropIn deletes it.\n[Service]\nLimitNOFILE=65535\nCPUAffinity=0-3,8\n", string(b))
	b, err = tomcatconf.DropIn{}.Render()
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(b), "[Service]\n"), "zero fields are left out: %q", b)
	_, err = tomcatconf.DropIn{CPUAffinity: []int{-1}}.Render()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CPU -1")
}

func TestDropInSetCapRemoveRestore(t *testing.T) {
	ctx := context.Background()
	root := systemdRoot(t)
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(37)}}
	u := &tomcatconf.Unit{Root: root, Runner: f}
	p, err := u.DropInPath()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "run/systemd/system/tomcat10.service.d/nettune.conf"), p)

	set, err := u.SetDropIn(ctx, tomcatconf.DropIn{LimitNOFILE: 65535, CPUAffinity: []int{0}})
	require.NoError(t, err)
	assert.True(t, set.Capped, "65535 is above PID 1's hard limit")
	assert.Equal(t, uint64(20000), set.ManagerNoFile)
	assert.Equal(t, uint64(65535), set.Requested.LimitNOFILE)
	assert.Equal(t, uint64(20000), set.Written.LimitNOFILE)
	assert.False(t, set.Existed)
	assert.Nil(t, set.Previous)
	assert.True(t, set.Changed)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Contains(t, string(got), "LimitNOFILE=20000\nCPUAffinity=0\n")
	assert.Equal(t, 1, f.count("systemctl daemon-reload"))
	assert.NoFileExists(t, p+".nettune.bak", "no backup beside a drop-in: the result holds the previous content")

	again, err := u.SetDropIn(ctx, tomcatconf.DropIn{LimitNOFILE: 65535, CPUAffinity: []int{0}})
	require.NoError(t, err)
	assert.False(t, again.Changed)
	assert.True(t, again.Existed)
	assert.Equal(t, got, again.Previous)

	rm, err := u.RemoveDropIn(ctx)
	require.NoError(t, err)
	assert.True(t, rm.Changed)
	assert.Equal(t, got, rm.Previous)
	assert.NoDirExists(t, filepath.Dir(p), "the emptied drop-in directory goes too")
	assert.Equal(t, 3, f.count("systemctl daemon-reload"))

	// Undo the removal: the file comes back as it was.
	require.NoError(t, u.RestoreDropIn(ctx, rm))
	back, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, got, back)

	// Undo the first SetDropIn: there was no file.
	require.NoError(t, u.RestoreDropIn(ctx, set))
	assert.NoFileExists(t, p)

	rm, err = u.RemoveDropIn(ctx)
	require.NoError(t, err)
	assert.False(t, rm.Changed, "removing an absent drop-in changes nothing")
}

func TestDropInKeepsTheAdminsFileForUndo(t *testing.T) {
	ctx := context.Background()
	root := systemdRoot(t)
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(37)}}
	u := &tomcatconf.Unit{Root: root, Runner: f}
	p, err := u.DropInPath()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	admin := []byte("[Service]\nNice=5\n")
	require.NoError(t, os.WriteFile(p, admin, 0o644))
	other := filepath.Join(filepath.Dir(p), "override.conf")
	require.NoError(t, os.WriteFile(other, []byte("[Service]\n"), 0o644))

	set, err := u.SetDropIn(ctx, tomcatconf.DropIn{LimitNOFILE: 4096})
	require.NoError(t, err)
	assert.False(t, set.Capped)
	assert.True(t, set.Existed)
	assert.Equal(t, admin, set.Previous)
	require.NoError(t, u.RestoreDropIn(ctx, set))
	back, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, admin, back)

	_, err = u.RemoveDropIn(ctx)
	require.NoError(t, err)
	assert.FileExists(t, other, "another drop-in keeps its directory")
}

func TestDropInFailedWriteChangesNothing(t *testing.T) {
	root := systemdRoot(t)
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(37)}}
	u := &tomcatconf.Unit{Root: root, Runner: f}
	p, err := u.DropInPath()
	require.NoError(t, err)
	// A directory where the drop-in should be: atomicfile refuses it.
	require.NoError(t, os.MkdirAll(filepath.Join(p, "x"), 0o755))
	_, err = u.SetDropIn(context.Background(), tomcatconf.DropIn{LimitNOFILE: 1024})
	require.Error(t, err)
	assert.Contains(t, err.Error(), p)
	assert.DirExists(t, filepath.Join(p, "x"))
	assert.Zero(t, f.count("systemctl daemon-reload"), "no reload after a failed write")
}

// A Persistent Unit's drop-in lives under /etc/systemd/system, where
// systemd reads it at every boot, and shadows the runtime one of the same
// name; removing it leaves the runtime one alone.
func TestDropInPersistent(t *testing.T) {
	ctx := context.Background()
	root := systemdRoot(t)
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(37)}}
	runtime := &tomcatconf.Unit{Root: root, Runner: f}
	persistent := &tomcatconf.Unit{Root: root, Runner: f, Persistent: true}
	rp, err := runtime.DropInPath()
	require.NoError(t, err)
	pp, err := persistent.DropInPath()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "etc/systemd/system/tomcat10.service.d/nettune.conf"), pp)

	_, err = runtime.SetDropIn(ctx, tomcatconf.DropIn{CPUAffinity: []int{0}})
	require.NoError(t, err)
	set, err := persistent.SetDropIn(ctx, tomcatconf.DropIn{LimitNOFILE: 4096, CPUAffinity: []int{1}})
	require.NoError(t, err)
	assert.Equal(t, pp, set.Path)
	assert.False(t, set.Existed)
	got, err := os.ReadFile(pp)
	require.NoError(t, err)
	assert.Contains(t, string(got), "[Service]\nLimitNOFILE=4096\nCPUAffinity=1\n")
	assert.Equal(t, 2, f.count("systemctl daemon-reload"))

	require.NoError(t, persistent.RestoreDropIn(ctx, set))
	assert.NoFileExists(t, pp)
	assert.NoDirExists(t, filepath.Dir(pp))
	assert.FileExists(t, rp, "the runtime drop-in is another file")
	assert.Equal(t, 3, f.count("systemctl daemon-reload"))
}
