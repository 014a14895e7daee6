package persist

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/tuning"
)

// ErrNotVerifiable is matched by errors.Is when a journal record cannot be
// checked against the host: no VerifyFunc is registered for its kind, or
// the record holds only the state before its change (what Undo needs, as
// records written before the state set was kept) and so says nothing of
// what the host should hold now.
var ErrNotVerifiable = errors.New("persist: journal record cannot be verified")

// A VerifyFunc checks one journal record of its kind against the host,
// reading only, the read-only twin of a tuning.Reverters function: it returns
// what the record says the host holds, on one line, and nil when the host
// holds it, an error saying what it found otherwise (or one matching
// ErrNotVerifiable when it cannot tell).
type VerifyFunc func(ctx context.Context, data json.RawMessage) (expected string, err error)

// Verifiers maps a tuning.Undo's Kind to the VerifyFunc of its records,
// as tuning.Reverters maps it to the function that undoes them; register
// one for every kind the Reverters hold (AddVerifier for an AddReverter
// kind).
type Verifiers map[string]VerifyFunc

// An Expecter says, on one line, what its Verify checks that the host
// holds. A tuning.Reversible whose Describe is long (a diff, whose first line is
// its header) has one; Expected uses it.
type Expecter interface {
	Expected() string
}

// Expected is what r's Verify checks, on one line: r's Expected when it
// is an Expecter, else the first line of its Describe.
func Expected(r tuning.Reversible) string {
	if e, ok := r.(Expecter); ok {
		return e.Expected()
	}
	first, _, _ := strings.Cut(strings.TrimSpace(r.Describe()), "\n")
	return first
}

// AddVerifier registers, in ver under T's kind, the VerifyFunc for
// journal records that tuning.ChangeFor wrote from a T (or a *T), as
// tuning.AddReverter registers their revert function: it decodes the
// record into a new T and calls its Verify, which only reads.
func AddVerifier[T any, P interface {
	*T
	tuning.Kinded
}](ver Verifiers) {
	var v T
	ver[P(&v).Kind()] = verifyAs[T, P]()
}

// verifyAs returns the VerifyFunc AddVerifier registers.
func verifyAs[T any, P interface {
	*T
	tuning.Reversible
}]() VerifyFunc {
	return func(ctx context.Context, data json.RawMessage) (string, error) {
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return "", fmt.Errorf("%w: undo record %T: %v", ErrNotVerifiable, v, err)
		}
		return Expected(P(&v)), P(&v).Verify(ctx)
	}
}

// Verifiers returns the VerifyFuncs of package tuning's own kinds, bound
// to h's root as tuning.Host.Reverters is: "file" (the bytes
// tuning.FileChange wrote), "cpu-online" (exactly the CPUs
// KeepOnlineChange kept online) and "sysctl" (the value SysctlChange
// set), each through tuning.Host.VerifyUndo. A record from before the
// state set was journaled matches ErrNotVerifiable.
func (h *Host) Verifiers() Verifiers {
	ver := Verifiers{}
	for kind := range h.live.Reverters() {
		ver[kind] = func(ctx context.Context, data json.RawMessage) (string, error) {
			want, ok, err := h.live.VerifyUndo(ctx, tuning.Undo{Kind: kind, Data: data})
			if !ok {
				return want, fmt.Errorf("%w: %v", ErrNotVerifiable, err)
			}
			return want, err
		}
	}
	return ver
}

// A RecordCheck is one undo record of a change a journal holds in force
// (begun, not reverted), checked against the host by VerifyJournal.
type RecordCheck struct {
	// Seq, Step and Kind name the change and the record; Kind is "" for
	// a change that journaled no undo record (NoRecord).
	Seq        int
	Step, Kind string
	// Expected is what the record says the host holds, on one line (""
	// when it cannot be told).
	Expected string
	// Err is nil when the host holds it; one matching ErrNotVerifiable
	// when that cannot be told, or tuning.ErrTornJournal for a record cut
	// short (a *tuning.TornRecordError);
	// otherwise what was found instead.
	Err error
	// Interrupted is true for a change that began and never finished
	// applying (a run killed part-way): the host holds whatever the kill
	// left, which tuning.RevertJournal undoes.
	Interrupted bool
	// NoRecord is true for a change that journaled no undo record: it
	// changed nothing the journal can put back or check.
	NoRecord bool
}

// VerifyJournal checks, reading only, every undo record of the changes
// the journal at path holds in force (begun and not reverted: a run that
// kept its changes, persistent writes, or a crash's leftovers), in the
// order they began, each through the VerifyFunc of its kind in ver. A
// kind ver lacks gives a check whose Err matches ErrNotVerifiable.
//
// It takes no lock and changes nothing (not even the journal), but
// refuses a journal a live run holds (tuning.ErrJournalLocked, naming
// its PID, read from /proc/locks): that run is changing and reverting
// what it records. A journal that cannot be read is an error as
// tuning.ReadJournal gives it (tuning.ErrTornJournal for an empty one).
func VerifyJournal(ctx context.Context, path string, ver Verifiers) ([]RecordCheck, error) {
	entries, err := tuning.ReadJournal(path)
	if err != nil {
		return nil, err
	}
	if pid, err := journalHolder(hostfs.Default().Proc("locks"), path); err == nil && pid != 0 {
		return nil, fmt.Errorf("%w: %s is locked by PID %d, the run that writes it: its changes are being made and reverted; verify once it ends", tuning.ErrJournalLocked, path, pid)
	}
	var out []RecordCheck
	for _, e := range entries {
		if e.Reverted {
			continue
		}
		base := RecordCheck{Seq: e.Seq, Step: e.Step, Interrupted: !e.Applied && !e.Torn}
		if e.Torn {
			c := base
			c.Err = &tuning.TornRecordError{Path: path, Line: e.Line, Seq: e.Seq, Step: e.Step, Whole: len(e.Undo), UndoCut: e.UndoCut}
			out = append(out, c)
			continue
		}
		if len(e.Undo) == 0 {
			c := base
			c.NoRecord = true
			out = append(out, c)
			continue
		}
		for _, u := range e.Undo {
			c := base
			c.Kind = u.Kind
			fn := ver[u.Kind]
			if fn == nil {
				c.Err = fmt.Errorf("%w: no VerifyFunc for undo kind %q", ErrNotVerifiable, u.Kind)
			} else {
				c.Expected, c.Err = fn(ctx, u.Data)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// parseLocks finds, in /proc/locks, the PID of an FLOCK held on the file
// of device major:minor and inode ino. A line reads "1: FLOCK  ADVISORY
// WRITE 1234 00:2e:5678 0 EOF" (the device in hex); a waiter's reads
// "1: -> FLOCK …" and is skipped.
func parseLocks(r io.Reader, major, minor uint32, ino uint64) (int, error) {
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" {
			continue
		}
		if f[5] == want {
			pid, err := strconv.Atoi(f[4])
			if err != nil {
				return 0, fmt.Errorf("persist: /proc/locks line %q: PID %q is not a number", sc.Text(), f[4])
			}
			return pid, nil
		}
	}
	return 0, sc.Err()
}
