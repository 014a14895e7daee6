package tomcatconf_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
)

// TestServerXMLEdit plans, applies, verifies and undoes the Arm guide's
// two server.xml edits on upstream's server.xml, as a journal would
// replay them from the value's JSON.
func TestServerXMLEdit(t *testing.T) {
	ctx := context.Background()
	orig, err := os.ReadFile(testutil.CorpusFile(t, "tomcat", "server-10.1.59.xml"))
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "server.xml")
	require.NoError(t, os.WriteFile(p, orig, 0o640))

	e, err := tomcatconf.EditServerXML(p, func(c *tomcatconf.Config) error {
		_, err := c.DisableAccessLog(tomcatconf.AccessLogComment)
		return err
	})
	require.NoError(t, err)
	require.True(t, e.Changed())
	assert.Contains(t, e.Describe(), "--- a"+p)
	assert.Contains(t, e.Describe(), "+        <!--<Valve className=\"org.apache.catalina.valves.AccessLogValve\"")
	got, _ := os.ReadFile(p)
	assert.Equal(t, orig, got, "planning writes nothing")

	require.NoError(t, e.Apply(ctx))
	require.NoError(t, e.Verify(ctx))
	assert.Equal(t, p+" as the edit wrote it (-2 +2 lines)", e.Expected(), "the valve's first and last line commented out")
	require.NoError(t, e.Apply(ctx), "applying twice is a no-op")
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "mode kept")

	// The journal's copy undoes it, twice without harm.
	b, err := json.Marshal(e)
	require.NoError(t, err)
	var rec tomcatconf.ServerXMLEdit
	require.NoError(t, json.Unmarshal(b, &rec))
	require.NoError(t, rec.Undo(ctx))
	require.NoError(t, rec.Undo(ctx))
	got, _ = os.ReadFile(p)
	assert.Equal(t, orig, got)
	// Verify now names the line found and the line the edit wrote.
	err = rec.Verify(ctx)
	assert.ErrorContains(t, err, "content differs from what was written: line ")
	assert.Regexp(t, `line \d+ is "<Valve className=\\"org.apache.catalina.valves.AccessLogValve\\" directory=\\"logs\\"", want "<!--<Valve className=`, err.Error())

	// Someone else's edit since the plan is not overwritten.
	other := append([]byte("<!-- an admin's note -->\n"), orig...)
	require.NoError(t, os.WriteFile(p, other, 0o640))
	err = e.Apply(ctx)
	assert.ErrorContains(t, err, "changed since the edit was planned")
	got, _ = os.ReadFile(p)
	assert.Equal(t, other, got)

	// A file that does not parse names the file.
	bad := filepath.Join(t.TempDir(), "server.xml")
	require.NoError(t, os.WriteFile(bad, []byte("<Server><Service>"), 0o644))
	_, err = tomcatconf.EditServerXML(bad, func(*tomcatconf.Config) error { return nil })
	assert.ErrorContains(t, err, bad)
}

// TestRestartChangeJSON: the record keeps an Instance inline, with the
// field names journals before this type used, and no Runner.
func TestRestartChangeJSON(t *testing.T) {
	c := &tomcatconf.RestartChange{Instance: tomcatconf.Instance{Home: "/usr/share/tomcat10", Base: "/var/lib/tomcat10",
		User: "tomcat", RunCommand: []string{"/bin/sh", "/usr/libexec/tomcat10/tomcat-start.sh"}, Service: "tomcat10.service",
		Control: tomcatconf.ControlSystemd, Env: []string{"CATALINA_TMPDIR=/tmp"}, NoFile: 65535},
		WasRunning: true, ReadyURL: "http://127.0.0.1:8080/"}
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.JSONEq(t, `{"home":"/usr/share/tomcat10","base":"/var/lib/tomcat10","user":"tomcat",
		"run_command":["/bin/sh","/usr/libexec/tomcat10/tomcat-start.sh"],"service":"tomcat10.service","control":"systemd",
		"env":["CATALINA_TMPDIR=/tmp"],"nofile":65535,"was_running":true,"ready_url":"http://127.0.0.1:8080/"}`, string(b))
	var back tomcatconf.RestartChange
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, c.Instance, back.Instance)
	assert.Contains(t, c.Describe(), "starts it again as found")
	assert.ErrorContains(t, (&tomcatconf.RestartChange{}).Undo(context.Background()), "no home or base")
}

// TestDropInChange plans a drop-in over one that exists, caps its
// LimitNOFILE at PID 1's limit, applies, verifies and undoes it, with a
// fake systemctl.
func TestDropInChange(t *testing.T) {
	ctx := context.Background()
	root := systemdRoot(t)
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(37)}}
	u := &tomcatconf.Unit{Root: root, Runner: f}
	_, err := u.SetDropIn(ctx, tomcatconf.DropIn{CPUAffinity: []int{1}})
	require.NoError(t, err)
	p, err := u.DropInPath()
	require.NoError(t, err)
	before, err := os.ReadFile(p)
	require.NoError(t, err)

	c, err := u.PlanDropIn(func(d *tomcatconf.DropIn) { d.LimitNOFILE = 65535 })
	require.NoError(t, err)
	assert.True(t, c.Existed)
	assert.Equal(t, string(before), c.Previous)
	assert.Equal(t, tomcatconf.DropIn{LimitNOFILE: 65535, CPUAffinity: []int{1}}, c.Next, "keeps the other setting")
	assert.True(t, c.Capped())
	assert.Contains(t, c.Describe(), "runtime drop-in "+p+" (LimitNOFILE=65535 CPUAffinity=1)")
	assert.Contains(t, c.Describe(), "LimitNOFILE=65535 capped to 20000")
	require.NoError(t, c.Apply(ctx))
	require.NoError(t, c.Verify(ctx))
	require.NoError(t, c.Undo(ctx))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, before, got)
	assert.Error(t, c.Verify(ctx), "after the undo the file no longer holds the change")
	assert.Equal(t, "no setting", tomcatconf.DropIn{}.String())
}

// A persistent drop-in's change goes through its journal record (JSON)
// and is undone from there: the record keeps Persistent, so the undo
// removes the file under /etc, not the runtime one.
func TestDropInChangePersistentJSON(t *testing.T) {
	ctx := context.Background()
	root := systemdRoot(t)
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(37)}}
	runtime := &tomcatconf.Unit{Root: root, Runner: f}
	_, err := runtime.SetDropIn(ctx, tomcatconf.DropIn{CPUAffinity: []int{0}})
	require.NoError(t, err)
	rp, err := runtime.DropInPath()
	require.NoError(t, err)

	u := &tomcatconf.Unit{Root: root, Runner: f, Persistent: true}
	c, err := u.PlanDropIn(func(d *tomcatconf.DropIn) { d.CPUAffinity = []int{1} })
	require.NoError(t, err)
	assert.False(t, c.Existed)
	assert.Equal(t, tomcatconf.DropIn{CPUAffinity: []int{1}}, c.Next, "the runtime drop-in's settings are not the persistent one's")
	assert.Contains(t, c.Describe(), "persistent drop-in (read at every boot) "+filepath.Join(root, "etc/systemd/system/tomcat10.service.d/nettune.conf"))
	require.NoError(t, c.Apply(ctx))
	require.NoError(t, c.Verify(ctx))

	rec, err := json.Marshal(c)
	require.NoError(t, err)
	var back tomcatconf.DropInChange
	require.NoError(t, json.Unmarshal(rec, &back))
	back.Runner = f
	require.NoError(t, back.Undo(ctx))
	assert.NoFileExists(t, c.Path)
	assert.FileExists(t, rp)
}

// The record's Path names the file its change was planned on: its undo
// restores that file, and not the other drop-in of the same name, also
// when the record's Persistent disagrees (a record of the persistent
// write without its "persistent" field, and the reverse). A Path that is
// neither drop-in, or a result restored through the other Unit, changes
// nothing.
func TestDropInChangeUndoUsesRecordPath(t *testing.T) {
	ctx := context.Background()
	for _, persistentWrite := range []bool{true, false} {
		t.Run(map[bool]string{true: "persistent write, flag lost", false: "runtime write, flagged persistent"}[persistentWrite], func(t *testing.T) {
			root := systemdRoot(t)
			f := &fakeSystemd{states: []tomcatconf.UnitState{running(37)}}
			runtime := &tomcatconf.Unit{Root: root, Runner: f}
			persistent := &tomcatconf.Unit{Root: root, Runner: f, Persistent: true}
			other, written := runtime, persistent
			if !persistentWrite {
				other, written = persistent, runtime
			}
			_, err := other.SetDropIn(ctx, tomcatconf.DropIn{CPUAffinity: []int{0}})
			require.NoError(t, err)
			op, err := other.DropInPath()
			require.NoError(t, err)
			otherData, err := os.ReadFile(op)
			require.NoError(t, err)

			c, err := written.PlanDropIn(func(d *tomcatconf.DropIn) { d.CPUAffinity = []int{1} })
			require.NoError(t, err)
			require.False(t, c.Existed)
			require.NoError(t, c.Apply(ctx))
			c.Persistent = !c.Persistent // the record's flag disagrees with its path
			assert.NoError(t, c.Verify(ctx), "Verify reads the record's Path")
			require.NoError(t, c.Undo(ctx))
			assert.NoFileExists(t, c.Path, "the file the change wrote is removed")
			got, err := os.ReadFile(op)
			require.NoError(t, err, "the other drop-in of the same name stays")
			assert.Equal(t, string(otherData), string(got))

			bad := c
			bad.Path = filepath.Join(root, "etc", "systemd", "system", "other.service.d", "nettune.conf")
			assert.ErrorContains(t, bad.Undo(ctx), "is not the unit's drop-in")
			assert.ErrorContains(t, other.RestoreDropIn(ctx, tomcatconf.DropInResult{Path: c.Path}), "left as it is")
			assert.FileExists(t, op, "a refused restore removes nothing")
		})
	}
}
