package tomcatconf_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tomcatconf"
)

func TestDetectControl(t *testing.T) {
	inactive := func(fileState string) tomcatconf.UnitState {
		return tomcatconf.UnitState{LoadState: "loaded", ActiveState: "inactive", SubState: "dead", UnitFileState: fileState}
	}
	tests := []struct {
		name    string
		service string
		systemd bool
		control tomcatconf.Control
		state   tomcatconf.UnitState
		want    tomcatconf.Control
		why     string // part of the reason
		wantErr bool
	}{
		{name: "no unit", systemd: true, state: running(7), want: tomcatconf.ControlProcess, why: "no systemd unit runs"},
		{name: "no systemd", service: "tomcat10.service", state: running(7), want: tomcatconf.ControlProcess, why: "systemd is not running"},
		{name: "active", service: "tomcat10.service", systemd: true, state: running(7), want: tomcatconf.ControlSystemd, why: "tomcat10.service is active"},
		{name: "active, disabled", service: "tomcat10.service", systemd: true,
			state: tomcatconf.UnitState{LoadState: "loaded", ActiveState: "active", UnitFileState: "disabled", MainPID: 9},
			want:  tomcatconf.ControlSystemd, why: "is active"},
		{name: "activating", service: "tomcat10.service", systemd: true,
			state: tomcatconf.UnitState{LoadState: "loaded", ActiveState: "activating", UnitFileState: "disabled"},
			want:  tomcatconf.ControlSystemd, why: "is activating"},
		{name: "inactive, enabled", service: "tomcat10.service", systemd: true, state: inactive("enabled"),
			want: tomcatconf.ControlSystemd, why: "is inactive and enabled"},
		{name: "failed, enabled-runtime", service: "tomcat10.service", systemd: true,
			state: tomcatconf.UnitState{LoadState: "loaded", ActiveState: "failed", UnitFileState: "enabled-runtime"},
			want:  tomcatconf.ControlSystemd, why: "enabled-runtime"},
		{name: "inactive, disabled", service: "tomcat10.service", systemd: true, state: inactive("disabled"),
			want: tomcatconf.ControlProcess, why: "not enabled"},
		{name: "not found", service: "tomcat10.service", systemd: true,
			state: tomcatconf.UnitState{LoadState: "not-found", ActiveState: "inactive"},
			want:  tomcatconf.ControlProcess, why: "LoadState=not-found"},
		{name: "forced process", service: "tomcat10.service", systemd: true, control: tomcatconf.ControlProcess,
			state: running(7), want: tomcatconf.ControlProcess, why: "Instance.Control"},
		{name: "forced systemd, inactive disabled", service: "tomcat10.service", systemd: true, control: tomcatconf.ControlSystemd,
			state: inactive("disabled"), want: tomcatconf.ControlSystemd, why: "Instance.Control"},
		{name: "forced systemd without a unit", systemd: true, control: tomcatconf.ControlSystemd, state: running(7), wantErr: true},
		{name: "forced systemd without systemd", service: "tomcat10.service", control: tomcatconf.ControlSystemd, state: running(7), wantErr: true},
		{name: "unknown control", service: "tomcat10.service", systemd: true, control: "init.d", state: running(7), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.systemd {
				root = systemdRoot(t)
			}
			f := &fakeSystemd{states: []tomcatconf.UnitState{tt.state}}
			in := &tomcatconf.Instance{Home: "/usr/share/tomcat10", Base: "/var/lib/tomcat10", Service: tt.service,
				Control: tt.control, Root: root, Runner: f}
			got, why, err := in.DetectControl(context.Background())
			if tt.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "tomcatconf: ")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Contains(t, why, tt.why)
			if !tt.systemd || tt.service == "" || tt.control != tomcatconf.ControlAuto {
				assert.Empty(t, f.commands(), "decided without systemctl")
			}
		})
	}
}

func TestInstanceStopThroughUnit(t *testing.T) {
	f := &fakeSystemd{states: []tomcatconf.UnitState{
		running(4242), // DetectControl
		running(4242), // Stop: the main process
		running(4242), // Unit.Stop: before
		{LoadState: "loaded", ActiveState: "inactive", SubState: "dead", UnitFileState: "enabled", Result: "success"},
	}}
	in := &tomcatconf.Instance{Home: "/usr/share/tomcat10", Base: "/var/lib/tomcat10", Service: "tomcat10.service",
		Root: systemdRoot(t), Runner: f}
	res, err := in.Stop(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, tomcatconf.StopSystemctl, res.Method)
	assert.Equal(t, 4242, res.PID)
	assert.Equal(t, 1, f.count("systemctl stop tomcat10.service"))

	// A stopped unit: nothing to stop, and no systemctl stop.
	_, err = in.Stop(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)
	assert.Equal(t, 1, f.count("systemctl stop"))
}

func TestInstanceStartThroughUnitRefusesAnActiveUnit(t *testing.T) {
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(4242)}}
	in := &tomcatconf.Instance{Home: "/usr/share/tomcat10", Base: "/var/lib/tomcat10", Service: "tomcat10.service",
		Root: systemdRoot(t), Runner: f, NoFile: 65535}
	res, err := in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrRunning)
	assert.Contains(t, err.Error(), "tomcat10.service is active with main process 4242")
	assert.Equal(t, tomcatconf.ControlSystemd, res.Control)
	assert.Zero(t, f.count("systemctl start"))
	assert.Zero(t, f.count("systemctl daemon-reload"), "no drop-in written")
}

func TestReadDropIn(t *testing.T) {
	root := systemdRoot(t)
	f := &fakeSystemd{states: []tomcatconf.UnitState{running(7)}}
	u := &tomcatconf.Unit{Root: root, Runner: f}
	d, ok, err := u.ReadDropIn()
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, tomcatconf.DropIn{}, d)

	want := tomcatconf.DropIn{LimitNOFILE: 4096, CPUAffinity: []int{0, 2, 3}}
	_, err = u.SetDropIn(context.Background(), want)
	require.NoError(t, err)
	d, ok, err = u.ReadDropIn()
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, want, d, "what SetDropIn writes reads back")

	p, err := u.DropInPath()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte("[Service]\nLimitNOFILE=4096\nNice=5\n"), 0o644))
	_, _, err = u.ReadDropIn()
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join("tomcat10.service.d", "nettune.conf")+" line 3")
	require.NoError(t, os.WriteFile(p, []byte("[Service]\nLimitNOFILE=lots\n"), 0o644))
	_, _, err = u.ReadDropIn()
	require.ErrorContains(t, err, `LimitNOFILE="lots": want a number`)
}

// TestInstanceStartThroughUnitFailureUndoes: a unit that fails to start
// leaves the drop-in as it was (here: none) and the unit stopped, and the
// error is ErrStart with the unit's journal.
func TestInstanceStartThroughUnitFailureUndoes(t *testing.T) {
	stopped := tomcatconf.UnitState{LoadState: "loaded", ActiveState: "inactive", SubState: "dead", UnitFileState: "enabled", Result: "exit-code"}
	f := &fakeSystemd{states: []tomcatconf.UnitState{stopped}, journal: "tomcat10[77]: SEVERE: port 8080 in use\n",
		fail: map[string]error{"start": errors.New("exit status 1")}}
	root := systemdRoot(t)
	in := &tomcatconf.Instance{Home: "/usr/share/tomcat10", Base: "/var/lib/tomcat10", Service: "tomcat10.service",
		Root: root, Runner: f, NoFile: 65535}
	res, err := in.Start(context.Background(), nil)
	require.ErrorIs(t, err, tomcatconf.ErrStart)
	assert.Contains(t, err.Error(), "SEVERE: port 8080 in use", "the unit's journal")
	require.NotNil(t, res.DropIn)
	assert.True(t, res.DropIn.Capped, "65535 capped to the manager's 20000")
	assert.Equal(t, uint64(20000), res.DropIn.Written.LimitNOFILE)
	assert.NoFileExists(t, filepath.Join(root, "run", "systemd", "system", "tomcat10.service.d", "nettune.conf"), "the drop-in is undone")
	assert.NoDirExists(t, filepath.Join(root, "run", "systemd", "system", "tomcat10.service.d"))
	assert.Equal(t, 2, f.count("systemctl daemon-reload"), "after writing and after removing")
	assert.Equal(t, 1, f.count("systemctl stop tomcat10.service"), "the unit is stopped")
}
