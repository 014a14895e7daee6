package cpuset_test

import (
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
		lscpu, err := cpuset.Parse(set.Lscpu())
		if err != nil || !lscpu.Equal(set) {
			t.Fatalf("lscpu round trip of %q: %v %q", set.String(), err, set.Lscpu())
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
