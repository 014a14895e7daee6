package tuning

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
)

// journalChange journals ch under step, applies it with apply (nil: its
// own Apply), and marks it applied.
func journalChange(t *testing.T, j *Journal, step string, ch *Change, apply func() error) {
	t.Helper()
	seq, err := j.Begin(step, ch.Undo)
	require.NoError(t, err)
	if apply == nil {
		apply = func() error { return ch.Apply(context.Background()) }
	}
	require.NoError(t, apply())
	require.NoError(t, j.Applied(seq))
}

// TestVerifyJournalHostKinds: the records of the cpu-online, sysctl and
// file kinds now carry the state set, and Host.Verifiers checks it on a
// fixture root; a sysctl set back by hand differs, naming both values;
// records without the state set, of an unknown kind, or of a change that
// never finished applying are told apart; reverted changes are not
// checked.
func TestVerifyJournalHostKinds(t *testing.T) {
	h, _ := newFixtureHost(t, seedsHost())
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j")
	j, err := CreateJournal(path)
	require.NoError(t, err)

	cpus, err := h.KeepOnlineChange(cpuset.Range(0, 7))
	require.NoError(t, err)
	require.NotNil(t, cpus.Verify)
	journalChange(t, j, "cpus", cpus, nil)

	tw, err := h.SysctlChange("net.ipv4.tcp_max_tw_buckets", "262144")
	require.NoError(t, err)
	require.NotNil(t, tw.Verify, "SysctlChange has a Verify")
	twFile := h.root.Proc("sys", "net", "ipv4", "tcp_max_tw_buckets")
	// The fixture's kernel ignores sysctl writes: write the file itself.
	journalChange(t, j, "tw-buckets", tw, func() error { return os.WriteFile(twFile, []byte("262144\n"), 0o644) })

	conf := filepath.Join(t.TempDir(), "app.conf")
	require.NoError(t, os.WriteFile(conf, []byte("a=1\nb=2\n"), 0o644))
	file, err := FileChange(conf, func(old []byte) ([]byte, error) { return []byte(strings.Replace(string(old), "b=2", "b=3", 1)), nil })
	require.NoError(t, err)
	journalChange(t, j, "conf", file, nil)

	// A record as older journals hold it: the snapshot only.
	snap, err := NewUndo(undoCPUs, CPUSnapshot{Online: cpuset.Range(0, 191)})
	require.NoError(t, err)
	journalChange(t, j, "old-cpus", &Change{Undo: []Undo{snap}}, func() error { return nil })
	// A kind no verifier knows, and a change without an undo record.
	odd, err := NewUndo("odd", map[string]int{"x": 1})
	require.NoError(t, err)
	journalChange(t, j, "odd", &Change{Undo: []Undo{odd}}, func() error { return nil })
	journalChange(t, j, "placement", &Change{}, func() error { return nil })
	// Begun, never applied; and one reverted.
	_, err = j.Begin("killed", []Undo{tw.Undo[0]})
	require.NoError(t, err)
	seq, err := j.Begin("undone", []Undo{odd})
	require.NoError(t, err)
	require.NoError(t, j.Reverted(seq))

	// A live run's journal is refused, naming its PID.
	_, err = VerifyJournal(ctx, path, h.Verifiers())
	require.ErrorIs(t, err, ErrJournalLocked)
	assert.Contains(t, err.Error(), fmt.Sprintf("PID %d", os.Getpid()))
	require.NoError(t, j.Close())

	checks, err := VerifyJournal(ctx, path, h.Verifiers())
	require.NoError(t, err)
	byStep := map[string]RecordCheck{}
	var steps []string
	for _, c := range checks {
		byStep[c.Step] = c
		steps = append(steps, c.Step)
	}
	assert.Equal(t, []string{"cpus", "tw-buckets", "conf", "old-cpus", "odd", "placement", "killed"}, steps, "in force, in journal order")
	assert.Equal(t, "online CPUs 0-7", byStep["cpus"].Expected)
	assert.NoError(t, byStep["cpus"].Err)
	assert.Equal(t, "sysctl net.ipv4.tcp_max_tw_buckets = 262144", byStep["tw-buckets"].Expected)
	assert.NoError(t, byStep["tw-buckets"].Err)
	assert.Equal(t, conf+" as written (8 bytes)", byStep["conf"].Expected)
	assert.NoError(t, byStep["conf"].Err)
	assert.ErrorIs(t, byStep["old-cpus"].Err, ErrNotVerifiable)
	assert.ErrorIs(t, byStep["odd"].Err, ErrNotVerifiable)
	assert.True(t, byStep["placement"].NoRecord)
	assert.NoError(t, byStep["placement"].Err)
	assert.True(t, byStep["killed"].Interrupted)

	// Changed by hand: each is named with what was found.
	require.NoError(t, os.WriteFile(twFile, []byte("65536\n"), 0o644))
	require.NoError(t, os.WriteFile(conf, []byte("a=1\nb=4\n"), 0o644))
	require.NoError(t, h.SetOnline(8, true))
	checks, err = VerifyJournal(ctx, path, h.Verifiers())
	require.NoError(t, err)
	for _, c := range checks {
		byStep[c.Step] = c
	}
	assert.ErrorIs(t, byStep["tw-buckets"].Err, ErrNotApplied)
	assert.ErrorContains(t, byStep["tw-buckets"].Err, `sysctl net.ipv4.tcp_max_tw_buckets is "65536", want "262144"`)
	assert.ErrorContains(t, byStep["conf"].Err, `line 2 is "b=4", want "b=3"`)
	assert.ErrorContains(t, byStep["cpus"].Err, "online CPUs are 0-8, wanted 0-7")

	// The records still revert as before: the snapshot is read whole.
	done, err := RevertJournal(ctx, path, h.Reverters())
	require.Error(t, err, "the odd kind has no reverter")
	assert.Contains(t, done, "cpus")
	on, err := h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "0-191", on.String())
}

func TestParseLocks(t *testing.T) {
	locks := `1: POSIX  ADVISORY  WRITE 17913 00:27:879816 0 EOF
2: FLOCK  ADVISORY  WRITE 19883 fe:00:10241718 0 EOF
2: -> FLOCK  ADVISORY  WRITE 20000 fe:00:10241718 0 EOF
3: FLOCK  ADVISORY  READ 10477 fe:00:9981457 0 EOF
`
	pid, err := parseLocks(strings.NewReader(locks), 0xfe, 0, 10241718)
	require.NoError(t, err)
	assert.Equal(t, 19883, pid)
	pid, err = parseLocks(strings.NewReader(locks), 0, 0x27, 879816)
	require.NoError(t, err)
	assert.Zero(t, pid, "a POSIX lock is not a journal's flock")
	_, err = parseLocks(strings.NewReader("1: FLOCK  ADVISORY  WRITE x fe:00:1 0 EOF\n"), 0xfe, 0, 1)
	assert.Error(t, err)
}
