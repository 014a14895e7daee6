package cpuset

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MaxID is the largest CPU id a Set holds. The kernel's NR_CPUS tops out at
// 8192 today; the bound keeps a hostile or corrupted input from allocating
// without limit.
const MaxID = 1<<16 - 1

// ErrSyntax is matched by errors.Is for every parse failure.
var ErrSyntax = errors.New("cpuset: invalid cpu list")

// ParseError describes a cpu list that could not be parsed. Source, when
// set, names where the text came from (usually a sysfs path).
type ParseError struct {
	Input  string // the text as given
	Source string // file or flag the text came from; may be empty
	Reason string // what is wrong, and the expected form
}

func (e *ParseError) Error() string {
	if e.Source != "" {
		return fmt.Sprintf("cpuset: %q in %s: %s", e.Input, e.Source, e.Reason)
	}
	return fmt.Sprintf("cpuset: %q: %s", e.Input, e.Reason)
}

// Is reports whether target is ErrSyntax.
func (e *ParseError) Is(target error) bool { return target == ErrSyntax }

// Set is an immutable set of CPU ids. The zero value is the empty set.
type Set struct {
	words []uint64 // bit i of words[i/64] is CPU i; no trailing zero words
}

// Of returns the set holding ids. It panics on a negative id or one above
// MaxID, which is a programming error rather than bad input.
func Of(ids ...int) Set {
	var w []uint64
	for _, id := range ids {
		if id < 0 || id > MaxID {
			panic(fmt.Sprintf("cpuset.Of: cpu id %d out of range 0-%d", id, MaxID))
		}
		w = setBit(w, id)
	}
	return Set{words: trim(w)}
}

// Range returns the set lo..hi inclusive; empty when hi < lo. It panics on
// ids outside 0..MaxID.
func Range(lo, hi int) Set {
	if hi < lo {
		return Set{}
	}
	if lo < 0 || hi > MaxID {
		panic(fmt.Sprintf("cpuset.Range: %d-%d out of range 0-%d", lo, hi, MaxID))
	}
	var w []uint64
	for id := lo; id <= hi; id++ {
		w = setBit(w, id)
	}
	return Set{words: w}
}

// Parse parses a kernel cpu list such as "0-7,96-103", "0,2,4" or "".
// Surrounding white space, a trailing newline and trailing NUL bytes (as
// some captured sysfs trees have) are ignored. The kernel's stride form
// "0-15:2/4" (use 2 of every 4) is accepted too.
func Parse(s string) (Set, error) { return ParseNamed(s, "") }

// ParseFor is Parse for a public package's ParseCPUList: its error starts
// with pkg ("numa: cpuset: invalid cpu list ...").
func ParseFor(pkg, s string) (Set, error) {
	set, err := Parse(s)
	if err != nil {
		return Set{}, fmt.Errorf("%s: %w", pkg, err)
	}
	return set, nil
}

// MustParse is Parse for constant input; it panics on error.
func MustParse(s string) Set {
	set, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return set
}

// ParseNamed is Parse with the source of the text (a file path, a flag name)
// carried into the error message.
func ParseNamed(s, source string) (Set, error) {
	text := trimValue(s)
	if text == "" {
		return Set{}, nil
	}
	fail := func(reason string) (Set, error) {
		return Set{}, &ParseError{Input: strings.TrimRight(s, "\x00\n"), Source: source, Reason: reason}
	}
	var w []uint64
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return fail("empty element; expected a list like 0-7,96-103")
		}
		if strings.HasPrefix(part, "-") {
			return fail(fmt.Sprintf("negative cpu number in %q", part))
		}
		rng, stride, hasStride := strings.Cut(part, ":")
		loStr, hiStr, isRange := strings.Cut(rng, "-")
		lo, err := parseID(loStr)
		if err != nil {
			return fail(err.Error())
		}
		hi := lo
		if isRange {
			if hi, err = parseID(hiStr); err != nil {
				return fail(err.Error())
			}
			if hi < lo {
				return fail(fmt.Sprintf("range end before start in %q", part))
			}
		}
		used, group := 1, 1
		if hasStride {
			if !isRange {
				return fail(fmt.Sprintf("stride %q needs a range like 0-15:2/4", part))
			}
			u, g, ok := strings.Cut(stride, "/")
			if !ok {
				return fail(fmt.Sprintf("stride in %q must be used/group like 2/4", part))
			}
			if used, err = strconv.Atoi(u); err != nil || used < 1 {
				return fail(fmt.Sprintf("stride in %q must be used/group with positive numbers", part))
			}
			if group, err = strconv.Atoi(g); err != nil || group < used {
				return fail(fmt.Sprintf("stride in %q must have group >= used", part))
			}
		}
		for id := lo; id <= hi; id++ {
			if (id-lo)%group < used {
				w = setBit(w, id)
			}
		}
	}
	return Set{words: trim(w)}, nil
}

// trimValue removes what surrounds a value read from sysfs: white space,
// a trailing newline and trailing NUL bytes, in any order.
func trimValue(s string) string {
	return strings.Trim(s, " \t\n\v\f\r\x00")
}

func parseID(s string) (int, error) {
	if s == "" {
		return 0, errors.New("missing cpu number; expected a list like 0-7,96-103")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			if c == '-' {
				return 0, fmt.Errorf("negative or malformed cpu number %q", s)
			}
			return 0, fmt.Errorf("cpu number %q is not a decimal integer", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxID {
		return 0, fmt.Errorf("cpu number %s above the maximum %d", s, MaxID)
	}
	return n, nil
}

func setBit(w []uint64, id int) []uint64 {
	i := id / 64
	for len(w) <= i {
		w = append(w, 0)
	}
	w[i] |= 1 << uint(id%64)
	return w
}

func trim(w []uint64) []uint64 {
	for len(w) > 0 && w[len(w)-1] == 0 {
		w = w[:len(w)-1]
	}
	if len(w) == 0 {
		return nil
	}
	return w
}

// String formats s as the kernel does: ascending, with runs of two or more
// consecutive ids collapsed to "lo-hi", no spaces. The empty set is "".
func (s Set) String() string { return s.list(false) }

// Lscpu formats s as lscpu (util-linux) prints CPU lists: ascending, a run
// of three or more ids as "lo-hi" and a run of two as two ids
// ("0,1,8,9,16-23"), where String writes a pair as "0-1". The empty set is
// "". Parse reads the result back.
func (s Set) Lscpu() string { return s.list(true) }

// list writes the ids in ascending runs, a run as "lo-hi"; with
// splitPairs a run of two is written as two ids.
func (s Set) list(splitPairs bool) string {
	var b strings.Builder
	ids := s.IDs()
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			sep := byte('-')
			if splitPairs && j == i+1 {
				sep = ','
			}
			b.WriteByte(sep)
			b.WriteString(strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Spaced formats s as numactl lists a node's cpus: every id, separated by
// single spaces ("0 1 2 3").
func (s Set) Spaced() string {
	ids := s.IDs()
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, " ")
}

// MarshalText implements encoding.TextMarshaler with the String form.
func (s Set) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (s *Set) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*s = p
	return nil
}

// IDs returns the ids in ascending order.
func (s Set) IDs() []int {
	ids := make([]int, 0, s.Len())
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			ids = append(ids, i*64+b)
			w &^= 1 << uint(b)
		}
	}
	return ids
}

// Len returns the number of ids in s.
func (s Set) Len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether s holds no id.
func (s Set) IsEmpty() bool { return len(s.words) == 0 }

// Contains reports whether id is in s.
func (s Set) Contains(id int) bool {
	if id < 0 || id/64 >= len(s.words) {
		return false
	}
	return s.words[id/64]&(1<<uint(id%64)) != 0
}

// Min returns the smallest id, or -1 for the empty set.
func (s Set) Min() int {
	for i, w := range s.words {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// Max returns the largest id, or -1 for the empty set.
func (s Set) Max() int {
	if len(s.words) == 0 {
		return -1
	}
	i := len(s.words) - 1
	return i*64 + 63 - bits.LeadingZeros64(s.words[i])
}

// Equal reports whether s and t hold the same ids.
func (s Set) Equal(t Set) bool {
	if len(s.words) != len(t.words) {
		return false
	}
	for i := range s.words {
		if s.words[i] != t.words[i] {
			return false
		}
	}
	return true
}

// With returns s plus ids. It panics on ids outside 0..MaxID.
func (s Set) With(ids ...int) Set { return s.Union(Of(ids...)) }

// Without returns s minus ids.
func (s Set) Without(ids ...int) Set {
	var valid []int
	for _, id := range ids {
		if id >= 0 && id <= MaxID {
			valid = append(valid, id)
		}
	}
	return s.Difference(Of(valid...))
}

// Union returns the ids in s or t.
func (s Set) Union(t Set) Set {
	a, b := s.words, t.words
	if len(a) < len(b) {
		a, b = b, a
	}
	w := append([]uint64(nil), a...)
	for i := range b {
		w[i] |= b[i]
	}
	return Set{words: trim(w)}
}

// Intersect returns the ids in both s and t.
func (s Set) Intersect(t Set) Set {
	n := min(len(s.words), len(t.words))
	w := make([]uint64, n)
	for i := 0; i < n; i++ {
		w[i] = s.words[i] & t.words[i]
	}
	return Set{words: trim(w)}
}

// Difference returns the ids in s that are not in t.
func (s Set) Difference(t Set) Set {
	w := append([]uint64(nil), s.words...)
	for i := range w {
		if i < len(t.words) {
			w[i] &^= t.words[i]
		}
	}
	return Set{words: trim(w)}
}

// IsSubsetOf reports whether every id of s is in t.
func (s Set) IsSubsetOf(t Set) bool { return s.Difference(t).IsEmpty() }

// First returns the n smallest ids of s as a Set (all of s when n >= Len).
func (s Set) First(n int) Set {
	ids := s.IDs()
	if n < len(ids) {
		ids = ids[:max(n, 0)]
	}
	return Of(ids...)
}
