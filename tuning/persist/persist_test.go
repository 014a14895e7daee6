package persist_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

func persistRoot(t *testing.T) (*persist.Host, string) {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	h, err := persist.New(root)
	require.NoError(t, err)
	return h, root
}

// A new profile is written with its directory; restoring removes both and
// leaves /etc/tuned as it was.
func TestWriteTunedProfileNewThenRestore(t *testing.T) {
	h, root := persistRoot(t)
	p := persist.TunedProfile{Name: "nettune-tomcat", Include: []string{"balanced"}}
	w, err := h.WriteTunedProfile(p)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "etc", "tuned", "nettune-tomcat", "tuned.conf"), w.Path)
	assert.False(t, w.Existed)
	assert.True(t, w.Changed())
	assert.Equal(t, fmt.Sprintf("write %s (%d bytes, new)", w.Path, len(w.Data)), w.Describe())
	assert.Equal(t, []string{filepath.Join(root, "etc", "tuned", "nettune-tomcat"), filepath.Join(root, "etc", "tuned")}, w.Created)
	require.NoError(t, w.Verify(context.Background()))
	back, err := h.TunedProfile("nettune-tomcat")
	require.NoError(t, err)
	assert.Equal(t, p.Include, back.Include)

	// Writing the same again changes nothing.
	w2, err := h.WriteTunedProfile(p)
	require.NoError(t, err)
	assert.False(t, w2.Changed())

	// The journal record is the value itself: undo it from its JSON.
	rec, err := json.Marshal(w)
	require.NoError(t, err)
	rev := tuning.Reverters{}
	tuning.AddReverter[persist.FileEdit](rev)
	require.NoError(t, rev["persist-file"](context.Background(), rec))
	assert.NoDirExists(t, filepath.Join(root, "etc", "tuned"))
	require.NoError(t, w.Undo(context.Background()), "undoing twice is not an error")
	assert.Error(t, w.Verify(context.Background()))
	_, err = h.TunedProfile("nettune-tomcat")
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
}

// An existing file gets its bytes and mode back, and a directory holding
// someone else's file is kept.
func TestWriteSysctlConfExistingThenRestore(t *testing.T) {
	h, root := persistRoot(t)
	dir := filepath.Join(root, "etc", "sysctl.d")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	old := []byte("net.core.somaxconn = 1024\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "90-nettune.conf"), old, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "99-admin.conf"), []byte("x = 1\n"), 0o644))

	w, err := h.WriteSysctlConf(persist.SysctlConf{File: "90-nettune.conf", Settings: []persist.Setting{{Key: "net.core.somaxconn", Value: "4096"}}})
	require.NoError(t, err)
	assert.True(t, w.Existed)
	assert.Equal(t, old, w.Previous)
	assert.Empty(t, w.Created)
	got, err := os.ReadFile(w.Path)
	require.NoError(t, err)
	assert.Contains(t, string(got), "net.core.somaxconn = 4096\n")

	require.NoError(t, w.Undo(context.Background()))
	got, err = os.ReadFile(w.Path)
	require.NoError(t, err)
	assert.Equal(t, old, got)
	fi, err := os.Stat(w.Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.FileExists(t, filepath.Join(dir, "99-admin.conf"))
}

// An /etc that cannot hold the profile (etc/tuned is a file here) is an
// error naming the path, and nothing is left behind.
func TestWriteTunedProfileUnwritable(t *testing.T) {
	h, root := persistRoot(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "tuned"), []byte("not a directory"), 0o644))
	_, err := h.WriteTunedProfile(persist.TunedProfile{Name: "nettune-tomcat"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(root, "etc", "tuned", "nettune-tomcat", "tuned.conf"))
	got, err := os.ReadFile(filepath.Join(root, "etc", "tuned"))
	require.NoError(t, err)
	assert.Equal(t, "not a directory", string(got))
}

// The unit writer goes to etc/systemd/system and is undone the same way.
func TestWriteCPUOnlineUnit(t *testing.T) {
	h, root := persistRoot(t)
	cpus, err := tuning.ParseCPUList("1")
	require.NoError(t, err)
	w, err := h.WriteCPUOnlineUnit(persist.CPUOnlineUnit{Offline: cpus})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "etc", "systemd", "system", persist.DefaultCPUOnlineUnit), w.Path)
	require.NoError(t, w.Undo(context.Background()))
	assert.NoDirExists(t, filepath.Join(root, "etc", "systemd"))
}

// fakeTuned records tuned-adm calls and keeps an active_profile file as
// tuned-adm would.
type fakeTuned struct {
	root  string
	calls []string
	fail  string // arguments that fail, e.g. "profile nettune-tomcat"
}

func (f *fakeTuned) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.calls = append(f.calls, name+" "+strings.Join(args, " "))
	if strings.Join(args, " ") == f.fail {
		return []byte("Cannot talk to TuneD daemon via DBus.\n"), errors.New("exit status 1")
	}
	ap := filepath.Join(f.root, "etc", "tuned", "active_profile")
	switch args[0] {
	case "profile":
		return nil, os.WriteFile(ap, []byte(strings.Join(args[1:], " ")+"\n"), 0o644)
	case "off":
		return nil, os.WriteFile(ap, nil, 0o644)
	case "active":
		b, _ := os.ReadFile(ap)
		if len(strings.TrimSpace(string(b))) == 0 {
			return []byte("No current active profile.\n"), nil
		}
		return []byte("Current active profile: " + strings.TrimSpace(string(b)) + "\n"), nil
	}
	return nil, nil
}

// A -persist run as steps: write the profile, activate it; the journal's
// revert activates the previous profile again and removes the file. A
// failing tuned-adm reverts the profile file too.
func TestTunedStepsRevert(t *testing.T) {
	for _, tc := range []struct {
		name     string
		previous string // active_profile before
		fail     string
		wantLast string // the last tuned-adm call of the revert
	}{
		{"previous profile", "virtual-guest\n", "", "tuned-adm profile virtual-guest"},
		{"tuned was off", "", "", "tuned-adm off"},
		{"tuned-adm fails", "virtual-guest\n", "profile nettune-tomcat", "tuned-adm profile virtual-guest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, root := persistRoot(t)
			require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "tuned"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "tuned", "active_profile"), []byte(tc.previous), 0o644))
			fake := &fakeTuned{root: root, fail: tc.fail}
			td := &persist.Tuned{Runner: fake}
			prof := persist.TunedProfile{Name: "nettune-tomcat", Include: []string{"virtual-guest"}}
			steps := []tuning.Step{
				{Name: "tuned-profile-file", Prepare: func(context.Context) (*tuning.Change, error) {
					e, err := h.PlanTunedProfile(prof)
					if err != nil {
						return nil, err
					}
					return tuning.ChangeFor(e)
				}},
				{Name: "tuned-profile", Prepare: func(context.Context) (*tuning.Change, error) {
					a, err := td.PlanActivate(h, "nettune-tomcat")
					if err != nil {
						return nil, err
					}
					return tuning.ChangeFor(a)
				}},
			}
			rev := tuning.Reverters{}
			tuning.AddReverter[persist.FileEdit](rev)
			// The journal does not hold the Runner: the revert runs
			// the fake's tuned-adm through this one.
			rev["tuned-activation"] = func(ctx context.Context, data json.RawMessage) error {
				var a persist.TunedActivation
				if err := json.Unmarshal(data, &a); err != nil {
					return err
				}
				a.Runner = fake
				return a.Undo(ctx)
			}
			path := filepath.Join(t.TempDir(), "journal")
			j, err := tuning.CreateJournal(path)
			require.NoError(t, err)
			r := &tuning.Runner{Journal: j, Reverters: rev, Keep: true}
			_, err = r.Run(context.Background(), steps)
			require.NoError(t, j.Close())
			if tc.fail != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "Cannot talk to TuneD daemon")
			} else {
				require.NoError(t, err)
				assert.FileExists(t, filepath.Join(root, "etc", "tuned", "nettune-tomcat", "tuned.conf"))
				got, err := h.ActiveTunedProfile()
				require.NoError(t, err)
				assert.Equal(t, []string{"nettune-tomcat"}, got)
				_, err = tuning.RevertJournal(context.Background(), path, rev)
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantLast, fake.calls[len(fake.calls)-1])
			assert.NoDirExists(t, filepath.Join(root, "etc", "tuned", "nettune-tomcat"), "no profile left behind")
			got, err := os.ReadFile(filepath.Join(root, "etc", "tuned", "active_profile"))
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSpace(tc.previous), strings.TrimSpace(string(got)))
		})
	}
}

// A run killed between two writes (the journal says the second began, the
// host holds only the first): RevertJournal from another process removes
// both, the missing one being no error.
func TestPersistKilledBetweenWrites(t *testing.T) {
	h, root := persistRoot(t)
	ctx := context.Background()
	e1, err := h.PlanTunedProfile(persist.TunedProfile{Name: "nettune-tomcat"})
	require.NoError(t, err)
	c1, err := tuning.ChangeFor(e1)
	require.NoError(t, err)
	e2, err := h.PlanSysctlConf(persist.SysctlConf{File: "90-nettune.conf", Settings: []persist.Setting{{Key: "net.core.somaxconn", Value: "4096"}}})
	require.NoError(t, err)
	c2, err := tuning.ChangeFor(e2)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "journal")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)
	s1, err := j.Begin("profile", c1.Undo)
	require.NoError(t, err)
	require.NoError(t, c1.Apply(ctx))
	require.NoError(t, j.Applied(s1))
	_, err = j.Begin("sysctl", c2.Undo) // killed before Apply
	require.NoError(t, err)
	require.NoError(t, j.Close())

	_, err = tuning.CreateJournal(path)
	require.ErrorIs(t, err, tuning.ErrPendingJournal)
	rev := tuning.Reverters{}
	tuning.AddReverter[persist.FileEdit](rev)
	steps, err := tuning.RevertJournal(ctx, path, rev)
	require.NoError(t, err)
	assert.Equal(t, []string{"sysctl", "profile"}, steps)
	assert.NoDirExists(t, filepath.Join(root, "etc", "tuned"))
	assert.NoDirExists(t, filepath.Join(root, "etc", "sysctl.d"))
}

// TestPackageKinds: the kinds of this package's values are the strings
// journals already hold (a journal written before Kind existed, or before
// these values moved from package tuning, reverts and verifies).
func TestPackageKinds(t *testing.T) {
	assert.Equal(t, "persist-file", persist.FileEdit{}.Kind())
	assert.Equal(t, "tuned-activation", persist.TunedActivation{}.Kind())
}
