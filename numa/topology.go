package numa

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
)

// LocalDistance is the distance of a node to itself in the ACPI SLIT scale
// the kernel reports; remote nodes are larger.
const LocalDistance = 10

// Topology is the host's NUMA layout at the time it was read.
type Topology struct {
	// Nodes in ascending id order. Ids may be sparse (0, 1, 16, 17).
	Nodes []Node
	// CPUs are every CPU the host has, online or not, in ascending id order.
	CPUs []CPU
	// Online holds the online CPUs (/sys/devices/system/cpu/online, or the
	// union of the nodes' cpulists when that file is absent).
	Online CPUSet
	// Synthetic is true when the host has no /sys/devices/system/node (a
	// kernel built without CONFIG_NUMA): Nodes then holds one node 0 with
	// every CPU, memory from /proc/meminfo and distance LocalDistance.
	Synthetic bool
}

// Node is one NUMA node.
type Node struct {
	ID int
	// CPUs are the node's online CPUs (nodeN/cpulist). An offline CPU drops
	// out of this list.
	CPUs CPUSet
	// AllCPUs are the node's CPUs online or not (the cpuN/nodeM links).
	AllCPUs CPUSet
	// Memory is from nodeN/meminfo; nil when the file is absent or has
	// neither MemTotal nor MemFree (then numactl prints "<not
	// available>"). A file with one of the two gives a Memory with NoTotal
	// or NoFree set.
	Memory *Memory
	// Distances to every node, indexed like Topology.Nodes; nil when
	// nodeN/distance is absent.
	Distances []int
}

// HasCPUs reports whether the node has CPUs, online or not. A node without
// any is a CPU-less (memory-only) node.
func (n Node) HasCPUs() bool { return !n.AllCPUs.IsEmpty() }

// HasMemory reports whether the node has memory. A node without is a
// memoryless node: its CPUs allocate from another node.
func (n Node) HasMemory() bool { return n.Memory != nil && n.Memory.Total > 0 }

// CPU is one logical CPU.
type CPU struct {
	ID     int
	Node   int  // NUMA node, or NodeUnknown when no node claims it
	Online bool // cpuN/online, or the cpu/online list
	// Package and Core are topology/physical_package_id and core_id; -1
	// when unknown (an offline CPU has no topology/ directory).
	Package, Core int
	// Siblings are the hardware threads sharing this CPU's physical core,
	// this CPU included (topology/core_cpus_list, or thread_siblings_list
	// on older kernels). Just this CPU when unknown.
	Siblings CPUSet
}

// Node returns the node with id, or false.
func (t *Topology) Node(id int) (Node, bool) {
	for _, n := range t.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// NodeIDs returns the node ids as a set.
func (t *Topology) NodeIDs() CPUSet {
	ids := make([]int, len(t.Nodes))
	for i, n := range t.Nodes {
		ids[i] = n.ID
	}
	return cpuset.Of(ids...)
}

// Distance returns the distance from node from to node to, or false when
// either node is absent or the host reports no distances.
func (t *Topology) Distance(from, to int) (int, bool) {
	fi, ti := t.index(from), t.index(to)
	if fi < 0 || ti < 0 || len(t.Nodes[fi].Distances) != len(t.Nodes) {
		return 0, false
	}
	return t.Nodes[fi].Distances[ti], true
}

// CPU returns the CPU with id, or false.
func (t *Topology) CPU(id int) (CPU, bool) {
	i := sort.Search(len(t.CPUs), func(i int) bool { return t.CPUs[i].ID >= id })
	if i < len(t.CPUs) && t.CPUs[i].ID == id {
		return t.CPUs[i], true
	}
	return CPU{}, false
}

func (t *Topology) index(id int) int {
	for i, n := range t.Nodes {
		if n.ID == id {
			return i
		}
	}
	return -1
}

// Topology reads the NUMA topology under the host root:
//
//   - /sys/devices/system/node/nodeN/cpulist, meminfo and distance for every
//     nodeN directory;
//   - /sys/devices/system/cpu/online, and per CPU cpuN/online, the cpuN/nodeM
//     links (falling back to the nodeM/cpuN links) and topology/
//     (physical_package_id, core_id, core_cpus_list or thread_siblings_list);
//   - /proc/meminfo only when the host has no node directory.
//
// It needs no privilege. A missing meminfo or distance leaves Memory or
// Distances nil, as numactl shows them; a meminfo with MemTotal but no
// MemFree (or the reverse) is read as numactl reads it, the missing value
// marked (Memory.NoFree, Memory.NoTotal), not an error. Trees of older kernels and captured
// trees are read as numactl reads them: a node without cpulist is read
// from its hex cpumap, and an empty cpuN/online counts as a missing one. A
// distance row is indexed by the online node ids, as the kernel prints it
// (then node/possible, then the node directories, whichever has one id per
// entry), so a node whose neighbours are missing from the tree still gets
// its own distances; numactl gives the row's entries to the nodes present
// in order, and is wrong there. A root holding neither
// sys/devices/system/node nor sys/devices/system/cpu is an error matching
// os.ErrNotExist, not a host of one empty node. A node with neither
// cpulist nor cpumap, or any file whose content is not in the kernel's
// form, is an error naming the file (errors.Is(err, ErrParse) for content,
// os.ErrNotExist for a missing file).
func (h *Host) Topology() (*Topology, error) {
	t := &Topology{}
	cpus, err := h.readCPUs()
	if err != nil {
		return nil, err
	}
	nodeDir := h.root.Sys("devices", "system", "node")
	ids, err := listIndexed(nodeDir, "node")
	switch {
	case errors.Is(err, fs.ErrNotExist) && cpus.noDir:
		// Not a kernel without NUMA (it still has cpu/): not a sysfs.
		return nil, fmt.Errorf("numa: neither %s nor %s exists: the root holds no Linux sysfs (a root must hold sys/ as the kernel mounts it): %w", nodeDir, h.root.Sys("devices", "system", "cpu"), fs.ErrNotExist)
	case errors.Is(err, fs.ErrNotExist):
		return h.synthetic(cpus)
	case err != nil:
		return nil, fmt.Errorf("numa: %w", err)
	case len(ids) == 0:
		return h.synthetic(cpus)
	}
	byNode := map[int][]int{} // node -> cpus from cpuN/nodeM links
	for _, c := range cpus.list {
		if c.Node != NodeUnknown {
			byNode[c.Node] = append(byNode[c.Node], c.ID)
		}
	}
	rowIDs, err := distanceRowIDs(nodeDir, ids)
	if err != nil {
		return nil, err
	}
	var onlineUnion CPUSet
	for _, id := range ids {
		dir := filepath.Join(nodeDir, "node"+strconv.Itoa(id))
		n := Node{ID: id}
		if n.CPUs, err = readNodeCPUs(dir); err != nil {
			return nil, fmt.Errorf("numa: node %d: %w", id, err)
		}
		onlineUnion = onlineUnion.Union(n.CPUs)
		if len(byNode[id]) == 0 {
			// No cpuN/nodeM links (older captures): the node's own cpuM links.
			links, _ := listIndexed(dir, "cpu")
			byNode[id] = links
		}
		n.AllCPUs = n.CPUs.Union(cpuset.Of(byNode[id]...))
		p := filepath.Join(dir, "meminfo")
		if b, err := hostfs.ReadFile(p); err == nil {
			m, ok, err := parseNodeMeminfo(string(b), id, p)
			if err != nil {
				return nil, err
			}
			if ok {
				n.Memory = &m
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("numa: node %d: %w", id, err)
		}
		p = filepath.Join(dir, "distance")
		if s, err := hostfs.ReadString(p); err == nil {
			row, err := parseDistance(s, p)
			if err != nil {
				return nil, err
			}
			if n.Distances, err = distancesByID(row, rowIDs, ids); err != nil {
				return nil, &ParseError{Path: p, Text: s, Reason: err.Error()}
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("numa: node %d: %w", id, err)
		}
		t.Nodes = append(t.Nodes, n)
	}
	t.Online = cpus.online
	if !cpus.haveOnline {
		t.Online = onlineUnion
	}
	t.CPUs = h.finishCPUs(cpus, t)
	return t, nil
}

// synthetic builds the one-node view of a host without NUMA support.
func (h *Host) synthetic(cpus cpuInfo) (*Topology, error) {
	all := cpus.ids
	online := cpus.online
	if !cpus.haveOnline {
		online = all
	}
	n := Node{ID: 0, CPUs: online, AllCPUs: all.Union(online), Distances: []int{LocalDistance}}
	p := h.root.Proc("meminfo")
	if b, err := hostfs.ReadFile(p); err == nil {
		m, ok, err := parseProcMeminfo(string(b), p)
		if err != nil {
			return nil, err
		}
		if ok {
			n.Memory = &m
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("numa: %w", err)
	}
	t := &Topology{Nodes: []Node{n}, Online: online, Synthetic: true}
	for i := range cpus.list {
		cpus.list[i].Node = 0
	}
	t.CPUs = h.finishCPUs(cpus, t)
	return t, nil
}

// parseProcMeminfo reads MemTotal and MemFree from /proc/meminfo
// ("MemTotal:  4286200 kB").
func parseProcMeminfo(text, path string) (Memory, bool, error) {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "MemTotal:") || strings.HasPrefix(line, "MemFree:") {
			b.WriteString("Node 0 " + line + "\n")
		}
	}
	return parseNodeMeminfo(b.String(), 0, path)
}

type cpuInfo struct {
	list       []CPU
	ids        CPUSet
	online     CPUSet
	haveOnline bool
	noDir      bool // no /sys/devices/system/cpu at all
}

// readNodeCPUs reads a node's online CPUs from nodeN/cpulist, or, on older
// kernels and captures that lack it, from the hex mask nodeN/cpumap (which
// numactl reads).
func readNodeCPUs(dir string) (CPUSet, error) {
	p := filepath.Join(dir, "cpulist")
	s, err := hostfs.ReadString(p)
	if errors.Is(err, fs.ErrNotExist) {
		m := filepath.Join(dir, "cpumap")
		ms, merr := hostfs.ReadString(m)
		if merr != nil {
			return CPUSet{}, fmt.Errorf("neither cpulist nor cpumap: %w", err)
		}
		set, err := cpuset.ParseMaskNamed(ms, m)
		if err != nil {
			return CPUSet{}, fmt.Errorf("%w: %w", ErrParse, err)
		}
		return set, nil
	}
	if err != nil {
		return CPUSet{}, err
	}
	set, err := cpuset.ParseNamed(s, p)
	if err != nil {
		return CPUSet{}, fmt.Errorf("%w: %w", ErrParse, err)
	}
	return set, nil
}

// distanceRowIDs returns the lists of node ids a nodeN/distance row may be
// indexed by, in the order to try them. The kernel prints one distance per
// online node, in id order (drivers/base/node.c, node_read_distance:
// for_each_online_node), so the row is indexed by node/online; a captured
// tree can lack that file, or the directories of some online nodes, so
// node/possible and the node directories present come next.
func distanceRowIDs(nodeDir string, dirs []int) ([][]int, error) {
	var lists [][]int
	for _, name := range []string{"online", "possible"} {
		p := filepath.Join(nodeDir, name)
		s, err := hostfs.ReadString(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && s == "" {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("numa: %w", err)
		}
		set, err := cpuset.ParseNamed(s, p)
		if err != nil {
			return nil, fmt.Errorf("numa: %w: %w", ErrParse, err)
		}
		lists = append(lists, set.IDs())
	}
	return append(lists, dirs), nil
}

// distancesByID picks from row the distances to the nodes present (ids),
// in their order, indexing row by the first of rowIDs that has one id per
// entry of the row.
func distancesByID(row []int, rowIDs [][]int, ids []int) ([]int, error) {
	var by []int
	for _, l := range rowIDs {
		if len(l) == len(row) {
			by = l
			break
		}
	}
	if by == nil {
		return nil, fmt.Errorf("%d distances for %d online nodes (%s); expected one per online node", len(row), len(rowIDs[0]), cpuset.Of(rowIDs[0]...))
	}
	rowIDs0 := by
	pos := make(map[int]int, len(rowIDs0))
	for i, id := range rowIDs0 {
		pos[id] = i
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		k, ok := pos[id]
		if !ok {
			return nil, fmt.Errorf("node %d has a directory but is not among the nodes %s the row is indexed by", id, cpuset.Of(rowIDs0...))
		}
		out[i] = row[k]
	}
	return out, nil
}

// readCPUs lists /sys/devices/system/cpu/cpuN with their node links, online
// state and core topology.
func (h *Host) readCPUs() (cpuInfo, error) {
	var ci cpuInfo
	cpuDir := h.root.Sys("devices", "system", "cpu")
	ids, err := listIndexed(cpuDir, "cpu")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ci, fmt.Errorf("numa: %w", err)
	}
	ci.noDir = err != nil
	p := filepath.Join(cpuDir, "online")
	if s, err := hostfs.ReadString(p); err == nil {
		if ci.online, err = cpuset.ParseNamed(s, p); err != nil {
			return ci, fmt.Errorf("numa: %w: %w", ErrParse, err)
		}
		ci.haveOnline = true
	}
	for _, id := range ids {
		dir := filepath.Join(cpuDir, "cpu"+strconv.Itoa(id))
		c := CPU{ID: id, Node: NodeUnknown, Package: -1, Core: -1, Siblings: cpuset.Of(id)}
		if nodes, _ := listIndexed(dir, "node"); len(nodes) > 0 {
			c.Node = nodes[0]
		}
		p := filepath.Join(dir, "online")
		// An empty online file (seen in captured trees) says nothing: it
		// is read as a missing one.
		if v, err := hostfs.ReadString(p); err == nil && v != "" {
			switch v {
			case "0":
			case "1":
				c.Online = true
			default:
				return ci, &ParseError{Path: p, Text: v, Reason: "expected 0 or 1"}
			}
			if !ci.haveOnline && c.Online {
				ci.online = ci.online.With(id)
			}
		} else {
			// No online file: the CPU cannot be hotplugged (cpu0 on x86), so
			// it is online unless the global list says otherwise.
			c.Online = !ci.haveOnline || ci.online.Contains(id)
			if !ci.haveOnline {
				ci.online = ci.online.With(id)
			}
		}
		if ci.haveOnline {
			c.Online = ci.online.Contains(id)
		}
		topo := filepath.Join(dir, "topology")
		if v, err := hostfs.ReadInt(filepath.Join(topo, "physical_package_id")); err == nil {
			c.Package = int(v)
		}
		if v, err := hostfs.ReadInt(filepath.Join(topo, "core_id")); err == nil {
			c.Core = int(v)
		}
		for _, name := range []string{"core_cpus_list", "thread_siblings_list"} {
			p := filepath.Join(topo, name)
			s, err := hostfs.ReadString(p)
			if err != nil {
				continue
			}
			sib, err := cpuset.ParseNamed(s, p)
			if err != nil {
				return ci, fmt.Errorf("numa: %w: %w", ErrParse, err)
			}
			if !sib.IsEmpty() {
				c.Siblings = sib.With(id)
			}
			break
		}
		ci.list = append(ci.list, c)
	}
	ci.ids = cpuset.Of(ids...)
	return ci, nil
}

// finishCPUs fills what the node files know and the cpu directories did
// not: a CPU listed in a node's cpulist but without a cpuN/nodeM link, and
// CPUs that appear only in node lists.
func (h *Host) finishCPUs(ci cpuInfo, t *Topology) []CPU {
	byID := map[int]int{}
	for i, c := range ci.list {
		byID[c.ID] = i
	}
	list := ci.list
	for _, n := range t.Nodes {
		for _, id := range n.AllCPUs.IDs() {
			i, ok := byID[id]
			if !ok {
				list = append(list, CPU{ID: id, Node: n.ID, Online: t.Online.Contains(id), Package: -1, Core: -1, Siblings: cpuset.Of(id)})
				byID[id] = len(list) - 1
				continue
			}
			if list[i].Node == NodeUnknown {
				list[i].Node = n.ID
			}
		}
	}
	sort.Slice(list, func(a, b int) bool { return list[a].ID < list[b].ID })
	return list
}

// listIndexed returns the N of the entries named prefixN in dir, ascending.
func listIndexed(dir, prefix string) ([]int, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, &hostfs.PathError{Op: "read", Path: dir, Err: unwrapPathErr(err)}
	}
	var ids []int
	for _, de := range des {
		rest, ok := strings.CutPrefix(de.Name(), prefix)
		if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || n > cpuset.MaxID {
			continue
		}
		ids = append(ids, n)
	}
	sort.Ints(ids)
	return ids, nil
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// AllCPUs returns every CPU of the host, online or not: those in CPUs and
// in the nodes' AllCPUs.
func (t *Topology) AllCPUs() CPUSet {
	ids := make([]int, len(t.CPUs))
	for i, c := range t.CPUs {
		ids[i] = c.ID
	}
	all := cpuset.Of(ids...)
	for _, n := range t.Nodes {
		all = all.Union(n.AllCPUs)
	}
	return all
}
