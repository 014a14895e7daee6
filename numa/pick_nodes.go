package numa

import (
	"fmt"
	"sort"
	"strings"
)

// NodeRule is the rule PickCompact chose its first node by.
type NodeRule int

// The rules, in the order PickCompact tries them.
const (
	// NodeOfDevice: the node of CompactOptions.Device (the NIC) holds
	// the pick, so the CPUs serve the device from its own node.
	NodeOfDevice NodeRule = iota + 1
	// NodeOfIncluded: the pick must contain CompactOptions.Include (the
	// CPUs that cannot go offline), and their node holds it: any other
	// node would spread the CPUs kept online over two nodes.
	NodeOfIncluded
	// NodeNearDevice: the device's node cannot hold the pick (too few
	// CPUs, or none: a CPU-less node); the node nearest to it by the
	// distance table does.
	NodeNearDevice
	// NodeOfFirstCPU: no device node to prefer; the node holding the
	// lowest-numbered candidate CPU (cpu0's on most hosts), among the
	// nodes with memory.
	NodeOfFirstCPU
)

// String names the rule as the constants' comments do.
func (r NodeRule) String() string {
	switch r {
	case NodeOfDevice:
		return "device's node"
	case NodeOfIncluded:
		return "node of the included CPUs"
	case NodeNearDevice:
		return "nearest node to the device"
	case NodeOfFirstCPU:
		return "node of the first CPU"
	}
	return fmt.Sprintf("NodeRule(%d)", int(r))
}

// CompactOptions tunes PickCompact. A nil *CompactOptions is the zero
// value.
type CompactOptions struct {
	// PickOptions choose the CPUs within a node, as for PickCPUs: SMT
	// (default SpreadCores), IncludeOffline (default: online CPUs only)
	// and Exclude (default: none).
	PickOptions
	// Device is the device to keep the CPUs near (the NIC): its node is
	// preferred when it is known and can hold the pick. Default: nil, no
	// device; a Device whose Node is NodeUnknown prefers none either.
	Device *Device
	// Include lists CPUs the pick must contain, counted among its n: the
	// CPUs that cannot go offline (no cpuN/online file) when the pick is
	// the set of CPUs to keep online, since they stay online whatever is
	// picked. Default: none.
	Include CPUSet
}

// CompactPick is where PickCompact put the CPUs, and why there.
type CompactPick struct {
	// CPUs are the CPUs picked.
	CPUs CPUSet
	// Nodes are the nodes the CPUs lie on, in the order they were
	// filled. There is more than one only when no node alone can hold
	// the pick.
	Nodes []int
	// Rule is the rule the node was chosen by; across several nodes, the
	// node the others are the nearest to, which is Nodes[0] unless taking
	// it would need more nodes.
	Rule NodeRule
	// Why says in words which node was chosen and why, and why a
	// preferred one was not: "node 1, enp1s0f0np0's (numa_node 1)".
	Why string
}

// PickCompact returns n CPUs on as few NUMA nodes as can hold them: one,
// unless no node has n candidate CPUs. It is what a performance engineer
// does by hand with numactl -H, whatever the CPU numbering: on a 2-socket
// host that numbers CPUs alternately (even ids on node 0, odd on node 1)
// the first n ids straddle both sockets, but the pick does not.
//
// The node is chosen by these rules, in order (CompactPick.Rule):
//
//  1. NodeOfDevice: the device's node, when known and it can hold the
//     pick — the Arm Neoverse Tomcat tuning guide's NUMA-local rule
//     (keep Tomcat on the NIC's node);
//  2. NodeOfIncluded: the node of the CPUs that must be included (those
//     that cannot go offline), when they lie on one node that can hold
//     the pick: under CPU hotplug they stay online whatever is picked,
//     so any other node spreads the CPUs kept over two nodes;
//  3. NodeNearDevice: when the device's node is known but cannot hold the
//     pick, the nearest node by the distance table that can;
//  4. NodeOfFirstCPU: otherwise the node holding the lowest-numbered
//     candidate CPU, cpu0's on most hosts, preferring nodes with memory
//     (a memoryless node's CPUs allocate every page remotely). cpu0's
//     node because it is the one that rule 2 gives wherever cpu0 cannot go
//     offline (x86 kernels by default), because the guide's own first
//     step keeps cores 0-7, which are there, and because it depends only
//     on the topology, not on free memory or load that differ between a
//     plan and its run, so every run of a study lands on the same node.
//
// Ties between nodes go to the one with memory, then the lower id. When
// no node can hold the pick, it takes the fewest nodes whose CPUs add up
// to n: the node the rules give and the nearest to it, skipping any that
// would make more nodes necessary; all but the last are used whole. Within each node the CPUs are
// chosen as PickCPUs chooses them, the included ones first.
//
// Errors: n below 1, or more included CPUs than n, or an included CPU
// that is excluded or on no node; fewer candidate CPUs on the whole host
// than n matches ErrNotEnoughCPUs. Pure: it reads nothing from the host.
func (t *Topology) PickCompact(n int, opts *CompactOptions) (CompactPick, error) {
	var o CompactOptions
	if opts != nil {
		o = *opts
	}
	if n < 1 {
		return CompactPick{}, fmt.Errorf("numa: asked for %d cpus; expected at least 1", n)
	}
	if o.Include.Len() > n {
		return CompactPick{}, fmt.Errorf("numa: asked for %d cpus, but %d (%s) must be included", n, o.Include.Len(), o.Include)
	}
	if both := o.Include.Intersect(o.Exclude); !both.IsEmpty() {
		return CompactPick{}, fmt.Errorf("numa: cpus %s are both included and excluded", both)
	}
	c := t.compactCandidates(o)
	var required []int // nodes of the included CPUs
	placed := CPUSet{}
	for _, nc := range c {
		if in := o.Include.Intersect(nc.cpus); !in.IsEmpty() {
			required = append(required, nc.node.ID)
			placed = placed.Union(in)
		}
	}
	if lost := o.Include.Difference(placed); !lost.IsEmpty() {
		return CompactPick{}, fmt.Errorf("numa: included cpus %s are on no node's candidate cpus", lost)
	}
	first, rule, why := c.choose(t, n, o, required)
	if first >= 0 {
		cpus, err := t.fill(c.get(first), n, o)
		if err != nil {
			return CompactPick{}, err
		}
		return CompactPick{CPUs: cpus, Nodes: []int{first}, Rule: rule, Why: why}, nil
	}
	return t.pickSpread(c, n, o, required)
}

// nodeCands are a node and the CPUs a pick may take from it.
type nodeCands struct {
	node Node
	cpus CPUSet
}

type candidates []nodeCands

func (t *Topology) compactCandidates(o CompactOptions) candidates {
	c := make(candidates, len(t.Nodes))
	for i, n := range t.Nodes {
		set := n.CPUs
		if o.IncludeOffline {
			set = n.AllCPUs
		}
		c[i] = nodeCands{node: n, cpus: set.Difference(o.Exclude)}
	}
	return c
}

func (c candidates) get(id int) nodeCands {
	for _, nc := range c {
		if nc.node.ID == id {
			return nc
		}
	}
	return nodeCands{node: Node{ID: id}}
}

// memoryless reports whether the node is known to have no memory (a
// node without meminfo is not known to lack it).
func memoryless(n Node) bool {
	return n.Memory != nil && !n.Memory.NoTotal && n.Memory.Total == 0
}

// choose applies the rules for one node: the node, its rule and the
// reason; -1 when no node alone can hold n CPUs.
func (c candidates) choose(t *Topology, n int, o CompactOptions, required []int) (int, NodeRule, string) {
	which := "online cpus"
	if o.IncludeOffline {
		which = "cpus"
	}
	if !o.Exclude.IsEmpty() {
		which += " outside " + o.Exclude.String()
	}
	fits := func(nc nodeCands) bool {
		return nc.cpus.Len() >= n && (len(required) == 0 || len(required) == 1 && required[0] == nc.node.ID)
	}
	var notes []string
	dev := NodeUnknown
	devName := ""
	if o.Device != nil {
		devName = o.Device.Name
		dev = o.Device.Node
		if _, ok := t.Node(dev); dev != NodeUnknown && !ok {
			notes = append(notes, fmt.Sprintf("%s's numa_node %d is not among the nodes %s", devName, dev, t.NodeIDs()))
			dev = NodeUnknown
		} else if dev == NodeUnknown && len(t.Nodes) > 1 {
			what := "numa_node -1"
			if o.Device.Virtual {
				what = "a virtual interface"
			}
			notes = append(notes, fmt.Sprintf("%s has no NUMA node (%s)", devName, what))
		}
	}
	withNotes := func(s string) string {
		if len(notes) == 0 {
			return s
		}
		return s + "; " + strings.Join(notes, "; ")
	}
	if dev != NodeUnknown {
		d := c.get(dev)
		if fits(d) {
			why := fmt.Sprintf("node %d, %s's (numa_node %d)", dev, devName, dev)
			if memoryless(d.node) {
				why += "; it has no memory, so its CPUs allocate from another node"
			}
			return dev, NodeOfDevice, withNotes(why)
		}
		if d.cpus.Len() < n {
			notes = append(notes, fmt.Sprintf("%s's node %d has %d %s, fewer than %d", devName, dev, d.cpus.Len(), which, n))
		} else {
			notes = append(notes, fmt.Sprintf("%s's node %d would leave %s of node %s online beside it", devName, dev, cpuWord(o.Include), joinIDs(required)))
		}
	}
	if len(required) == 1 {
		if r := c.get(required[0]); fits(r) {
			return r.node.ID, NodeOfIncluded, withNotes(fmt.Sprintf("node %d: it holds %s, which cannot go offline and so stays among the cpus kept", r.node.ID, cpuWord(o.Include)))
		}
	}
	var fitting []nodeCands
	for _, nc := range c {
		if fits(nc) {
			fitting = append(fitting, nc)
		}
	}
	if len(fitting) == 0 {
		return -1, 0, withNotes("")
	}
	if dev != NodeUnknown {
		best := fitting[0]
		for _, nc := range fitting[1:] {
			if nearer(t, dev, nc, best) {
				best = nc
			}
		}
		dist := "distance unknown"
		if d, ok := t.Distance(dev, best.node.ID); ok {
			dist = fmt.Sprintf("distance %d", d)
		}
		return best.node.ID, NodeNearDevice, fmt.Sprintf("node %d, the nearest to %s's node %d (%s) that has %d %s; %s",
			best.node.ID, devName, dev, dist, n, which, strings.Join(notes, "; "))
	}
	best := fitting[0]
	for _, nc := range fitting[1:] {
		if memoryless(best.node) != memoryless(nc.node) {
			if memoryless(best.node) {
				best = nc
			}
			continue
		}
		if nc.cpus.Min() < best.cpus.Min() {
			best = nc
		}
	}
	why := fmt.Sprintf("node %d: it holds cpu%d, the lowest-numbered of the nodes with %d %s", best.node.ID, best.cpus.Min(), n, which)
	for _, nc := range fitting {
		if memoryless(nc.node) && nc.cpus.Min() < best.cpus.Min() {
			why = fmt.Sprintf("node %d: it holds cpu%d, the lowest-numbered of the nodes with memory and %d %s (node %d, with cpu%d, has none)",
				best.node.ID, best.cpus.Min(), n, which, nc.node.ID, nc.cpus.Min())
			break
		}
	}
	return best.node.ID, NodeOfFirstCPU, withNotes(why)
}

// nearer reports whether a is a better node than b to stand in for node
// from: nearer by distance, then with memory, then with the lower id.
func nearer(t *Topology, from int, a, b nodeCands) bool {
	da, oka := t.Distance(from, a.node.ID)
	db, okb := t.Distance(from, b.node.ID)
	if !oka {
		da = 1 << 16
	}
	if !okb {
		db = 1 << 16
	}
	if da != db {
		return da < db
	}
	if ma, mb := memoryless(a.node), memoryless(b.node); ma != mb {
		return mb
	}
	return a.node.ID < b.node.ID
}

// fill picks m CPUs of one node: its included CPUs, then the others in
// the order PickCPUs takes them, so the included ones stand where that
// order would put them and do not shift it (cpu0's SMT sibling is not
// taken as a core of its own).
func (t *Topology) fill(nc nodeCands, m int, o CompactOptions) (CPUSet, error) {
	if nc.cpus.Len() < m {
		return CPUSet{}, &NotEnoughCPUsError{Node: nc.node.ID, Want: m, Have: nc.cpus, OnlineOnly: !o.IncludeOffline}
	}
	picked := o.Include.Intersect(nc.cpus)
	for _, id := range t.pickOrder(nc.cpus, o.SMT, nc.cpus.Len()) {
		if picked.Len() >= m {
			break
		}
		picked = picked.With(id)
	}
	return picked, nil
}

// pickSpread picks n CPUs over the fewest nodes when no node alone holds
// them.
func (t *Topology) pickSpread(c candidates, n int, o CompactOptions, required []int) (CompactPick, error) {
	total, largest := 0, 0
	for _, nc := range c {
		total += nc.cpus.Len()
		largest = max(largest, nc.cpus.Len())
	}
	if total < n {
		return CompactPick{}, fmt.Errorf("%w: the host's %d nodes have %d candidate cpus, asked for %d", ErrNotEnoughCPUs, len(c), total, n)
	}
	// The anchor is the node the one-node rules would prefer.
	anchor, rule, why := -1, NodeOfFirstCPU, ""
	switch {
	case o.Device != nil && o.Device.Node != NodeUnknown && c.get(o.Device.Node).cpus.Len() > 0 && (len(required) == 0 || contains(required, o.Device.Node)):
		anchor, rule = o.Device.Node, NodeOfDevice
		why = fmt.Sprintf("node %d, %s's (numa_node %d)", anchor, o.Device.Name, anchor)
	case len(required) > 0:
		anchor, rule = required[0], NodeOfIncluded
		why = fmt.Sprintf("node %d, which holds %s, which cannot go offline", anchor, cpuWord(o.Include.Intersect(c.get(anchor).cpus)))
	case o.Device != nil && o.Device.Node != NodeUnknown:
		from := o.Device.Node
		for _, nc := range c {
			if nc.cpus.Len() > 0 && (anchor < 0 || nearer(t, from, nc, c.get(anchor))) {
				anchor = nc.node.ID
			}
		}
		rule = NodeNearDevice
		why = fmt.Sprintf("node %d, the nearest with cpus to %s's node %d", anchor, o.Device.Name, from)
	default:
		for _, nc := range c {
			if nc.cpus.Len() == 0 {
				continue
			}
			if a := c.get(anchor); anchor < 0 || memoryless(a.node) && !memoryless(nc.node) ||
				memoryless(a.node) == memoryless(nc.node) && nc.cpus.Min() < a.cpus.Min() {
				anchor = nc.node.ID
			}
		}
		why = fmt.Sprintf("node %d, which holds cpu%d, the lowest-numbered", anchor, c.get(anchor).cpus.Min())
	}
	// The candidate nodes: the anchor, then the others nearest to it.
	var others []nodeCands
	for _, nc := range c {
		if nc.node.ID != anchor && nc.cpus.Len() > 0 {
			others = append(others, nc)
		}
	}
	sort.SliceStable(others, func(i, j int) bool { return nearer(t, anchor, others[i], others[j]) })
	cands := append([]nodeCands{c.get(anchor)}, others...)
	// The fewest nodes, k: the required ones, then the largest others.
	chosen := map[int]bool{}
	have := 0
	for _, r := range required {
		chosen[r] = true
		have += c.get(r).cpus.Len()
	}
	var free []int
	for _, nc := range cands {
		if !chosen[nc.node.ID] {
			free = append(free, nc.cpus.Len())
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(free)))
	k := len(chosen)
	for i := 0; have < n && i < len(free); i++ {
		have += free[i]
		k++
	}
	// Take the candidates in order while the rest can still be filled
	// within k nodes: the anchor and its nearest, unless that would take
	// more nodes than needed.
	for i, nc := range cands {
		if len(chosen) == k {
			break
		}
		if chosen[nc.node.ID] {
			continue
		}
		reach := nc.cpus.Len()
		for id := range chosen {
			reach += c.get(id).cpus.Len()
		}
		var rest []int
		for _, later := range cands[i+1:] {
			if !chosen[later.node.ID] {
				rest = append(rest, later.cpus.Len())
			}
		}
		sort.Sort(sort.Reverse(sort.IntSlice(rest)))
		for j := 0; j < k-len(chosen)-1 && j < len(rest); j++ {
			reach += rest[j]
		}
		if reach >= n {
			chosen[nc.node.ID] = true
		}
	}
	var order []int
	for _, nc := range cands {
		if chosen[nc.node.ID] {
			order = append(order, nc.node.ID)
		}
	}
	if !chosen[anchor] {
		why += fmt.Sprintf(" (taking node %d itself would need %d nodes)", anchor, k+1)
	}
	// Fill in order, whole nodes first, keeping room for the included
	// CPUs of the nodes still to come.
	var picked CPUSet
	left := n
	for i, id := range order {
		nc := c.get(id)
		reserve := 0
		for _, later := range order[i+1:] {
			reserve += o.Include.Intersect(c.get(later).cpus).Len()
		}
		m := max(o.Include.Intersect(nc.cpus).Len(), min(nc.cpus.Len(), left-reserve))
		if m == 0 {
			continue
		}
		got, err := t.fill(nc, m, o)
		if err != nil {
			return CompactPick{}, err
		}
		picked = picked.Union(got)
		left -= got.Len()
	}
	return CompactPick{CPUs: picked, Nodes: order, Rule: rule,
		Why: fmt.Sprintf("nodes %s: no node has %d cpus (the most is %d), so the fewest that hold them, nearest first to %s",
			joinIDs(order), n, largest, why)}, nil
}

// joinIDs lists node ids as "0,2".
func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

// cpuWord names a set of CPUs as a sentence does: "cpu0", "cpus 0-1".
func cpuWord(s CPUSet) string {
	if s.Len() == 1 {
		return fmt.Sprintf("cpu%d", s.Min())
	}
	return "cpus " + s.String()
}

func contains(ids []int, id int) bool {
	for _, v := range ids {
		if v == id {
			return true
		}
	}
	return false
}
