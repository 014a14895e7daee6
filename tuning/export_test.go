package tuning

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
