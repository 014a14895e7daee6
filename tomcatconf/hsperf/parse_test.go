package hsperf_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tomcatconf/hsperf"
)

func realFile(t testing.TB) []byte {
	data, err := os.ReadFile(filepath.Join("testdata", "openjdk17-g1.hsperf"))
	require.NoError(t, err)
	return data
}

// TestParseBad: damaged files are refused with what was found and what
// was expected, never a panic.
func TestParseBad(t *testing.T) {
	good := realFile(t)
	edit := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	le := binary.LittleEndian
	firstEntry := int(le.Uint32(good[24:]))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "0 bytes, shorter than the 32-byte prologue"},
		{"not hsperfdata", []byte("#!/bin/sh\nexec java -jar app.jar\n and more text"), "magic 0x23212f62, want 0xcafec0c0"},
		{"byte order", edit(func(b []byte) []byte { b[4] = 7; return b }), "byte order 7"},
		{"version 1", edit(func(b []byte) []byte { b[5] = 1; return b }), "format version 1.0, want 2.x"},
		{"used past the end", edit(func(b []byte) []byte { le.PutUint32(b[8:], 1<<20); return b }), "used size 1048576, want 32..32768"},
		{"entries before the prologue", edit(func(b []byte) []byte { le.PutUint32(b[24:], 8); return b }), "entries at offset 8"},
		{"truncated", good[:firstEntry+30], "used size"},
		{"entry too long", edit(func(b []byte) []byte { le.PutUint32(b[firstEntry:], 1<<20); return b }), "entry 0 at offset 32: length 1048576"},
		{"name outside", edit(func(b []byte) []byte { le.PutUint32(b[firstEntry+4:], 4000); return b }), "name at 4000"},
		{"unknown type", edit(func(b []byte) []byte { b[firstEntry+12] = 'D'; return b }), `sun.rt._sync_Inflations: type 'D'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := hsperf.Parse(tt.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := hsperf.Parse(edit(func(b []byte) []byte { b[7] = 0; return b }))
	assert.ErrorIs(t, err, hsperf.ErrNotReady)
}

// TestParseBigEndian: a file of a big-endian JVM (s390x, for one) reads
// the same: the real file with every field swapped.
func TestParseBigEndian(t *testing.T) {
	little := realFile(t)
	want, err := hsperf.Parse(little)
	require.NoError(t, err)
	big := append([]byte(nil), little...)
	le, be := binary.LittleEndian, binary.BigEndian
	swap32 := func(at int) { be.PutUint32(big[at:], le.Uint32(little[at:])) }
	big[4] = 0
	for _, at := range []int{8, 12, 24, 28} {
		swap32(at)
	}
	be.PutUint64(big[16:], le.Uint64(little[16:]))
	off := int(le.Uint32(little[24:]))
	for range want.Counters {
		for _, f := range []int{0, 4, 8, 16} {
			swap32(off + f)
		}
		dataAt := int(le.Uint32(little[off+16:]))
		if little[off+12] == 'J' {
			be.PutUint64(big[off+dataAt:], le.Uint64(little[off+dataAt:]))
		}
		off += int(le.Uint32(little[off:]))
	}
	got, err := hsperf.Parse(big)
	require.NoError(t, err)
	assert.Equal(t, want.Counters, got.Counters)
	assert.Equal(t, want.Timestamp, got.Timestamp)
}

// FuzzParse: any bytes give counters or an error, never a panic; what
// parses has names and reads back by name.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.hsperf"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:4096])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := hsperf.Parse(data)
		if err != nil {
			return
		}
		for _, c := range s.Counters {
			if c.Name == "" {
				t.Fatalf("a counter without a name: %+v", c)
			}
			if _, ok := s.Counter(c.Name); !ok {
				t.Fatalf("%s does not read back", c.Name)
			}
		}
		_, _ = s.Figures()
	})
}
