//go:build linux

package study

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning/persist"
)

// tunedRoot is a host root with Debian 12's tuned layout: two of its
// profiles in /usr/lib/tuned, one of the user's in /etc/tuned, and
// balanced active.
func tunedRoot(t *testing.T) string {
	t.Helper()
	root := sysctlRoot(t)
	for _, d := range []string{"usr/lib/tuned/balanced", "usr/lib/tuned/throughput-performance", "etc/tuned/mine"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, d, "tuned.conf"), []byte("[main]\nsummary=test\n"), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/lib/tuned/functions.d"), 0o755)) // no tuned.conf: not a profile
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc/tuned/active_profile"), []byte("balanced\n"), 0o644))
	return root
}

// TestParseStepsTuned: tuned:PROFILE is a step of -steps; a name tuned
// would not take is refused naming the form.
func TestParseStepsTuned(t *testing.T) {
	names, err := ParseSteps("tuned:throughput-performance,access-log")
	require.NoError(t, err)
	assert.Equal(t, []string{"tuned:throughput-performance", "access-log"}, names)
	for _, in := range []string{"tuned:", "tuned:a b", "tuned:../x"} {
		_, err := ParseSteps(in)
		assert.ErrorContains(t, err, "want a tuned profile name", in)
		assert.ErrorContains(t, err, "want tuned:PROFILE", in)
	}
}

// TestTunedStep: on a host root, the step plans tuned's switch from the
// active profile, journaled as persist.TunedActivation (whose undo
// activates balanced again); the active profile is "already so"; a
// profile tuned lacks is refused before any step is planned, naming the
// installed ones.
func TestTunedStep(t *testing.T) {
	root := tunedRoot(t)
	o := DefaultOptions()
	o.Root, o.Steps = root, []string{"tuned:throughput-performance"}
	h := Host{Root: root, CPUs: CPUs{N: 2}}
	assert.Equal(t, []string{"balanced", "mine", "throughput-performance"}, tunedProfiles(root))
	steps, err := Steps(h, o, nil)
	require.NoError(t, err)
	require.Len(t, steps, 1)
	assert.Equal(t, "tuned profile throughput-performance", steps[0].Title)
	assert.True(t, hostWide(h, o, steps), "a tuned profile is host-wide: the host's lock")
	ch, err := steps[0].Prepare(context.Background())
	require.NoError(t, err)
	assert.Empty(t, ch.Skip)
	assert.Contains(t, ch.Describe, "tuned profile: balanced -> throughput-performance")
	require.Len(t, ch.Undo, 1)
	assert.Equal(t, "tuned-activation", ch.Undo[0].Kind)
	var a persist.TunedActivation
	require.NoError(t, json.Unmarshal(ch.Undo[0].Data, &a))
	assert.Equal(t, []string{"throughput-performance"}, a.Profiles)
	assert.Equal(t, []string{"balanced"}, a.Previous, "the undo activates balanced again")

	o.Steps = []string{"tuned:balanced"}
	steps, err = Steps(h, o, nil)
	require.NoError(t, err)
	ch, err = steps[0].Prepare(context.Background())
	require.NoError(t, err)
	assert.Contains(t, ch.Describe, "already so")
	assert.Empty(t, ch.Undo, "nothing to apply or undo")

	o.Steps = []string{"access-log", "tuned:throughput-perfomance"}
	_, err = Steps(h, o, nil)
	assert.ErrorContains(t, err, `-steps tuned:throughput-perfomance: tuned has no profile "throughput-perfomance"`)
	assert.ErrorContains(t, err, "installed: balanced mine throughput-performance")

	empty := sysctlRoot(t)
	o.Root, o.Steps = empty, []string{"tuned:balanced"}
	_, err = Steps(Host{Root: empty, CPUs: CPUs{N: 2}}, o, nil)
	assert.ErrorContains(t, err, "no tuned profile is installed under "+filepath.Join(empty, "etc/tuned/profiles"))
}

// TestPersistTuned: a kept tuned step is what nettune's profile builds
// on (include=) when it keeps other settings, and is activated itself
// (a journaled persist-tuned-activate) when it keeps nothing else.
func TestPersistTuned(t *testing.T) {
	root := tunedRoot(t)
	o := DefaultOptions()
	o.Root = root
	h := Host{Root: root, CPUs: CPUs{N: 2}}
	kind, ok, err := lookupKind("tuned:throughput-performance")
	require.NoError(t, err)
	require.True(t, ok)
	sysctl, ok, err := lookupKind("sysctl:net.core.somaxconn=8192")
	require.NoError(t, err)
	require.True(t, ok)

	plan := func(kinds ...Kind) Persistence {
		p := Persistence{Tuned: true, Profile: &persist.TunedProfile{Name: ProfileName, Include: []string{"balanced"}}}
		pp := &persistPlan{h: h, o: o, p: &p, place: InitialPlacement(h, o)}
		for _, k := range kinds {
			require.NoError(t, k.Needs.Persist(pp))
		}
		require.NoError(t, pp.finish())
		return p
	}
	alone := plan(kind)
	assert.Nil(t, alone.Profile, "nothing of nettune's own to keep")
	assert.Equal(t, []string{"throughput-performance"}, alone.Activate)
	steps := alone.Steps(h)
	require.Len(t, steps, 1)
	assert.Equal(t, "persist-tuned-activate", steps[0].Name)
	ch, err := steps[0].Prepare(context.Background())
	require.NoError(t, err)
	assert.Contains(t, ch.Describe, "balanced -> throughput-performance")

	with := plan(kind, sysctl)
	require.NotNil(t, with.Profile)
	assert.Equal(t, []string{"throughput-performance"}, with.Profile.Include, "nettune's profile builds on the kept one")
	assert.Empty(t, with.Activate)

	p := Persistence{}
	pp := &persistPlan{h: h, o: o, p: &p}
	assert.ErrorContains(t, kind.Needs.Persist(pp), "tuned is not installed here")
}
