package tuning

// Names the black-box tests use that an importer does not need.
type LimitError = limitError

var (
	ErrLimit   = errLimit
	RevertFile = revertFile
)

const UndoFile = undoFile
