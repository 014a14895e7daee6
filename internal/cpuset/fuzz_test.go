package cpuset_test

import (
	"strings"
	"testing"

	"github.com/nettune/nettune/internal/cpuset"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "0", "0-7", "0-7,96-103\n", "0,2,4", "0-31\n\x00", "3-1", "0-7:2/4", "1,,2", "-1", "65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := cpuset.Parse(s)
		if err != nil {
			return
		}
		back, err := cpuset.Parse(set.String())
		if err != nil {
			t.Fatalf("Parse(%q) of own output: %v", set.String(), err)
		}
		if !back.Equal(set) {
			t.Fatalf("round trip of %q: %q != %q", s, back.String(), set.String())
		}
		m, err := cpuset.ParseMask(set.Mask(1))
		if err != nil || !m.Equal(set) {
			t.Fatalf("mask round trip of %q: %v %q", set.String(), err, m.String())
		}
	})
}

func FuzzParseMask(f *testing.F) {
	for _, s := range []string{"", "ff", "00000000,000000ff", "1,00000000", "xyz", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := cpuset.ParseMask(s)
		if err != nil {
			return
		}
		back, err := cpuset.Parse(set.String())
		if err != nil || !back.Equal(set) {
			t.Fatalf("list round trip of mask %q: %v", s, err)
		}
	})
}

// Lscpu never panics, writes no space, and its output parses back to the
// same set.
func FuzzLscpu(f *testing.F) {
	for _, s := range []string{"", "0", "0-1", "0,1", "0,2,4", "0-7", "0-1,16-17", "96-103", "0-7,96-103",
		"0,1,8,9,16-23", "0-95,104-191", "5,7,9-11", "0-15:2/4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := cpuset.Parse(s)
		if err != nil {
			return
		}
		out := set.Lscpu()
		back, err := cpuset.Parse(out)
		if err != nil {
			t.Fatalf("Lscpu of %q = %q does not parse: %v", s, out, err)
		}
		if !back.Equal(set) {
			t.Fatalf("round trip %q -> %q -> %q", set, out, back)
		}
		if strings.Contains(out, " ") {
			t.Fatalf("space in %q", out)
		}
	})
}
