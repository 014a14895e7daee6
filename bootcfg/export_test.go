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

// Helpers the external tests call directly.
var (
	KeyEqual            = keyEqual
	IOMMUFromGroupTypes = iommuFromGroupTypes
)

// FlushUnknown is the policy of a passthrough domain or one not reported.
const FlushUnknown = flushUnknown

// IOMMUGroupTypes reads /sys/kernel/iommu_groups/*/type under h's root.
func IOMMUGroupTypes(h *Host) ([]string, error) { return h.iommuGroupTypes() }

// KernelLog reads /dev/kmsg under h's root.
func KernelLog(h *Host) (string, error) { return h.kernelLog() }
