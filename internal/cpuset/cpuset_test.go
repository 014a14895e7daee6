package cpuset_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ids  []int
		str  string
	}{
		{name: "empty", in: "", ids: []int{}, str: ""},
		{name: "newline only", in: "\n", ids: []int{}, str: ""},
		{name: "single", in: "0\n", ids: []int{0}, str: "0"},
		{name: "online list", in: "0-7\n", ids: []int{0, 1, 2, 3, 4, 5, 6, 7}, str: "0-7"},
		{name: "two ranges", in: "0-1,96-97", ids: []int{0, 1, 96, 97}, str: "0-1,96-97"},
		{name: "list", in: "0,2,4", ids: []int{0, 2, 4}, str: "0,2,4"},
		{name: "pair collapses", in: "3,4", ids: []int{3, 4}, str: "3-4"},
		{name: "unsorted and overlapping", in: "8-9,0-3,2-5", ids: []int{0, 1, 2, 3, 4, 5, 8, 9}, str: "0-5,8-9"},
		{name: "kunpeng NUL terminated", in: "0-31\n\x00", ids: rangeIDs(0, 31), str: "0-31"},
		{name: "NUL then space", in: "\x00 ", ids: []int{}, str: ""},
		{name: "NUL space NUL", in: "\x00 \x00", ids: []int{}, str: ""},
		{name: "stride", in: "0-7:2/4", ids: []int{0, 1, 4, 5}, str: "0-1,4-5"},
		{name: "spaces around", in: "  1-2 , 5 ", ids: []int{1, 2, 5}, str: "1-2,5"},
		{name: "high ids", in: "1023-1025", ids: []int{1023, 1024, 1025}, str: "1023-1025"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := cpuset.Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.ids, s.IDs())
			assert.Equal(t, tt.str, s.String())
			assert.Equal(t, len(tt.ids), s.Len())
		})
	}
}

func TestLscpu(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "single", in: "5", want: "5"},
		{name: "pair stays two ids", in: "0-1", want: "0,1"},
		{name: "run of three", in: "0-2", want: "0-2"},
		{name: "pairs and a run", in: "0-1,8-9,16-23", want: "0,1,8,9,16-23"},
		{name: "192-cpu host after hotplug", in: "0-95,104-191", want: "0-95,104-191"},
		{name: "singles", in: "0,2,4", want: "0,2,4"},
		{name: "pair then single", in: "3-4,6", want: "3,4,6"},
		{name: "odd ids", in: "1,3,5", want: "1,3,5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cpuset.MustParse(tt.in)
			assert.Equal(t, tt.want, s.Lscpu())
			back, err := cpuset.Parse(s.Lscpu())
			require.NoError(t, err)
			assert.True(t, back.Equal(s))
		})
	}
}

func rangeIDs(lo, hi int) []int {
	var ids []int
	for i := lo; i <= hi; i++ {
		ids = append(ids, i)
	}
	return ids
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "reversed range", in: "3-1", want: `cpuset: "3-1" in /sys/devices/system/cpu/online: range end before start in "3-1"`},
		{name: "negative", in: "-1", want: `cpuset: "-1" in /sys/devices/system/cpu/online: negative cpu number in "-1"`},
		{name: "garbage", in: "a-b", want: `cpuset: "a-b" in /sys/devices/system/cpu/online: cpu number "a" is not a decimal integer`},
		{name: "empty element", in: "1,,2", want: `cpuset: "1,,2" in /sys/devices/system/cpu/online: empty element; expected a list like 0-7,96-103`},
		{name: "too big", in: "70000", want: `cpuset: "70000" in /sys/devices/system/cpu/online: cpu number 70000 above the maximum 65535`},
		{name: "open range", in: "4-", want: `cpuset: "4-" in /sys/devices/system/cpu/online: missing cpu number; expected a list like 0-7,96-103`},
		{name: "bad stride", in: "0-7:4/2", want: `cpuset: "0-7:4/2" in /sys/devices/system/cpu/online: stride in "0-7:4/2" must have group >= used`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cpuset.ParseNamed(tt.in, "/sys/devices/system/cpu/online")
			require.Error(t, err)
			assert.ErrorIs(t, err, cpuset.ErrSyntax)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestSetOperations(t *testing.T) {
	a := cpuset.MustParse("0-7")
	b := cpuset.MustParse("4-11")
	assert.Equal(t, "0-11", a.Union(b).String())
	assert.Equal(t, "4-7", a.Intersect(b).String())
	assert.Equal(t, "0-3", a.Difference(b).String())
	assert.Equal(t, "", a.Intersect(cpuset.MustParse("96-103")).String())
	assert.True(t, cpuset.MustParse("1-2").IsSubsetOf(a))
	assert.False(t, b.IsSubsetOf(a))
	assert.Equal(t, "0-7,100", a.With(100).String())
	assert.Equal(t, "0-2,4-7", a.Without(3, -5, 1000).String())
	assert.True(t, a.Contains(7))
	assert.False(t, a.Contains(8))
	assert.False(t, a.Contains(-1))
	assert.Equal(t, 0, a.Min())
	assert.Equal(t, 7, a.Max())
	assert.Equal(t, -1, cpuset.Set{}.Min())
	assert.Equal(t, -1, cpuset.Set{}.Max())
	assert.True(t, cpuset.Set{}.IsEmpty())
	assert.True(t, a.Difference(a).Equal(cpuset.Set{}))
	assert.Equal(t, "96-98", cpuset.Range(96, 103).First(3).String())
	assert.Equal(t, "0 1 2 3", cpuset.Range(0, 3).Spaced())
	// Operations never modify their operands.
	assert.Equal(t, "0-7", a.String())
	assert.Equal(t, "4-11", b.String())
}

func TestJSON(t *testing.T) {
	type snap struct {
		Online cpuset.Set `json:"online"`
	}
	b, err := json.Marshal(snap{Online: cpuset.MustParse("0-7,96-103")})
	require.NoError(t, err)
	assert.JSONEq(t, `{"online":"0-7,96-103"}`, string(b))
	var back snap
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, "0-7,96-103", back.Online.String())
	require.ErrorIs(t, json.Unmarshal([]byte(`{"online":"9-1"}`), &back), cpuset.ErrSyntax)
}

func TestMask(t *testing.T) {
	tests := []struct {
		name, in, list string
		groups         int
		out            string
	}{
		{name: "one group", in: "ff\n", list: "0-7", groups: 1, out: "000000ff"},
		{name: "two cpus", in: "00000003", list: "0-1", groups: 1, out: "00000003"},
		{name: "192 cpu host node1", in: "00000000,000000ff,00000000,00000000", list: "64-71", groups: 4, out: "00000000,000000ff,00000000,00000000"},
		{name: "high group", in: "1,00000000", list: "32", groups: 1, out: "00000001,00000000"},
		{name: "empty", in: "", list: "", groups: 1, out: "00000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := cpuset.ParseMask(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.list, s.String())
			assert.Equal(t, tt.out, s.Mask(tt.groups))
		})
	}
	_, err := cpuset.ParseMaskNamed("xyz", "/proc/irq/24/smp_affinity")
	require.ErrorIs(t, err, cpuset.ErrSyntax)
	assert.Contains(t, err.Error(), "/proc/irq/24/smp_affinity")
	_, err = cpuset.ParseMask("123456789")
	require.ErrorIs(t, err, cpuset.ErrSyntax)
}

func ExampleParse() {
	online, _ := cpuset.Parse("0-7,96-103\n")
	node1 := cpuset.Range(96, 191)
	fmt.Println(online.Len(), online.Intersect(node1))
	// Output: 16 96-103
}
