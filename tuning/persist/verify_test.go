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

// TestVerifyAs: a Reversible's record comes back through VerifyAs and its
// Verify runs; a record that does not decode is not verifiable.
func TestVerifyAs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	e, err := persist.PlanFile(p, []byte("x\n"))
	require.NoError(t, err)
	require.NoError(t, e.Apply(context.Background()))
	ch, err := tuning.ChangeFor(e)
	require.NoError(t, err)
	fn := persist.VerifyAs[persist.FileEdit]()
	want, err := fn(context.Background(), ch.Undo[0].Data)
	require.NoError(t, err)
	assert.Equal(t, "write "+p+" (2 bytes, new)", want)
	require.NoError(t, os.WriteFile(p, []byte("y\n"), 0o644))
	_, err = fn(context.Background(), ch.Undo[0].Data)
	assert.ErrorContains(t, err, `line 1 is "y", want "x"`)
	_, err = fn(context.Background(), json.RawMessage(`[1]`))
	assert.True(t, errors.Is(err, persist.ErrNotVerifiable))
}

// journalChange journals ch under step, applies it (unless apply is
// false) and marks it applied.
func journalChange(t *testing.T, j *tuning.Journal, step string, ch *tuning.Change, apply bool) {
	t.Helper()
	seq, err := j.Begin(step, ch.Undo)
	require.NoError(t, err)
	if apply {
		require.NoError(t, ch.Apply(context.Background()))
	}
	require.NoError(t, j.Applied(seq))
}

// TestVerifyJournal: every change a journal holds in force is checked in
// journal order, package tuning's kinds through Host.Verifiers and a
// persistent file through AddVerifier; records without the state set, of
// an unknown kind, or of a change that never finished applying are told
// apart; reverted changes are not checked; a live run's journal is
// refused; a file changed by hand is named with what was found.
func TestVerifyJournal(t *testing.T) {
	h, root := persistRoot(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)

	conf := filepath.Join(root, "etc", "app.conf")
	require.NoError(t, os.WriteFile(conf, []byte("a=1\nb=2\n"), 0o644))
	file, err := tuning.FileChange(conf, func(old []byte) ([]byte, error) { return []byte(strings.Replace(string(old), "b=2", "b=3", 1)), nil })
	require.NoError(t, err)
	journalChange(t, j, "conf", file, true)

	e, err := h.PlanSysctlConf(persist.SysctlConf{File: "90-nettune.conf", Settings: []persist.Setting{{Key: "net.core.somaxconn", Value: "4096"}}})
	require.NoError(t, err)
	sysctlConf, err := tuning.ChangeFor(e)
	require.NoError(t, err)
	journalChange(t, j, "sysctl-conf", sysctlConf, true)

	// A record as older journals hold it: the bytes before only.
	old, err := tuning.NewUndo("file", map[string]any{"path": conf, "content": []byte("a=1\n"), "mode": 0o644})
	require.NoError(t, err)
	journalChange(t, j, "old-conf", &tuning.Change{Undo: []tuning.Undo{old}}, false)
	// A kind no verifier knows, and a change without an undo record.
	odd, err := tuning.NewUndo("odd", map[string]int{"x": 1})
	require.NoError(t, err)
	journalChange(t, j, "odd", &tuning.Change{Undo: []tuning.Undo{odd}}, false)
	journalChange(t, j, "placement", &tuning.Change{}, false)
	// Begun, never applied; and one reverted.
	_, err = j.Begin("killed", sysctlConf.Undo)
	require.NoError(t, err)
	seq, err := j.Begin("undone", []tuning.Undo{odd})
	require.NoError(t, err)
	require.NoError(t, j.Reverted(seq))

	ver := h.Verifiers()
	persist.AddVerifier[persist.FileEdit](ver)
	// A live run's journal is refused, naming its PID.
	_, err = persist.VerifyJournal(ctx, path, ver)
	require.ErrorIs(t, err, tuning.ErrJournalLocked)
	assert.Contains(t, err.Error(), fmt.Sprintf("PID %d", os.Getpid()))
	require.NoError(t, j.Close())

	checks, err := persist.VerifyJournal(ctx, path, ver)
	require.NoError(t, err)
	byStep := map[string]persist.RecordCheck{}
	var steps []string
	for _, c := range checks {
		byStep[c.Step] = c
		steps = append(steps, c.Step)
	}
	assert.Equal(t, []string{"conf", "sysctl-conf", "old-conf", "odd", "placement", "killed"}, steps, "in force, in journal order")
	assert.Equal(t, conf+" as written (8 bytes)", byStep["conf"].Expected)
	assert.NoError(t, byStep["conf"].Err)
	assert.Equal(t, e.Describe(), byStep["sysctl-conf"].Expected)
	assert.NoError(t, byStep["sysctl-conf"].Err)
	assert.ErrorIs(t, byStep["old-conf"].Err, persist.ErrNotVerifiable)
	assert.ErrorContains(t, byStep["old-conf"].Err, "persist: journal record cannot be verified: the record of "+conf+" holds its bytes before the change only")
	assert.ErrorIs(t, byStep["odd"].Err, persist.ErrNotVerifiable)
	assert.True(t, byStep["placement"].NoRecord)
	assert.NoError(t, byStep["placement"].Err)
	assert.True(t, byStep["killed"].Interrupted)

	// Changed by hand: named with what was found.
	require.NoError(t, os.WriteFile(conf, []byte("a=1\nb=4\n"), 0o644))
	checks, err = persist.VerifyJournal(ctx, path, ver)
	require.NoError(t, err)
	assert.ErrorContains(t, checks[0].Err, `line 2 is "b=4", want "b=3"`)
}
