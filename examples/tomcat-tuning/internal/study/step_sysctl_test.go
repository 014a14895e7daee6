//go:build linux

package study

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// sysctlRoot is a host root whose /proc/sys holds net.core.somaxconn
// (4096, as on Debian 12) and a sysctl of several fields.
func sysctlRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, v := range map[string]string{"net/core/somaxconn": "4096\n", "net/ipv4/tcp_rmem": "4096\t131072\t6291456\n"} {
		p := filepath.Join(root, "proc", "sys", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(v), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys", "devices", "system", "cpu"), 0o755))
	return root
}

// applySteps runs steps on the host root with a journal and Keep, and
// returns their results and the function that reverts the journal.
func applySteps(t *testing.T, root string, steps []tuning.Step) ([]tuning.StepResult, func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "j")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)
	th, err := tuning.New(root)
	require.NoError(t, err)
	r := &tuning.Runner{Journal: j, Reverters: Reverters(th), Keep: true}
	res, err := r.Run(context.Background(), steps)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	return res, func() {
		t.Helper()
		_, err := tuning.RevertJournal(context.Background(), path, Reverters(th))
		require.NoError(t, err)
	}
}

// TestParseStepsSysctl: sysctl:NAME=VALUE is a step of -steps, beside
// the guide's; a malformed one is refused naming the step and the form.
func TestParseStepsSysctl(t *testing.T) {
	names, err := ParseSteps("access-log, sysctl:net.core.somaxconn=8192 ,sysctl:net.ipv4.tcp_rmem=4096 87380 6291456")
	require.NoError(t, err)
	assert.Equal(t, []string{"access-log", "sysctl:net.core.somaxconn=8192", "sysctl:net.ipv4.tcp_rmem=4096 87380 6291456"}, names)
	for _, tt := range []struct{ in, want string }{
		{"sysctl:", `-steps: "sysctl:": no '=' between the sysctl's name and its value; want sysctl:NAME=VALUE`},
		{"sysctl:net.core.somaxconn", `no '=' between`},
		{"sysctl:=1", "no sysctl name"},
		{"sysctl:net.core.somaxconn=", "no value for net.core.somaxconn"},
		{"sysctl:net core=1", `sysctl name "net core": want a name as sysctl(8) takes it`},
		{"sysctl", `unknown step "sysctl"; want some of iommu,cpus,open-files,access-log,threads,nic-queues,numa-local,sysctl:NAME=VALUE`},
		{"tunable:x", `unknown step "tunable:x"`},
	} {
		_, err := ParseSteps(tt.in)
		assert.ErrorContains(t, err, tt.want, tt.in)
	}
	_, err = ParseSteps("sysctl:net.core.somaxconn=1,sysctl:net.core.somaxconn=1")
	assert.ErrorContains(t, err, "named twice")
	assert.NotContains(t, DefaultOptions().Steps, "sysctl", "a user's step is never a default")
}

// TestSysctlStep: on a host root, the step plans the sysctl's change,
// applies it, and the journal's undo puts the value back; a sysctl the
// kernel lacks fails Steps before any step is planned, naming its file.
func TestSysctlStep(t *testing.T) {
	root := sysctlRoot(t)
	o := DefaultOptions()
	o.Root, o.Steps = root, []string{"sysctl:net.core.somaxconn=8192"}
	h := Host{Root: root, CPUs: CPUs{N: 2}}
	steps, err := Steps(h, o, nil)
	require.NoError(t, err)
	require.Len(t, steps, 1)
	assert.Equal(t, "sysctl:net.core.somaxconn=8192", steps[0].Name)
	assert.Equal(t, "sysctl net.core.somaxconn = 8192", steps[0].Title)
	assert.False(t, steps[0].Baseline)
	assert.True(t, hostWide(h, o, steps), "a sysctl is host-wide: the host's lock")

	res, revert := applySteps(t, root, steps)
	require.Len(t, res, 1)
	assert.Equal(t, tuning.StatusApplied, res[0].Status)
	assert.Equal(t, "net.core.somaxconn: 4096 -> 8192", res[0].Describe)
	got, err := os.ReadFile(filepath.Join(root, "proc/sys/net/core/somaxconn"))
	require.NoError(t, err)
	assert.Equal(t, "8192", strings.TrimSpace(string(got)))
	revert()
	got, err = os.ReadFile(filepath.Join(root, "proc/sys/net/core/somaxconn"))
	require.NoError(t, err)
	assert.Equal(t, "4096", strings.TrimSpace(string(got)), "the journal put it back")

	o.Steps = []string{"access-log", "sysctl:net.core.no_such_knob=1"}
	_, err = Steps(h, o, nil)
	assert.ErrorContains(t, err, "-steps sysctl:net.core.no_such_knob: this kernel has no such sysctl (no "+filepath.Join(root, "proc/sys/net/core/no_such_knob")+")")
}

// TestPersistSysctl: a kept sysctl step goes into the tuned profile's
// [sysctl] with tuned, else into /etc/sysctl.d/90-nettune.conf, which
// -export writes and -persist plans as a journaled file.
func TestPersistSysctl(t *testing.T) {
	root := sysctlRoot(t)
	o := DefaultOptions()
	o.Root, o.Steps = root, []string{"sysctl:net.core.somaxconn=8192", "sysctl:net.ipv4.tcp_rmem=4096 87380 6291456"}
	h := Host{Root: root, CPUs: CPUs{N: 2}}
	p, err := PlanPersist(h, o, nil, o.Steps)
	require.NoError(t, err)
	if p.Tuned {
		t.Skip("skipped: tuned is installed here; the sysctl.d file is for hosts without it")
	}
	require.NotNil(t, p.Sysctl)
	assert.Equal(t, SysctlConfFile, p.Sysctl.File)
	assert.Equal(t, []persist.Setting{{Key: "net.core.somaxconn", Value: "8192"}, {Key: "net.ipv4.tcp_rmem", Value: "4096 87380 6291456"}}, p.Sysctl.Settings)
	steps := p.Steps(h)
	require.Len(t, steps, 1)
	assert.Equal(t, "persist-sysctl-conf", steps[0].Name)
	ch, err := steps[0].Prepare(context.Background())
	require.NoError(t, err)
	assert.Contains(t, ch.Describe, "etc/sysctl.d/90-nettune.conf")

	dir := t.TempDir()
	files, err := p.Export(h, dir)
	require.NoError(t, err)
	assert.Contains(t, files, filepath.Join("etc", "sysctl.d", SysctlConfFile))
	b, err := os.ReadFile(filepath.Join(dir, "etc", "sysctl.d", SysctlConfFile))
	require.NoError(t, err)
	assert.True(t, bytes.Contains(b, []byte("net.core.somaxconn = 8192\n")), "%s", b)
	assert.True(t, bytes.Contains(b, []byte("net.ipv4.tcp_rmem = 4096 87380 6291456\n")), "%s", b)

	p.Tuned, p.Sysctl = true, nil
	p.Profile = &persist.TunedProfile{Name: ProfileName}
	pp := &persistPlan{h: h, o: o, p: &p}
	require.NoError(t, persistSysctl(pp, persist.Setting{Key: "net.core.somaxconn", Value: "8192"}))
	assert.Nil(t, p.Sysctl, "with tuned, no sysctl.d file")
	assert.Equal(t, []persist.Setting{{Key: "net.core.somaxconn", Value: "8192"}}, p.Profile.Sysctl)
}
