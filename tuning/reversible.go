package tuning

import (
	"context"
	"encoding/json"
	"fmt"
)

// A Reversible is one change to a host as a value, in the shape every
// nettune package gives its changes (nic's channel counts, tomcatconf's
// server.xml edit and unit drop-in, numa's pin): Describe says exactly
// what it does, Apply makes it, Verify re-reads what Apply wrote, and Undo
// puts back the state recorded when the value was planned. The value
// itself, marshalled as JSON, is what a journal must keep to undo it after
// a crash: ChangeFor journals it and AddReverter's function undoes it from
// the journal.
// Undo must be idempotent, like a Reverters function.
type Reversible interface {
	Describe() string
	Apply(ctx context.Context) error
	Verify(ctx context.Context) error
	Undo(ctx context.Context) error
}

// changeOf adapts r to a Step's Change: Describe, Apply and Verify are
// r's, and the one undo record is r itself, as JSON, under kind.
func changeOf(kind string, r Reversible) (*Change, error) {
	undo, err := NewUndo(kind, r)
	if err != nil {
		return nil, err
	}
	return &Change{Describe: r.Describe(), Undo: []Undo{undo}, Apply: r.Apply, Verify: r.Verify}, nil
}

// Kinded is a Reversible that names its journal kind: one kind for every
// value of its type, given by the package that owns the type, so that a
// program journals, reverts and verifies it without a kind string of its
// own (ChangeFor, AddReverter, and tuning/persist's AddVerifier).
type Kinded interface {
	Reversible
	Kind() string
}

// ChangeFor adapts r to a Step's Change: Describe, Apply and Verify are
// r's, and the one undo record is r itself, as JSON, under r's kind.
// Register its type with AddReverter in the Runner's Reverters (and for
// RevertJournal).
func ChangeFor(r Kinded) (*Change, error) { return changeOf(r.Kind(), r) }

// kindOf returns the journal kind of T's records.
func kindOf[T any, P interface {
	*T
	Kinded
}]() string {
	var v T
	return P(&v).Kind()
}

// AddReverter registers, in rev under T's kind, the revert function for
// journal records that ChangeFor wrote from a T (or a *T): it decodes the
// record into a new T and calls its Undo. For example:
//
//	tuning.AddReverter[nic.ChannelsEdit](rev)
func AddReverter[T any, P interface {
	*T
	Kinded
}](rev Reverters) {
	rev[kindOf[T, P]()] = revertAs[T, P]()
}

// revertAs returns the revert function AddReverter registers.
func revertAs[T any, P interface {
	*T
	Reversible
}]() func(context.Context, json.RawMessage) error {
	return func(ctx context.Context, data json.RawMessage) error {
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("tuning: undo record %T: %w", v, err)
		}
		return P(&v).Undo(ctx)
	}
}
