package tuning

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nettune/nettune/internal/lockfile"
)

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

// entry is one line of the journal file (JSON Lines). Seq comes first, so
// a record cut short still names its change, and every record starts with
// `{"seq":`.
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
	Seq      int // 0 when its record was cut before the number
	Step     string
	Undo     []Undo
	Applied  bool // the step's Apply returned without error
	Reverted bool
	Began    time.Time
	Line     int // the journal line of the step's begin record
	// Torn is true when the begin record was cut short (a crash or a full
	// disk while it was written): Step, Seq and Undo hold what was read
	// whole, and Undo only records that were complete.
	Torn bool
	// UndoCut is true for a Torn record cut before its undo list ended:
	// what the lost records would undo is unknown.
	UndoCut bool
}

// TornRecordError reports a step record cut short, and what RevertJournal
// could do with it.
type TornRecordError struct {
	Path     string
	Line     int
	Seq      int    // 0 when unreadable
	Step     string // "" when unreadable
	Whole    int    // undo records read whole
	UndoCut  bool   // records after those were lost
	Reverted bool   // the whole records were reverted
}

func (e *TornRecordError) Error() string {
	what := "an unreadable record (it may be a step's begin record)"
	if e.Step != "" {
		what = fmt.Sprintf("the record of step %q (change %d)", e.Step, e.Seq)
	} else if e.Seq > 0 {
		what = fmt.Sprintf("the record of change %d (step name lost)", e.Seq)
	}
	msg := fmt.Sprintf("tuning: journal %s line %d: %s was cut short while it was written (a crash or a full disk)", e.Path, e.Line, what)
	switch {
	case !e.UndoCut && e.Reverted:
		msg += fmt.Sprintf("; its %d undo record(s) were whole and are reverted", e.Whole)
	case e.Whole > 0 && e.Reverted:
		msg += fmt.Sprintf("; reverted from its %d whole undo record(s), the rest of its undo list is lost: check by hand what the step changes", e.Whole)
	case e.UndoCut:
		msg += ": none of its undo records is readable, so nothing of it was reverted; check by hand what the step changes, then remove the journal"
	}
	return msg
}

// Is makes errors.Is(err, ErrTornJournal) true.
func (e *TornRecordError) Is(target error) bool { return target == ErrTornJournal }

// Journal is an append-only, fsynced record of the changes a run makes,
// written before each change, so RevertJournal can put the host back from
// another process after a crash or a kill. Its owner holds an exclusive
// flock on the file from CreateJournal to Close (the kernel drops it when
// the owner dies), and the first record names the owner's PID. It is safe
// for concurrent use.
type Journal struct {
	mu     sync.Mutex
	path   string
	f      *os.File
	seq    int
	off    int64 // end of the last whole record
	needNL bool  // the file ends in a torn record: start the next on a new line
}

// CreateJournal starts a new journal at path and locks it for the
// journal's lifetime. It refuses, leaving the file alone, a journal locked
// by a live run (ErrJournalLocked, naming its PID), one with changes not
// yet reverted (ErrPendingJournal), and one that is empty or torn where
// nothing can be read (ErrTornJournal): each needs RevertJournal or a look
// by hand first. A fully reverted old journal is replaced. The check and
// the replacement happen under the lock, so two runs cannot both pass it.
func CreateJournal(path string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("tuning: journal directory: %w", err)
	}
	existed := false
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		existed = true
		f, err = os.OpenFile(path, os.O_RDWR, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("tuning: create journal: %w", err)
	}
	fail := func(err error) (*Journal, error) {
		f.Close()
		return nil, err
	}
	if err := lock(f, path); err != nil {
		return fail(err)
	}
	if existed {
		data, err := io.ReadAll(f)
		if err != nil {
			return fail(fmt.Errorf("tuning: read journal %s: %w", path, err))
		}
		old, err := parseJournal(path, data)
		if err != nil {
			return fail(err)
		}
		if p := pending(old); len(p) > 0 {
			return fail(fmt.Errorf("%w: %s records %d change(s) from an earlier run (first: step %q); revert them first (the study's -revert)", ErrPendingJournal, path, len(p), p[len(p)-1].Step))
		}
		if err := f.Truncate(0); err != nil {
			return fail(fmt.Errorf("tuning: replace journal %s: %w", path, err))
		}
	}
	j := &Journal{path: path, f: f}
	if err := j.append(entry{Op: "open", PID: os.Getpid()}); err != nil {
		return fail(err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return j, nil
}

// lock takes the journal's flock, or says which live run holds it.
func lock(f *os.File, path string) error {
	err := lockfile.TryLock(f)
	var held *lockfile.HeldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &held) && held.PID > 0:
		return fmt.Errorf("%w: %s is locked by PID %d, the run that writes it; let it finish or stop it (SIGINT reverts its changes), then try again", ErrJournalLocked, path, held.PID)
	case errors.As(err, &held):
		return fmt.Errorf("%w: %s is locked by a run that has not written its PID yet; try again", ErrJournalLocked, path)
	default:
		return fmt.Errorf("tuning: lock journal %s: %w", path, err)
	}
}

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

// Close closes the journal file, which releases its lock. The file stays
// on disk.
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

// append writes one record at the end of the last whole one and fsyncs
// it. A write that fails (a full disk) is cut back to that end, so the
// file never ends in a torn line; should the cut fail too, the next record
// starts on a new line, so a torn tail never glues to it.
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
	rec := make([]byte, 0, len(b)+2)
	if j.needNL {
		rec = append(rec, '\n')
	}
	rec = append(append(rec, b...), '\n')
	n, err := j.f.WriteAt(rec, j.off)
	if err != nil {
		if terr := j.f.Truncate(j.off); terr != nil {
			j.off += int64(n)
			j.needNL = n > 0 || j.needNL
			return fmt.Errorf("tuning: write journal %s: %w (cutting the torn record back also failed: %v; the next record starts on a new line)", j.path, err, terr)
		}
		j.f.Sync()
		return fmt.Errorf("tuning: write journal %s: %w (the record was cut back: the journal ends at its last whole record)", j.path, err)
	}
	j.off += int64(n)
	j.needNL = false
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("tuning: fsync journal %s: %w", j.path, err)
	}
	return nil
}

// ReadJournal reads the journal at path and returns its changes in the
// order they began. It takes no lock: a live run's journal can be read.
// A step record cut short (a crash or a full disk while it was written)
// is returned with Torn set and what was read whole of it; a cut
// "applied" or "reverted" record is ignored (the change then counts as
// not applied, or not reverted, which reverting again makes right). An
// empty journal, or one whose first record is cut, is an error matching
// ErrTornJournal; any other malformed line is an error naming the line.
func ReadJournal(path string) ([]JournalEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tuning: read journal: %w", err)
	}
	return parseJournal(path, data)
}

// recordStart is how every record begins (entry's first field is Seq).
var recordStart = []byte(`{"seq":`)

func parseJournal(path string, data []byte) ([]JournalEntry, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: %s is empty (%d bytes): it holds not even the record a run writes first, so a run stopped before its first write or the file lost its content; nothing in it can be reverted: check the host by hand, then remove it", ErrTornJournal, path, len(data))
	}
	var out []JournalEntry
	index := map[int]int{}
	first := true
	maxSeq := 0
	torn := func(line int, e entry, undoCut bool) {
		if first {
			return
		}
		if _, ok := index[e.Seq]; ok && e.Seq > 0 {
			return // a cut "applied" or "reverted" of a known change
		}
		if e.Op != "" && e.Op != "begin" || e.Seq > 0 && e.Seq <= maxSeq {
			return // a cut "open", "applied" or "reverted"
		}
		if e.Seq > 0 {
			index[e.Seq] = len(out)
			maxSeq = e.Seq
		}
		out = append(out, JournalEntry{Seq: e.Seq, Step: e.Step, Undo: e.Undo, Line: line, Torn: true, UndoCut: undoCut})
	}
	for n, raw := range bytes.Split(data, []byte{'\n'}) {
		line := n + 1
		text := bytes.TrimSpace(raw)
		if len(text) == 0 {
			continue
		}
		var recs []entry
		var e entry
		if err := json.Unmarshal(text, &e); err == nil {
			recs = append(recs, e)
		} else if te, cut, ok := decodeTorn(text); ok {
			if first {
				return nil, fmt.Errorf("%w: %s line %d: its first record is cut short (%q), so the journal says nothing that can be trusted; check the host by hand, then remove it", ErrTornJournal, path, line, clip(text))
			}
			torn(line, te, cut)
			continue
		} else if te, cut, whole, ok := splitGlued(text); ok {
			// A torn record with the next one appended to it, as
			// journals written before appends were cut back can hold.
			if first {
				return nil, fmt.Errorf("%w: %s line %d: its first record is cut short (%q), so the journal says nothing that can be trusted; check the host by hand, then remove it", ErrTornJournal, path, line, clip(text))
			}
			torn(line, te, cut)
			recs = append(recs, whole)
		} else {
			return nil, fmt.Errorf("tuning: journal %s line %d: %v (expected one JSON object per line)", path, line, err)
		}
		for _, e := range recs {
			first = false
			switch e.Op {
			case "open":
			case "begin":
				index[e.Seq] = len(out)
				maxSeq = max(maxSeq, e.Seq)
				out = append(out, JournalEntry{Seq: e.Seq, Step: e.Step, Undo: e.Undo, Began: e.Time, Line: line})
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
	}
	return out, nil
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// splitGlued finds, in a line that is not one record, a torn record
// followed by a whole one: the last `{"seq":` after which the rest parses.
func splitGlued(text []byte) (torn entry, undoCut bool, whole entry, ok bool) {
	for i := bytes.LastIndex(text, recordStart); i > 0; i = bytes.LastIndex(text[:i], recordStart) {
		var w entry
		if json.Unmarshal(text[i:], &w) != nil {
			continue
		}
		if t, cut, tornOK := decodeTorn(text[:i]); tornOK {
			return t, cut, w, true
		}
	}
	return entry{}, false, entry{}, false
}

// decodeTorn reads what a record cut short holds: ok is true when text is
// the start of a JSON object that ends too early (not garbage). A value is
// kept only when it is followed by more input, because a number at the
// cut may itself be cut ("12" read as "1"); undo records are kept only
// when whole. undoCut is true unless the undo list was read to its end or
// the cut came after it.
func decodeTorn(text []byte) (e entry, undoCut bool, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(text))
	cut := func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) }
	atEnd := func() bool { return dec.InputOffset() >= int64(len(text)) }
	undoCut = true
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return e, true, false
	}
	seenUndo := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return e, undoCut, cut(err)
		}
		key, isKey := tok.(string)
		if !isKey {
			return e, undoCut, false // '}': a whole object, not a torn one
		}
		if seenUndo || key == "time" || key == "pid" || key == "note" {
			undoCut = false // the undo list is behind us (or was empty)
		}
		switch key {
		case "seq":
			var v int
			if err := dec.Decode(&v); err != nil || atEnd() {
				return e, undoCut, err == nil || cut(err)
			}
			e.Seq = v
		case "op", "step":
			var v string
			if err := dec.Decode(&v); err != nil {
				return e, undoCut, cut(err)
			}
			if key == "op" {
				e.Op = v
			} else {
				e.Step = v
			}
		case "undo":
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return e, undoCut, err != nil && cut(err)
			}
			for dec.More() {
				var u Undo
				if err := dec.Decode(&u); err != nil {
					return e, undoCut, cut(err)
				}
				e.Undo = append(e.Undo, u)
			}
			if _, err := dec.Token(); err != nil {
				return e, undoCut, cut(err)
			}
			seenUndo = true
			undoCut = false
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return e, undoCut, cut(err)
			}
		}
	}
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
