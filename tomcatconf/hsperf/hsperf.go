// Package hsperf reads a HotSpot JVM's own instrumentation counters: the
// hsperfdata file every HotSpot JVM (OpenJDK, Temurin, Corretto, ...)
// keeps mapped at /tmp/hsperfdata_USER/PID unless it runs with
// -XX:-UsePerfData. jstat and jcmd read the same file; this package reads
// it in Go, with no JDK tool and no attach to the JVM: its garbage
// collections (count and pause time per collector), JIT compile time,
// safepoints and live threads, as a Snapshot, and the difference of two
// snapshots taken around a measurement as Figures.
//
// Reading a JVM's file needs read access to it (the JVM's own user, or
// root): it is mode 0600. Find locates it through /proc/PID/root, so a
// JVM in a systemd unit with PrivateTmp= or in a container is found too.
package hsperf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"
)

// Units is what a counter's value counts, as the JVM declares it.
type Units uint8

// The units HotSpot declares (jvmstat's Units).
const (
	UnitsNone   Units = 1 // a plain number
	UnitsBytes  Units = 2
	UnitsTicks  Units = 3 // ticks of the high-resolution clock (sun.os.hrt.frequency per second)
	UnitsEvents Units = 4
	UnitsString Units = 5
	UnitsHertz  Units = 6
)

// Variability says how a counter's value may change over the JVM's life.
type Variability uint8

// The variabilities HotSpot declares (jvmstat's Variability).
const (
	Constant  Variability = 1 // set once
	Monotonic Variability = 2 // only grows: a difference is meaningful
	Variable  Variability = 3 // goes up and down
)

// Counter is one named counter of the file. A string counter
// (Units == UnitsString) has its Text; every other has its Value.
type Counter struct {
	Name        string
	Units       Units
	Variability Variability
	Value       int64
	Text        string
}

// Snapshot is the counters of one reading of a JVM's hsperfdata file, in
// the file's order.
type Snapshot struct {
	// Major and Minor are the file format's version (2.0 for every
	// HotSpot since JDK 1.4.2).
	Major, Minor int
	// Size is the file's length and Used the bytes the JVM has filled;
	// Overflow counts the bytes of counters that did not fit
	// (-XX:PerfDataMemorySize is too small when it is not 0).
	Size, Used, Overflow int64
	// Timestamp is the JVM's clock, in ticks, when it last added a
	// counter.
	Timestamp int64
	Counters  []Counter
	index     map[string]int
}

// The file's layout (format 2.0): a 32-byte prologue, then entries of a
// 20-byte header each, a name and a value.
const (
	prologueSize = 32
	entrySize    = 20
	magic        = 0xcafec0c0 // always stored big-endian
	typeLong     = 'J'
	typeByte     = 'B'
)

// ErrNotReady is returned by Parse for a file the JVM has not finished
// creating (its "accessible" flag is not set yet).
var ErrNotReady = errors.New("hsperf: the JVM has not made its counters accessible yet")

// Parse reads an hsperfdata file's bytes. It checks the magic number, the
// format version (2.x), and that every entry, name and value lies inside
// the file's used size.
func Parse(data []byte) (*Snapshot, error) {
	if len(data) < prologueSize {
		return nil, fmt.Errorf("hsperf: %d bytes, shorter than the %d-byte prologue of an hsperfdata file", len(data), prologueSize)
	}
	if m := binary.BigEndian.Uint32(data); m != magic {
		return nil, fmt.Errorf("hsperf: magic %#08x, want %#08x (not an hsperfdata file)", m, uint32(magic))
	}
	var order binary.ByteOrder
	switch data[4] {
	case 0:
		order = binary.BigEndian
	case 1:
		order = binary.LittleEndian
	default:
		return nil, fmt.Errorf("hsperf: byte order %d, want 0 (big) or 1 (little)", data[4])
	}
	s := &Snapshot{Major: int(data[5]), Minor: int(data[6]), Size: int64(len(data))}
	if s.Major != 2 {
		return nil, fmt.Errorf("hsperf: format version %d.%d, want 2.x", s.Major, s.Minor)
	}
	if data[7] == 0 {
		return nil, ErrNotReady
	}
	used := int64(int32(order.Uint32(data[8:])))
	s.Used, s.Overflow = used, int64(int32(order.Uint32(data[12:])))
	s.Timestamp = int64(order.Uint64(data[16:]))
	first := int64(int32(order.Uint32(data[24:])))
	n := int64(int32(order.Uint32(data[28:])))
	if used < prologueSize || used > int64(len(data)) {
		return nil, fmt.Errorf("hsperf: used size %d, want %d..%d (the file's length)", used, prologueSize, len(data))
	}
	if n < 0 || first < prologueSize || first > used {
		return nil, fmt.Errorf("hsperf: %d entries at offset %d, want a count >= 0 at %d..%d", n, first, prologueSize, used)
	}
	b := data[:used]
	s.Counters = make([]Counter, 0, min(n, (used-first)/entrySize))
	s.index = make(map[string]int, cap(s.Counters))
	off := first
	for i := int64(0); i < n; i++ {
		c, length, err := parseEntry(b, off, order)
		if err != nil {
			return nil, fmt.Errorf("hsperf: entry %d at offset %d: %w", i, off, err)
		}
		if _, dup := s.index[c.Name]; !dup {
			s.index[c.Name] = len(s.Counters)
		}
		s.Counters = append(s.Counters, c)
		off += length
	}
	return s, nil
}

// parseEntry reads the entry at off of b and returns it with its length.
func parseEntry(b []byte, off int64, order binary.ByteOrder) (Counter, int64, error) {
	var c Counter
	if off+entrySize > int64(len(b)) {
		return c, 0, fmt.Errorf("header ends past the used size %d", len(b))
	}
	h := b[off:]
	length := int64(int32(order.Uint32(h[0:])))
	nameAt := int64(int32(order.Uint32(h[4:])))
	vector := int64(int32(order.Uint32(h[8:])))
	typ, units, vari := h[12], Units(h[14]), Variability(h[15])
	dataAt := int64(int32(order.Uint32(h[16:])))
	if length < entrySize || off+length > int64(len(b)) {
		return c, 0, fmt.Errorf("length %d, want %d..%d", length, entrySize, int64(len(b))-off)
	}
	e := b[off : off+length]
	if nameAt < entrySize || nameAt >= length || dataAt < entrySize || dataAt > length || vector < 0 {
		return c, 0, fmt.Errorf("name at %d, value at %d, vector of %d, want both inside the entry's %d bytes", nameAt, dataAt, vector, length)
	}
	end := bytes.IndexByte(e[nameAt:], 0)
	if end <= 0 {
		return c, 0, fmt.Errorf("name at %d is empty or not NUL-terminated", nameAt)
	}
	c = Counter{Name: string(e[nameAt : nameAt+int64(end)]), Units: units, Variability: vari}
	switch {
	case typ == typeLong && vector == 0:
		if dataAt+8 > length {
			return c, 0, fmt.Errorf("%s: a long value at %d past the entry's %d bytes", c.Name, dataAt, length)
		}
		c.Value = int64(order.Uint64(e[dataAt:]))
	case typ == typeByte && vector > 0:
		if dataAt+vector > length {
			return c, 0, fmt.Errorf("%s: %d bytes at %d past the entry's %d bytes", c.Name, vector, dataAt, length)
		}
		v := e[dataAt : dataAt+vector]
		if i := bytes.IndexByte(v, 0); i >= 0 {
			v = v[:i]
		}
		c.Text = string(v)
	default:
		return c, 0, fmt.Errorf("%s: type %q with a vector of %d, want a long ('J', no vector) or a byte vector ('B')", c.Name, typ, vector)
	}
	return c, length, nil
}

// ReadFile reads and parses the hsperfdata file at path.
func ReadFile(path string) (*Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hsperf: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Counter returns the counter named name.
func (s *Snapshot) Counter(name string) (Counter, bool) {
	if s == nil {
		return Counter{}, false
	}
	i, ok := s.index[name]
	if !ok {
		return Counter{}, false
	}
	return s.Counters[i], true
}

// Int returns the value of the numeric counter named name.
func (s *Snapshot) Int(name string) (int64, bool) {
	c, ok := s.Counter(name)
	if !ok || c.Units == UnitsString {
		return 0, false
	}
	return c.Value, true
}

// Text returns the value of the string counter named name.
func (s *Snapshot) Text(name string) (string, bool) {
	c, ok := s.Counter(name)
	if !ok || c.Units != UnitsString {
		return "", false
	}
	return c.Text, true
}

// Duration returns the tick counter named name as a duration, by the
// JVM's clock frequency (sun.os.hrt.frequency).
func (s *Snapshot) Duration(name string) (time.Duration, bool) {
	c, ok := s.Counter(name)
	hz, fok := s.Int("sun.os.hrt.frequency")
	if !ok || !fok || c.Units != UnitsTicks || hz <= 0 {
		return 0, false
	}
	return ticks(c.Value, hz), true
}

// ticks converts n ticks of a hz clock to a duration: whole seconds
// exactly, the rest to the nanosecond.
func ticks(n, hz int64) time.Duration {
	sec, rest := n/hz, n%hz
	return time.Duration(sec)*time.Second + time.Duration(float64(rest)*float64(time.Second)/float64(hz))
}
