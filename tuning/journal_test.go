package tuning_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
)

// twoFileStep rewrites two files in one step: its begin record holds two
// undo records, a's then b's.
func twoFileStep(name, a, b string) tuning.Step {
	return tuning.Step{Name: name, Prepare: func(ctx context.Context) (*tuning.Change, error) {
		ca, err := fileStep("", a, `"200"`, `"7"`).Prepare(ctx)
		if err != nil {
			return nil, err
		}
		cb, err := fileStep("", b, `"quiet"`, `"quiet iommu.strict=1"`).Prepare(ctx)
		if err != nil {
			return nil, err
		}
		return &tuning.Change{
			Undo: append(append([]tuning.Undo{}, ca.Undo...), cb.Undo...),
			Apply: func(ctx context.Context) error {
				if err := ca.Apply(ctx); err != nil {
					return err
				}
				return cb.Apply(ctx)
			},
		}, nil
	}}
}

const (
	origA = "<Connector maxThreads=\"200\"/>\n"
	origB = "GRUB_CMDLINE_LINUX=\"quiet\"\n"
)

// keptJournal runs the access-log step (two files) with Keep, closes the
// journal and returns its bytes and the offsets of its begin line.
func keptJournal(t *testing.T) (path, a, b string, data []byte, begin, end int) {
	t.Helper()
	dir, a, b := setupFiles(t)
	path = filepath.Join(dir, "journal")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)
	r := &tuning.Runner{Journal: j, Reverters: tuning.Reverters{tuning.UndoFile: tuning.RevertFile}, Keep: true}
	_, err = r.Run(context.Background(), []tuning.Step{twoFileStep("access-log", a, b)})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	begin = bytes.Index(data, []byte(`{"seq":1,"op":"begin"`))
	require.Positive(t, begin)
	end = begin + bytes.IndexByte(data[begin:], '\n')
	return path, a, b, data, begin, end
}

// TestRevertJournalTornBegin cuts the journal inside the access-log step's
// begin record, as issue 24 did, and reverts it. Before, every cut was
// reverted with no error and server.xml kept its change.
func TestRevertJournalTornBegin(t *testing.T) {
	tests := []struct {
		name string
		// cut returns where to cut the begin line.
		cut        func(line []byte) int
		wantA      string // server.xml after the revert
		wantB      string
		wantMsg    string
		wantMarked bool // a second revert has nothing to do
	}{
		{
			name:       "after the undo list",
			cut:        func(l []byte) int { return bytes.Index(l, []byte(`"time"`)) + 10 },
			wantA:      origA,
			wantB:      origB,
			wantMsg:    `the record of step "access-log" (change 1) was cut short while it was written (a crash or a full disk); its 2 undo record(s) were whole and are reverted`,
			wantMarked: true,
		},
		{
			name:       "inside the second undo record",
			cut:        func(l []byte) int { return bytes.LastIndex(l, []byte(`"content"`)) + 14 },
			wantA:      origA,
			wantB:      "GRUB_CMDLINE_LINUX=\"quiet iommu.strict=1\"\n",
			wantMsg:    `reverted from its 1 whole undo record(s), the rest of its undo list is lost`,
			wantMarked: true,
		},
		{
			name:    "inside the first undo record",
			cut:     func(l []byte) int { return bytes.Index(l, []byte(`"content"`)) + 14 },
			wantA:   "<Connector maxThreads=\"7\"/>\n",
			wantB:   "GRUB_CMDLINE_LINUX=\"quiet iommu.strict=1\"\n",
			wantMsg: `the record of step "access-log" (change 1) was cut short while it was written (a crash or a full disk): none of its undo records is readable, so nothing of it was reverted`,
		},
		{
			name:    "inside the step name",
			cut:     func(l []byte) int { return bytes.Index(l, []byte(`"access`)) + 4 },
			wantA:   "<Connector maxThreads=\"7\"/>\n",
			wantB:   "GRUB_CMDLINE_LINUX=\"quiet iommu.strict=1\"\n",
			wantMsg: `line 2: the record of change 1 (step name lost) was cut short`,
		},
		{
			name:    "inside the change number",
			cut:     func(l []byte) int { return len(`{"seq":`) },
			wantA:   "<Connector maxThreads=\"7\"/>\n",
			wantB:   "GRUB_CMDLINE_LINUX=\"quiet iommu.strict=1\"\n",
			wantMsg: `line 2: an unreadable record (it may be a step's begin record) was cut short`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, a, b, data, begin, end := keptJournal(t)
			at := tt.cut(data[begin:end])
			require.Positive(t, at)
			require.NoError(t, os.WriteFile(path, data[:begin+at], 0o600))

			entries, err := tuning.ReadJournal(path)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			assert.True(t, entries[0].Torn)

			steps, err := tuning.RevertJournal(context.Background(), path, tuning.Reverters{tuning.UndoFile: tuning.RevertFile})
			require.ErrorIs(t, err, tuning.ErrTornJournal, "a torn record is never silent")
			var torn *tuning.TornRecordError
			require.True(t, errors.As(err, &torn))
			assert.Equal(t, 2, torn.Line)
			assert.ErrorContains(t, err, tt.wantMsg)
			assert.Equal(t, tt.wantA, read(t, a))
			assert.Equal(t, tt.wantB, read(t, b))

			again, err := tuning.RevertJournal(context.Background(), path, tuning.Reverters{tuning.UndoFile: tuning.RevertFile})
			if tt.wantMarked {
				assert.Equal(t, []string{"access-log"}, steps)
				assert.NoError(t, err, "reported once, then marked reverted")
				assert.Empty(t, again)
				_, err = tuning.ReadJournal(path)
				require.NoError(t, err, "the record after the torn tail starts on its own line")
			} else {
				assert.Empty(t, steps)
				assert.ErrorIs(t, err, tuning.ErrTornJournal, "what could not be reverted is said every time")
				_, err = tuning.CreateJournal(path)
				assert.ErrorIs(t, err, tuning.ErrPendingJournal, "a new run does not start over it")
			}
		})
	}
}

// TestJournalEmptyOrTornFirstRecord: a journal with nothing readable is an
// error, not "nothing to revert", and CreateJournal does not replace it.
func TestJournalEmptyOrTornFirstRecord(t *testing.T) {
	for _, tt := range []struct{ name, content, msg string }{
		{"0 bytes", "", "is empty (0 bytes)"},
		{"blank", "\n\n", "is empty (2 bytes)"},
		{"torn open record", `{"seq":0,"op":"op`, `line 1: its first record is cut short`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "journal")
			require.NoError(t, os.WriteFile(p, []byte(tt.content), 0o600))
			steps, err := tuning.RevertJournal(context.Background(), p, tuning.Reverters{})
			require.ErrorIs(t, err, tuning.ErrTornJournal)
			assert.ErrorContains(t, err, tt.msg)
			assert.Empty(t, steps)
			_, err = tuning.CreateJournal(p)
			require.ErrorIs(t, err, tuning.ErrTornJournal)
			assert.Equal(t, tt.content, read(t, p), "left alone")
		})
	}
}

// TestJournalLockedByLiveRun: while a run holds its journal, neither a
// second run nor a revert may touch it; both name the run's PID.
func TestJournalLockedByLiveRun(t *testing.T) {
	dir, a, _ := setupFiles(t)
	path := filepath.Join(dir, "journal")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)
	defer j.Close()
	r := &tuning.Runner{Journal: j, Reverters: tuning.Reverters{tuning.UndoFile: tuning.RevertFile}, Keep: true}
	_, err = r.Run(context.Background(), []tuning.Step{fileStep("threads", a, `"200"`, `"7"`)})
	require.NoError(t, err)
	before := read(t, path)

	pid := "PID " + strconv.Itoa(os.Getpid())
	_, err = tuning.RevertJournal(context.Background(), path, tuning.Reverters{tuning.UndoFile: tuning.RevertFile})
	require.ErrorIs(t, err, tuning.ErrJournalLocked)
	assert.ErrorContains(t, err, pid)
	assert.Contains(t, read(t, a), `"7"`, "the live run's change stays")

	_, err = tuning.CreateJournal(path)
	require.ErrorIs(t, err, tuning.ErrJournalLocked)
	assert.ErrorContains(t, err, pid)
	assert.Equal(t, before, read(t, path), "neither touched the journal")

	require.NoError(t, j.Close())
	steps, err := tuning.RevertJournal(context.Background(), path, tuning.Reverters{tuning.UndoFile: tuning.RevertFile})
	require.NoError(t, err, "a closed journal's lock is free")
	assert.Equal(t, []string{"threads"}, steps)
}

// TestJournalTornTailThenAppend: a journal that ends in a torn line (a
// crash mid-write, or the full disk of issue 24) is appended to on a new
// line, and a journal an older version glued onto a torn line still reads.
func TestJournalTornTailThenAppend(t *testing.T) {
	path, a, b, data, begin, _ := keptJournal(t)
	// A second step's begin torn at the end, as a full disk left it.
	torn := []byte(`{"seq":2,"op":"begin","step":"threads","undo":[{"kind":"file","data":{"path":"x","content":"QUJD`)
	require.NoError(t, os.WriteFile(path, append(append([]byte{}, data...), torn...), 0o600))

	steps, err := tuning.RevertJournal(context.Background(), path, tuning.Reverters{tuning.UndoFile: tuning.RevertFile})
	require.ErrorIs(t, err, tuning.ErrTornJournal, "the torn threads record is reported")
	assert.ErrorContains(t, err, `step "threads" (change 2)`)
	assert.Equal(t, []string{"access-log"}, steps)
	assert.Equal(t, origA, read(t, a))
	assert.Equal(t, origB, read(t, b))
	entries, err := tuning.ReadJournal(path)
	require.NoError(t, err, "the revert's record did not glue to the torn line")
	require.Len(t, entries, 2)
	assert.True(t, entries[0].Reverted)

	// What an older version wrote: the "reverted" record glued to the torn
	// line ("line 4: invalid character" for every later run).
	glued := append(append(append([]byte{}, data...), torn...), []byte(`{"seq":1,"op":"reverted","time":"2026-12-03T00:00:00Z"}`+"\n")...)
	require.NoError(t, os.WriteFile(path, glued, 0o600))
	entries, err = tuning.ReadJournal(path)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.True(t, entries[0].Reverted, "the glued record is read")
	assert.True(t, entries[1].Torn)
	assert.Equal(t, "threads", entries[1].Step)
	_ = begin
}
