//go:build linux

package study

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// TestPendingJournalError: a journal whose only pending records are a
// -persist run's writes is refused by the next -apply as the kept files
// in force, naming them and -revert; any other pending record is an
// interrupted run, as before.
func TestPendingJournalError(t *testing.T) {
	tests := []struct {
		name     string
		steps    []string // in order; those in reverted were reverted
		reverted []string
		want     string
		not      string
	}{
		{
			name:     "persisted",
			steps:    []string{StepTomcat, StepAccessLog, "persist-server-xml", "persist-drop-in"},
			reverted: []string{StepTomcat, StepAccessLog},
			want:     "the files of an earlier -persist run are in force (persist-server-xml, persist-drop-in): a new run would measure them as its baseline",
			not:      "interrupted",
		},
		{
			name:     "killed while measuring",
			steps:    []string{StepTomcat, StepAccessLog},
			reverted: nil,
			want:     "a previous run was interrupted; run with -revert -journal ",
			not:      "-persist",
		},
		{
			name:     "killed while persisting",
			steps:    []string{StepTomcat, StepAccessLog, "persist-server-xml"},
			reverted: []string{StepAccessLog},
			want:     "a previous run was interrupted",
			not:      "-persist",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			j, err := tuning.CreateJournal(path)
			require.NoError(t, err)
			for _, s := range tt.steps {
				u, err := tuning.NewUndo(persist.FileEdit{}.Kind(), map[string]string{"path": "/etc/x"})
				require.NoError(t, err)
				seq, err := j.Begin(s, []tuning.Undo{u})
				require.NoError(t, err)
				require.NoError(t, j.Applied(seq))
				for _, r := range tt.reverted {
					if r == s {
						require.NoError(t, j.Reverted(seq))
					}
				}
			}
			require.NoError(t, j.Close())
			_, cerr := tuning.CreateJournal(path)
			require.ErrorIs(t, cerr, tuning.ErrPendingJournal)

			err = pendingJournalError(path, cerr)
			require.ErrorIs(t, err, tuning.ErrPendingJournal)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "-revert -journal "+path+" first")
			assert.NotContains(t, err.Error(), tt.not)
		})
	}
}

// guideHost discovers the Arm guide's 192-CPU host (a fixture root, no
// tuned: no etc/tuned) with upstream Tomcat's server.xml at Debian's
// place, and returns it with that server.xml's path and bytes.
func guideHost(t *testing.T) (Host, string, []byte) {
	t.Helper()
	return guideHostWith(t, nil)
}

// guideHostWith is guideHost with prepare (nil: none) run on the root
// before Discover.
func guideHostWith(t *testing.T, prepare func(root string)) (Host, string, []byte) {
	t.Helper()
	root := testutil.ExtractSysroot(t, filepath.Join(testutil.RepoRoot(t), "numa", "testdata", "neoverse-v2-192cpu-2node.tar.gz"))
	if prepare != nil {
		prepare(root)
	}
	xml := filepath.Join(root, tomcatconf.DefaultBase, "conf", "server.xml")
	data, err := os.ReadFile(testutil.CorpusFile(t, "tomcat", "server-10.1.59.xml"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(xml), 0o755))
	require.NoError(t, os.WriteFile(xml, data, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, tomcatconf.DefaultHome, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, tomcatconf.DefaultHome, "bin", "catalina.sh"), nil, 0o755))
	o := DefaultOptions()
	o.Root = root
	h, err := Discover(context.Background(), o)
	require.NoError(t, err)
	require.True(t, h.Tomcat.Usable(), "%v", h.Tomcat.Err)
	return h, xml, data
}

// guidePersistence plans -persist of the guide's CPUs (hotplug, without
// tuned: a boot unit) and access log: two files, server.xml first.
func guidePersistence(t *testing.T, h Host) []tuning.Step {
	t.Helper()
	o := DefaultOptions()
	o.Root = h.Root
	p, err := PlanPersist(h, o, nil, []string{StepCPUs, StepAccessLog})
	require.NoError(t, err)
	require.False(t, p.Tuned)
	require.NotNil(t, p.ServerXML)
	require.NotNil(t, p.CPUUnit)
	steps := p.Steps(h)
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	require.Equal(t, []string{"persist-server-xml", "persist-cpu-unit"}, names)
	return steps
}

// TestPersistUnwritableEtc: -persist's second write fails (the unit's
// directory under /etc cannot be made): the run fails naming the file,
// the first write is taken back, and the journal has nothing pending.
func TestPersistUnwritableEtc(t *testing.T) {
	h, xml, orig := guideHost(t)
	steps := guidePersistence(t, h)
	// A file where /etc/systemd is a directory: not even root writes
	// the unit below it.
	require.NoError(t, os.MkdirAll(filepath.Join(h.Root, "etc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(h.Root, "etc", "systemd"), nil, 0o644))

	path := filepath.Join(t.TempDir(), "j")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)
	cpuHost, err := tuning.New(h.Root)
	require.NoError(t, err)
	r := &tuning.Runner{Journal: j, Reverters: Reverters(cpuHost), Keep: true}
	res, err := r.Run(context.Background(), steps)
	require.NoError(t, j.Close())
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(h.Root, "etc", "systemd"))
	require.Len(t, res, 2)
	assert.Equal(t, tuning.StatusReverted, res[0].Status, "server.xml's write taken back")
	got, err := os.ReadFile(xml)
	require.NoError(t, err)
	assert.Equal(t, orig, got)
	entries, err := tuning.ReadJournal(path)
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, e.Reverted || !e.Applied, "%s left pending", e.Step)
	}
	_, err = tuning.CreateJournal(path)
	assert.NoError(t, err, "the next -apply may start")
}

// TestPersistKilledBetweenWritesRevert: a -persist run killed between its
// two writes (the journal records the second as begun; the kill came
// before, or after, its file was written) leaves both for -revert, which
// removes both: no unit file, server.xml as it was.
func TestPersistKilledBetweenWritesRevert(t *testing.T) {
	for _, secondWritten := range []bool{false, true} {
		t.Run(map[bool]string{false: "before the second file", true: "after the second file"}[secondWritten], func(t *testing.T) {
			h, xml, orig := guideHost(t)
			steps := guidePersistence(t, h)
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "j")
			j, err := tuning.CreateJournal(path)
			require.NoError(t, err)
			first, err := steps[0].Prepare(ctx)
			require.NoError(t, err)
			seq, err := j.Begin(steps[0].Name, first.Undo)
			require.NoError(t, err)
			require.NoError(t, first.Apply(ctx))
			require.NoError(t, j.Applied(seq))
			second, err := steps[1].Prepare(ctx)
			require.NoError(t, err)
			_, err = j.Begin(steps[1].Name, second.Undo)
			require.NoError(t, err)
			if secondWritten {
				require.NoError(t, second.Apply(ctx))
			}
			require.NoError(t, j.Close()) // the kill: no applied record, no revert
			unit := filepath.Join(h.Root, "etc", "systemd", "system", persist.DefaultCPUOnlineUnit)
			if secondWritten {
				require.FileExists(t, unit)
			}
			kept, err := os.ReadFile(xml)
			require.NoError(t, err)
			require.NotEqual(t, orig, kept)

			_, err = tuning.CreateJournal(path)
			require.ErrorIs(t, err, tuning.ErrPendingJournal)
			assert.Contains(t, pendingJournalError(path, err).Error(), "a previous run was interrupted")
			var log bytes.Buffer
			require.NoError(t, Revert(ctx, path, &log), "%s", log.String())
			assert.Contains(t, log.String(), "reverted persist-cpu-unit\nreverted persist-server-xml\n")
			assert.NoFileExists(t, unit)
			assert.NoDirExists(t, filepath.Join(h.Root, "etc", "systemd"), "the directories the unit's write made")
			got, err := os.ReadFile(xml)
			require.NoError(t, err)
			assert.Equal(t, orig, got)
		})
	}
}

// TestPersistIOMMU: a kept iommu step goes into the tuned profile's
// [bootloader] only where a GRUB defaults file can carry it; otherwise
// it is a note saying why it is not persistent and, without tuned, how to
// make it so.
func TestPersistIOMMU(t *testing.T) {
	_, errAdm := exec.LookPath("tuned-adm")
	tests := []struct {
		name    string
		grub    bool
		tuned   bool
		cmdline string // the profile's [bootloader] cmdline; "" no profile
		note    string
	}{
		{"GRUB and tuned", true, true, "iommu.strict=1 iommu.passthrough=0", "reboot pending"},
		{"tuned, no GRUB", false, true, "", "are not made persistent: no GRUB defaults file to carry them"},
		{"GRUB, no tuned", true, false, "", "are not made persistent without tuned: write them to "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tuned && errAdm != nil {
				t.Skipf("skipped: tuned-adm not installed (Debian: tuned): %v", errAdm)
			}
			h, _, _ := guideHostWith(t, func(root string) {
				if tt.grub {
					data, err := os.ReadFile(testutil.CorpusFile(t, "grub", "debian12-grub2-common-2.06-13+deb12u2.default-grub"))
					require.NoError(t, err)
					require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "default"), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "default", "grub"), data, 0o644))
				}
				if tt.tuned {
					require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "tuned"), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "tuned", "active_profile"), []byte("throughput-performance\n"), 0o644))
				}
			})
			o := DefaultOptions()
			o.Root = h.Root
			p, err := PlanPersist(h, o, nil, []string{StepIOMMU})
			require.NoError(t, err)
			assert.Equal(t, tt.tuned, p.Tuned)
			if tt.cmdline == "" {
				assert.Nil(t, p.Profile, "no profile")
			} else if assert.NotNil(t, p.Profile) {
				assert.Equal(t, tt.cmdline, p.Profile.Cmdline)
				assert.Equal(t, []string{"throughput-performance"}, p.Profile.Include)
			}
			require.Len(t, p.Notes, 1)
			assert.Contains(t, p.Notes[0], tt.note)
		})
	}
}
