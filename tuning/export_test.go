package tuning

import (
	"context"
	"encoding/json"
)

// Names the black-box tests use that an importer does not need.
type LimitError = limitError

var (
	ErrLimit   = errLimit
	RevertFile = revertFile
)

const UndoFile = undoFile

// KindOf is kindOf, for the tests of AddReverter's kinds.
func KindOf[T any, P interface {
	*T
	Kinded
}]() string {
	return kindOf[T, P]()
}

// ChangeOf is changeOf, for the tests of a Reversible without a kind of
// its own.
func ChangeOf(kind string, r Reversible) (*Change, error) { return changeOf(kind, r) }

// RevertAs is revertAs, for the same tests.
func RevertAs[T any, P interface {
	*T
	Reversible
}]() func(context.Context, json.RawMessage) error {
	return revertAs[T, P]()
}
