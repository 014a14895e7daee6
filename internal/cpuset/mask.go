package cpuset

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMask parses the kernel's hexadecimal cpumask form, as in
// /proc/irq/N/smp_affinity and /sys/class/net/IF/device/local_cpus: 32-bit
// groups of hex digits separated by commas, most significant group first
// ("ffffffff,00000000,000000ff"). White space, a trailing newline and
// trailing NULs are ignored.
func ParseMask(s string) (Set, error) { return ParseMaskNamed(s, "") }

// ParseMaskNamed is ParseMask with the source carried into errors.
func ParseMaskNamed(s, source string) (Set, error) {
	text := trimValue(s)
	if text == "" {
		return Set{}, nil
	}
	groups := strings.Split(text, ",")
	if len(groups)*32 > MaxID+1 {
		return Set{}, &ParseError{Input: text, Source: source, Reason: fmt.Sprintf("mask wider than %d cpus", MaxID+1)}
	}
	var w []uint64
	for gi := range groups {
		g := groups[len(groups)-1-gi] // least significant group last in text
		if g == "" || len(g) > 8 {
			return Set{}, &ParseError{Input: text, Source: source, Reason: "expected comma-separated groups of at most 8 hex digits like 000000ff"}
		}
		v, err := strconv.ParseUint(g, 16, 32)
		if err != nil {
			return Set{}, &ParseError{Input: text, Source: source, Reason: fmt.Sprintf("group %q is not hexadecimal", g)}
		}
		for b := 0; b < 32; b++ {
			if v&(1<<uint(b)) != 0 {
				w = setBit(w, gi*32+b)
			}
		}
	}
	return Set{words: trim(w)}, nil
}

// Mask formats s in the kernel's hexadecimal cpumask form with at least
// minGroups 32-bit groups (the kernel prints nr_cpu_ids/32 rounded up;
// pass 1 for the shortest form).
func (s Set) Mask(minGroups int) string {
	n := max(minGroups, (s.Max()+32)/32, 1)
	parts := make([]string, n)
	for gi := 0; gi < n; gi++ {
		var v uint64
		wi, shift := gi/2, uint(gi%2)*32
		if wi < len(s.words) {
			v = (s.words[wi] >> shift) & 0xffffffff
		}
		parts[n-1-gi] = fmt.Sprintf("%08x", v)
	}
	return strings.Join(parts, ",")
}
