package numa

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Memory is a node's memory as its nodeN/meminfo reports it, in bytes.
type Memory struct {
	Total uint64 // MemTotal; 0 when NoTotal
	Free  uint64 // MemFree; 0 when NoFree
	// NoTotal and NoFree are true when the file has no MemTotal or no
	// MemFree line. The kernel writes both, but captured trees can lack
	// one; numactl then prints "<not available>" for the missing value
	// (and warns "Cannot parse sysfs meminfo" on stderr), and so does
	// WriteNumactl. Default: false, the line was read.
	NoTotal, NoFree bool
}

// Used returns Total minus Free: 0 when Free is larger (a racing read can
// show it) or when either is missing.
func (m Memory) Used() uint64 {
	if m.NoTotal || m.NoFree || m.Free > m.Total {
		return 0
	}
	return m.Total - m.Free
}

// parseNodeMeminfo parses /sys/devices/system/node/nodeN/meminfo: lines of
// "Node N Key:  value [kB]". Only MemTotal and MemFree (in kB) are kept;
// other keys are checked for form and skipped. A missing MemTotal or
// MemFree line sets NoTotal or NoFree, as numactl (libnuma's
// numa_node_size64) prints such a node: the value it found, and "<not
// available>" for the other; ok is false when neither line is there. path
// names the file in errors; node is the N the lines must carry.
func parseNodeMeminfo(text string, node int, path string) (m Memory, ok bool, err error) {
	var haveTotal, haveFree bool
	want := strconv.Itoa(node)
	for i, raw := range strings.Split(strings.TrimRight(text, "\x00"), "\n") {
		line := strings.TrimSpace(strings.TrimRight(raw, "\x00"))
		if line == "" {
			continue
		}
		bad := func(reason string) (Memory, bool, error) {
			return Memory{}, false, &ParseError{Path: path, Line: i + 1, Text: line, Reason: reason}
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f) > 5 || f[0] != "Node" || !strings.HasSuffix(f[2], ":") {
			return bad(`expected "Node N Key: value [kB]"`)
		}
		if f[1] != want {
			return bad(fmt.Sprintf("line is for node %s, file is node%d's", f[1], node))
		}
		key := strings.TrimSuffix(f[2], ":")
		v, err := strconv.ParseUint(f[3], 10, 64)
		if err != nil {
			return bad(fmt.Sprintf("value %q is not a decimal count", f[3]))
		}
		kB := len(f) == 5
		if kB && f[4] != "kB" {
			return bad(fmt.Sprintf("unit %q, expected kB", f[4]))
		}
		if key != "MemTotal" && key != "MemFree" {
			continue
		}
		if !kB {
			return bad(key + " without the kB unit")
		}
		if v > math.MaxUint64/1024 {
			return bad(key + " overflows 64 bits in bytes")
		}
		switch key {
		case "MemTotal":
			if haveTotal {
				return bad("MemTotal given twice")
			}
			m.Total, haveTotal = v*1024, true
		case "MemFree":
			if haveFree {
				return bad("MemFree given twice")
			}
			m.Free, haveFree = v*1024, true
		}
	}
	m.NoTotal, m.NoFree = !haveTotal, !haveFree
	return m, haveTotal || haveFree, nil
}

// formatNodeMeminfo renders m as the kernel writes the first lines of
// nodeN/meminfo, leaving out a line m lacks (and MemUsed with it); bytes
// are truncated to whole kB.
func formatNodeMeminfo(node int, m Memory) string {
	var b strings.Builder
	if !m.NoTotal {
		fmt.Fprintf(&b, "Node %d MemTotal:       %8d kB\n", node, m.Total/1024)
	}
	if !m.NoFree {
		fmt.Fprintf(&b, "Node %d MemFree:        %8d kB\n", node, m.Free/1024)
	}
	if !m.NoTotal && !m.NoFree {
		fmt.Fprintf(&b, "Node %d MemUsed:        %8d kB\n", node, m.Used()/1024)
	}
	return b.String()
}

// parseDistance parses /sys/devices/system/node/nodeN/distance: one line of
// decimal distances (0-255) separated by spaces, one per online node in
// ascending id order.
func parseDistance(text, path string) ([]int, error) {
	line := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), "\x00"))
	if strings.ContainsAny(line, "\n") {
		return nil, &ParseError{Path: path, Text: firstLine(text), Reason: "more than one line; expected one line like \"10 20\""}
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, &ParseError{Path: path, Text: line, Reason: "empty; expected one distance per node like \"10 20\""}
	}
	d := make([]int, len(f))
	for i, s := range f {
		v, err := strconv.ParseUint(s, 10, 8)
		if err != nil {
			return nil, &ParseError{Path: path, Text: line, Reason: fmt.Sprintf("distance %q is not a decimal number 0-255", s)}
		}
		d[i] = int(v)
	}
	return d, nil
}

// formatDistance renders distances as the kernel writes nodeN/distance.
func formatDistance(d []int) string {
	parts := make([]string, len(d))
	for i, v := range d {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, " ") + "\n"
}

func firstLine(s string) string {
	s = strings.TrimRight(s, "\x00")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
