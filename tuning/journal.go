package tuning

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ErrPendingJournal is matched by errors.Is when a journal still records
// changes that were applied and never reverted: a previous run crashed or
// was killed, and its changes must be reverted before a new run starts.
var ErrPendingJournal = errors.New("tuning: journal has unreverted changes")

// Undo is what a step saves in the journal, before it changes anything, to
// put the host back: a Kind that names the Reverters entry to call and the
// JSON Data that function needs (a file's original bytes, a CPU online
// snapshot, channel counts, IRQ affinities, a sysctl's value).
type Undo struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// NewUndo marshals v as the Data of an Undo of the given kind.
func NewUndo(kind string, v any) (Undo, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Undo{}, fmt.Errorf("tuning: undo record %q: %w", kind, err)
	}
	return Undo{Kind: kind, Data: b}, nil
}

// entry is one line of the journal file (JSON Lines).
type entry struct {
	Seq  int       `json:"seq"`
	Op   string    `json:"op"` // "open", "begin", "applied", "reverted"
	Step string    `json:"step,omitempty"`
	Undo []Undo    `json:"undo,omitempty"`
	Time time.Time `json:"time"`
	PID  int       `json:"pid,omitempty"`
	Note string    `json:"note,omitempty"`
}

// JournalEntry is a change the journal records: a step that began (its
// undo records were saved) and whether it finished applying and whether it
// has been reverted since.
type JournalEntry struct {
	Seq      int
	Step     string
	Undo     []Undo
	Applied  bool // the step's Apply returned without error
	Reverted bool
	Began    time.Time
}

// Journal is an append-only, fsynced record of the changes a run makes,
// written before each change, so RevertJournal can put the host back from
// another process after a crash or a kill. It is safe for concurrent use.
type Journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	seq  int
}

// CreateJournal starts a new journal at path. If a journal already exists
// there with changes not yet reverted, it returns an error matching
// ErrPendingJournal and leaves that file alone; a fully reverted old
// journal is replaced.
func CreateJournal(path string) (*Journal, error) {
	if old, err := ReadJournal(path); err == nil {
		if p := pending(old); len(p) > 0 {
			return nil, fmt.Errorf("%w: %s records %d change(s) from an earlier run (first: step %q); revert them first (the study's -revert)", ErrPendingJournal, path, len(p), p[len(p)-1].Step)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("tuning: journal directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("tuning: create journal: %w", err)
	}
	j := &Journal{path: path, f: f}
	if err := j.append(entry{Op: "open", PID: os.Getpid()}); err != nil {
		f.Close()
		return nil, err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return j, nil
}

// openJournal opens an existing journal to append to it (RevertJournal
// uses it to record what it reverted).
func openJournal(path string) (*Journal, error) {
	old, err := ReadJournal(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("tuning: open journal: %w", err)
	}
	j := &Journal{path: path, f: f}
	for _, e := range old {
		j.seq = max(j.seq, e.Seq)
	}
	return j, nil
}

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

// Close closes the journal file. The file stays on disk.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// Begin records, durably, that step is about to change the host and how
// to undo it. It returns the entry's sequence number for Applied and
// Reverted.
func (j *Journal) Begin(step string, undo []Undo) (int, error) {
	j.mu.Lock()
	j.seq++
	seq := j.seq
	j.mu.Unlock()
	return seq, j.append(entry{Seq: seq, Op: "begin", Step: step, Undo: undo})
}

// Applied records that the change seq finished applying.
func (j *Journal) Applied(seq int) error { return j.append(entry{Seq: seq, Op: "applied"}) }

// Reverted records that the change seq was undone.
func (j *Journal) Reverted(seq int) error { return j.append(entry{Seq: seq, Op: "reverted"}) }

func (j *Journal) append(e entry) error {
	e.Time = time.Now().UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("tuning: journal %s: %w", j.path, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("tuning: journal %s is closed", j.path)
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("tuning: write journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("tuning: fsync journal %s: %w", j.path, err)
	}
	return nil
}

// ReadJournal reads the journal at path and returns its changes in the
// order they began. A last line cut short by a crash is ignored; any
// other malformed line is an error naming the line.
func ReadJournal(path string) ([]JournalEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tuning: read journal: %w", err)
	}
	return parseJournal(path, data)
}

func parseJournal(path string, data []byte) ([]JournalEntry, error) {
	var out []JournalEntry
	index := map[int]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	complete := len(data) == 0 || data[len(data)-1] == '\n'
	total := bytes.Count(data, []byte{'\n'})
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var e entry
		if err := json.Unmarshal(text, &e); err != nil {
			if !complete && line == total+1 {
				break // torn final write
			}
			return nil, fmt.Errorf("tuning: journal %s line %d: %v (expected one JSON object per line)", path, line, err)
		}
		switch e.Op {
		case "open":
		case "begin":
			index[e.Seq] = len(out)
			out = append(out, JournalEntry{Seq: e.Seq, Step: e.Step, Undo: e.Undo, Began: e.Time})
		case "applied", "reverted":
			i, ok := index[e.Seq]
			if !ok {
				return nil, fmt.Errorf("tuning: journal %s line %d: %q for unknown change %d", path, line, e.Op, e.Seq)
			}
			if e.Op == "applied" {
				out[i].Applied = true
			} else {
				out[i].Reverted = true
			}
		default:
			return nil, fmt.Errorf("tuning: journal %s line %d: unknown op %q (expected open, begin, applied or reverted)", path, line, e.Op)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tuning: journal %s: %w", path, err)
	}
	return out, nil
}

// pending returns the changes that began and were not reverted, newest
// first: the order to revert them in. A change that began but did not
// finish applying is included, because it may have half happened; revert
// functions must therefore be idempotent.
func pending(entries []JournalEntry) []JournalEntry {
	var p []JournalEntry
	for i := len(entries) - 1; i >= 0; i-- {
		if !entries[i].Reverted {
			p = append(p, entries[i])
		}
	}
	return p
}
