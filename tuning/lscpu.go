package tuning

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nettune/nettune/internal/cpuset"
)

// NodeCPUs is one NUMA node and its online CPUs.
type NodeCPUs struct {
	Node int    `json:"node"`
	CPUs CPUSet `json:"cpus"`
}

// Summary is what lscpu prints about CPU hotplug and NUMA: the CPU count,
// the online and offline lists and each node's online CPUs.
type Summary struct {
	// CPUs is the number of present CPUs ("CPU(s):").
	CPUs int `json:"cpus"`
	// Online is the online list ("On-line CPU(s) list:").
	Online CPUSet `json:"online"`
	// Offline is the present CPUs that are not online ("Off-line CPU(s)
	// list:"), as lscpu computes it; the kernel's offline file can also
	// list possible CPUs that are not present.
	Offline CPUSet `json:"offline"`
	// Nodes lists every /sys/devices/system/node/nodeN in ascending
	// order with its cpulist, which holds only online CPUs. Empty when
	// the kernel has no NUMA support.
	Nodes []NodeCPUs `json:"nodes"`
}

// Summary reads what the lscpu-like summary shows: the CPU state (see
// CPUState) and, for each /sys/devices/system/node/nodeN, its cpulist
// (or its hexadecimal cpumap when cpulist is missing). It needs no
// privilege.
func (h *Host) Summary() (Summary, error) {
	st, err := h.CPUState()
	if err != nil {
		return Summary{}, err
	}
	s := Summary{CPUs: st.Present.Len(), Online: st.Online, Offline: st.PresentOffline()}
	nodeDir := h.root.Sys("devices", "system", "node")
	ids, err := numbered(nodeDir, "node")
	if err != nil && !isNotExist(err) {
		return Summary{}, fmt.Errorf("tuning: list nodes: %w", err)
	}
	for _, id := range ids {
		name := "node" + strconv.Itoa(id)
		set, ok, err := readList(h.root.Sys("devices", "system", "node", name, "cpulist"))
		if err != nil {
			return Summary{}, err
		}
		if !ok {
			set, err = readMask(h.root.Sys("devices", "system", "node", name, "cpumap"))
			if err != nil {
				return Summary{}, err
			}
		}
		s.Nodes = append(s.Nodes, NodeCPUs{Node: id, CPUs: set})
	}
	return s, nil
}

// SummaryOptions tunes Summary.Text. The zero value (or nil) renders
// what lscpu prints on a terminal.
type SummaryOptions struct {
	// Flat prints every label at the left margin, as lscpu does when its
	// output is not a terminal. Default false: lscpu's tree form, with
	// "NUMA:" as a section and the lists indented by two spaces.
	Flat bool
	// Width is the width of the label column, separator included. The
	// default, 0, is the width lscpu uses on current kernels, which its
	// longest label (a vulnerability name) sets: 29 in tree form, 41 flat.
	// A label longer than Width widens the column to the label plus one
	// space.
	Width int
}

// The default label column widths of Summary.Text: those of lscpu from
// util-linux 2.39 and later on kernels that list the "Indirect target
// selection" vulnerability, as on the Arm Neoverse Tomcat tuning guide's
// Graviton4 host.
const (
	defaultTreeWidth = 29
	defaultFlatWidth = 41
)

// Text renders s as lscpu does, for example for the Arm Neoverse Tomcat
// tuning guide's 192-CPU host with CPUs 96-103 online:
//
//	CPU(s):                      192
//	  On-line CPU(s) list:       96-103
//	  Off-line CPU(s) list:      0-95,104-191
//	NUMA:
//	  NUMA node(s):              2
//	  NUMA node0 CPU(s):
//	  NUMA node1 CPU(s):         96-103
//
// Lists use lscpu's form, which differs from the kernel's for pairs
// ("0,1", where sysfs says "0-1"). The "Off-line" line is left out when no
// CPU is offline and the NUMA lines when there are no nodes, as lscpu
// does.
func (s Summary) Text(opts *SummaryOptions) string {
	if opts == nil {
		opts = &SummaryOptions{}
	}
	indent, width := "  ", defaultTreeWidth
	if opts.Flat {
		indent, width = "", defaultFlatWidth
	}
	if opts.Width > 0 {
		width = opts.Width
	}
	var b strings.Builder
	line := func(label, value string) {
		b.WriteString(label)
		if value != "" {
			pad := width - len(label)
			if pad < 1 {
				pad = 1
			}
			b.WriteString(strings.Repeat(" ", pad))
			b.WriteString(value)
		}
		b.WriteByte('\n')
	}
	line("CPU(s):", strconv.Itoa(s.CPUs))
	line(indent+"On-line CPU(s) list:", s.Online.Lscpu())
	if !s.Offline.IsEmpty() {
		line(indent+"Off-line CPU(s) list:", s.Offline.Lscpu())
	}
	if len(s.Nodes) > 0 {
		if !opts.Flat {
			b.WriteString("NUMA:\n")
		}
		line(indent+"NUMA node(s):", strconv.Itoa(len(s.Nodes)))
		for _, n := range s.Nodes {
			line(fmt.Sprintf("%sNUMA node%d CPU(s):", indent, n.Node), n.CPUs.Lscpu())
		}
	}
	return b.String()
}

// String renders s with the default options; see Text.
func (s Summary) String() string { return s.Text(nil) }

func readMask(path string) (CPUSet, error) {
	s, err := readString(path)
	if err != nil {
		return CPUSet{}, err
	}
	set, err := cpuset.ParseMaskNamed(s, path)
	if err != nil {
		return CPUSet{}, fmt.Errorf("tuning: %w", err)
	}
	return set, nil
}
