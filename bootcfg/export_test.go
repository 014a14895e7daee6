package bootcfg

// The shell parser's syntax tree, for the external tests that check it
// against /bin/sh. It is not part of the API.
type (
	QuoteStyle    = quoteStyle
	ExpansionKind = expansionKind
	DynamicError  = dynamicError
)

const (
	QuoteNone   = quoteNone
	QuoteDouble = quoteDouble
	QuoteSingle = quoteSingle
	QuoteMixed  = quoteMixed

	ExpandCommand    = expandCommand
	ExpandBacktick   = expandBacktick
	ExpandVariable   = expandVariable
	ExpandSpecial    = expandSpecial
	ExpandArithmetic = expandArithmetic
	ExpandTilde      = expandTilde
)

// Assignments returns the assignments f performs, in order.
func Assignments(f *File) []*assignment { return f.assignments }

// Commands returns the command words f runs, in order.
func Commands(f *File) []shellCommand { return f.commands }

// Origin returns the assignment that sets v.
func Origin(v Value) *assignment { return v.origin }

// Chain returns the assignments that build v.
func Chain(v Value) []*assignment { return v.chain }
