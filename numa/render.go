package numa

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteNumactl writes t as `numactl -H` (numactl 2.0.x, hardware()) lays
// it out:
//
//	available: 2 nodes (0-1)
//	node 0 cpus: 0 1 2 3 4 5 6 7
//	node 0 size: 193502 MB
//	node 0 free: 188478 MB
//	...
//	node distances:
//	node   0   1
//	  0:  10  100
//
// Each node lists its online CPUs; sizes are MemTotal and MemFree from
// nodeN/meminfo in MiB, rounded down, or "<not available>" without the
// file or the line (Memory.NoTotal, Memory.NoFree), as numactl prints them.
// Distance cells are printf "% 3d " as numactl prints them, trailing space
// included; without distances the block is "No distance information
// available.".
func (t *Topology) WriteNumactl(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "available: %d nodes (%s)\n", len(t.Nodes), t.NodeIDs())
	for _, n := range t.Nodes {
		fmt.Fprintf(bw, "node %d cpus:", n.ID)
		for _, id := range n.CPUs.IDs() {
			fmt.Fprintf(bw, " %d", id)
		}
		bw.WriteByte('\n')
		size, free := "<not available>", "<not available>"
		if m := n.Memory; m != nil {
			if !m.NoTotal {
				size = strconv.FormatUint(m.Total>>20, 10) + " MB"
			}
			if !m.NoFree {
				free = strconv.FormatUint(m.Free>>20, 10) + " MB"
			}
		}
		fmt.Fprintf(bw, "node %d size: %s\n", n.ID, size)
		fmt.Fprintf(bw, "node %d free: %s\n", n.ID, free)
	}
	complete := len(t.Nodes) > 0
	for _, n := range t.Nodes {
		complete = complete && len(n.Distances) == len(t.Nodes)
	}
	if !complete {
		bw.WriteString("No distance information available.\n")
		return bw.Flush()
	}
	bw.WriteString("node distances:\nnode ")
	for _, n := range t.Nodes {
		fmt.Fprintf(bw, "% 3d ", n.ID)
	}
	bw.WriteByte('\n')
	for _, n := range t.Nodes {
		fmt.Fprintf(bw, "% 3d: ", n.ID)
		for _, d := range n.Distances {
			fmt.Fprintf(bw, "% 3d ", d)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Numactl returns WriteNumactl's output as a string.
func (t *Topology) Numactl() string {
	var b strings.Builder
	_ = t.WriteNumactl(&b) // writing to a strings.Builder cannot fail
	return b.String()
}

// LscpuOptions lays out the lscpu NUMA lines. A nil *LscpuOptions is the
// zero value.
type LscpuOptions struct {
	// Sections prints the "NUMA:" header and indents the fields by two
	// spaces, as lscpu (util-linux 2.38+) does on a terminal. Default:
	// false, the flat form lscpu prints into a pipe.
	Sections bool
	// Width is the column the values start at, which lscpu sets from the
	// longest field name in its whole output. Default (0): one past the
	// longest NUMA field.
	Width int
}

// WriteLscpu writes the NUMA lines of lscpu for t:
//
//	NUMA node(s):          2
//	NUMA node0 CPU(s):
//	NUMA node1 CPU(s):     96-103
//
// CPU lists are in lscpu's form, where a run of two ids is "0,1" and longer
// runs are "lo-hi"; a node without online CPUs has an empty value.
func (t *Topology) WriteLscpu(w io.Writer, opts *LscpuOptions) error {
	var o LscpuOptions
	if opts != nil {
		o = *opts
	}
	indent := ""
	if o.Sections {
		indent = "  "
	}
	type row struct{ k, v string }
	rows := []row{{"NUMA node(s):", strconv.Itoa(len(t.Nodes))}}
	for _, n := range t.Nodes {
		rows = append(rows, row{fmt.Sprintf("NUMA node%d CPU(s):", n.ID), n.CPUs.Lscpu()})
	}
	width := o.Width
	if width == 0 {
		for _, r := range rows {
			width = max(width, len(indent)+len(r.k)+1)
		}
	}
	bw := bufio.NewWriter(w)
	if o.Sections {
		bw.WriteString("NUMA:\n")
	}
	for _, r := range rows {
		key := indent + r.k
		line := key + strings.Repeat(" ", max(width-len(key), 1)) + r.v
		bw.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return bw.Flush()
}
