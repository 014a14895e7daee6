package tuning_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// counterFile is a Reversible over one file holding a number: enough to
// run ChangeOf and RevertAs through a Runner and a journal.
type counterFile struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

func (c counterFile) Describe() string { return c.Path + ": " + c.Before + " -> " + c.After }
func (c counterFile) Apply(context.Context) error {
	return os.WriteFile(c.Path, []byte(c.After), 0o644)
}
func (c counterFile) Verify(context.Context) error { return nil }
func (c counterFile) Undo(context.Context) error {
	return os.WriteFile(c.Path, []byte(c.Before), 0o644)
}

func TestChangeOfRevertAs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "n")
	require.NoError(t, os.WriteFile(p, []byte("1"), 0o644))
	c := counterFile{Path: p, Before: "1", After: "2"}
	ch, err := tuning.ChangeOf("counter", c)
	require.NoError(t, err)
	assert.Equal(t, p+": 1 -> 2", ch.Describe)
	require.Len(t, ch.Undo, 1)
	assert.Equal(t, "counter", ch.Undo[0].Kind)
	assert.JSONEq(t, `{"path":"`+p+`","before":"1","after":"2"}`, string(ch.Undo[0].Data))

	journal := filepath.Join(dir, "j")
	j, err := tuning.CreateJournal(journal)
	require.NoError(t, err)
	rev := tuning.Reverters{"counter": tuning.RevertAs[counterFile]()}
	r := &tuning.Runner{Journal: j, Reverters: rev, Keep: true}
	res, err := r.Run(context.Background(), []tuning.Step{{Name: "count", Prepare: func(context.Context) (*tuning.Change, error) { return ch, nil }}})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, tuning.StatusApplied, res[0].Status)
	got, _ := os.ReadFile(p)
	assert.Equal(t, "2", string(got))

	// Another process's revert: the record alone puts the file back.
	done, err := tuning.RevertJournal(context.Background(), journal, rev)
	require.NoError(t, err)
	assert.Equal(t, []string{"count"}, done)
	got, _ = os.ReadFile(p)
	assert.Equal(t, "1", string(got))

	// A record that does not decode names the type.
	err = tuning.RevertAs[counterFile]()(context.Background(), []byte(`{"path":1}`))
	assert.ErrorContains(t, err, "tuning_test.counterFile")
}

// kindedCounter is counterFile with its own journal kind.
type kindedCounter struct{ counterFile }

func (kindedCounter) Kind() string { return "kinded-counter" }

// TestChangeForAddReverter: a Kinded value journals under its own kind,
// and AddReverter and persist.AddVerifier register its type under that kind, so
// a revert from the record alone needs no kind string of the caller's.
func TestChangeForAddReverter(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "n")
	require.NoError(t, os.WriteFile(p, []byte("1"), 0o644))
	ch, err := tuning.ChangeFor(kindedCounter{counterFile{Path: p, Before: "1", After: "2"}})
	require.NoError(t, err)
	require.Len(t, ch.Undo, 1)
	assert.Equal(t, "kinded-counter", ch.Undo[0].Kind)
	assert.Equal(t, "kinded-counter", tuning.KindOf[kindedCounter]())

	rev, ver := tuning.Reverters{}, persist.Verifiers{}
	tuning.AddReverter[kindedCounter](rev)
	persist.AddVerifier[kindedCounter](ver)
	require.Contains(t, rev, "kinded-counter")
	require.Contains(t, ver, "kinded-counter")
	require.NoError(t, ch.Apply(context.Background()))
	want, err := ver["kinded-counter"](context.Background(), ch.Undo[0].Data)
	require.NoError(t, err)
	assert.Equal(t, p+": 1 -> 2", want)
	require.NoError(t, rev["kinded-counter"](context.Background(), ch.Undo[0].Data))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "1", string(got))
}
