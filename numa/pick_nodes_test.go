package numa_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/numa"
)

// tnode is one node of a Topology value built by topo.
type tnode struct {
	id     int
	online string // Node.CPUs
	all    string // Node.AllCPUs; "" = online
	memMB  int    // MemTotal in MiB; -1 = no meminfo
	dist   []int
}

// topo builds a Topology value (no files) from nodes; sib maps a CPU to
// its core's CPUs (SMT siblings), default the CPU alone.
func topo(t *testing.T, sib map[int]string, nodes ...tnode) *numa.Topology {
	t.Helper()
	tp := &numa.Topology{}
	for _, n := range nodes {
		on, all := nodeSets(t, n.online, n.all)
		nd := numa.Node{ID: n.id, CPUs: on, AllCPUs: all, Distances: n.dist}
		if n.memMB >= 0 {
			nd.Memory = &numa.Memory{Total: uint64(n.memMB) << 20, Free: uint64(n.memMB) << 19}
		}
		tp.Nodes = append(tp.Nodes, nd)
		tp.Online = tp.Online.Union(on)
		for _, id := range all.IDs() {
			c := numa.CPU{ID: id, Node: n.id, Online: on.Contains(id), Package: n.id, Core: id, Siblings: numa.CPUs(id)}
			if s, ok := sib[id]; ok {
				c.Siblings, _ = nodeSets(t, s, "")
			}
			tp.CPUs = append(tp.CPUs, c)
		}
	}
	sortCPUs(tp.CPUs)
	return tp
}

func sortCPUs(c []numa.CPU) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].ID < c[j-1].ID; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// interleaved is a 2-socket host numbered as Intel's firmware often does
// (the captured Xeon L5640: node 0 even ids, node 1 odd), 16 cores a
// socket with their SMT siblings 32 ids on.
func interleaved(t *testing.T) *numa.Topology {
	sib := map[int]string{}
	for c := 0; c < 32; c++ {
		sib[c] = numa.CPUs(c, c+32).String()
		sib[c+32] = sib[c]
	}
	var even, odd []int
	for c := 0; c < 64; c++ {
		if c%2 == 0 {
			even = append(even, c)
		} else {
			odd = append(odd, c)
		}
	}
	return topo(t, sib,
		tnode{id: 0, online: numa.CPUs(even...).String(), memMB: 65536, dist: []int{10, 21}},
		tnode{id: 1, online: numa.CPUs(odd...).String(), memMB: 65536, dist: []int{21, 10}})
}

// fourNodes is a 2-socket, 4-node host (Kunpeng 920's distances
// 10/16/32/33) of 8 CPUs a node, node 2 with 4.
func fourNodes(t *testing.T) *numa.Topology {
	return topo(t, nil,
		tnode{id: 0, online: "0-7", memMB: 1024, dist: []int{10, 16, 32, 33}},
		tnode{id: 1, online: "8-15", memMB: 1024, dist: []int{16, 10, 33, 32}},
		tnode{id: 2, online: "16-19", memMB: 1024, dist: []int{32, 33, 10, 16}},
		tnode{id: 3, online: "20-27", memMB: 1024, dist: []int{33, 32, 16, 10}})
}

// threeNodes is a host of three nodes with these CPUs, node 2 near node
// 0 (12) and node 1 far from both (20).
func threeNodes(cpus0, cpus1, cpus2 string) func(*testing.T) *numa.Topology {
	return func(t *testing.T) *numa.Topology {
		return topo(t, nil, tnode{id: 0, online: cpus0, memMB: 1, dist: []int{10, 20, 12}},
			tnode{id: 1, online: cpus1, memMB: 1, dist: []int{20, 10, 20}},
			tnode{id: 2, online: cpus2, memMB: 1, dist: []int{12, 20, 10}})
	}
}

func nic(node int) *numa.Device { return &numa.Device{Name: "eth0", Node: node} }

func TestPickCompact(t *testing.T) {
	tests := []struct {
		name  string
		topo  func(*testing.T) *numa.Topology
		n     int
		opts  *numa.CompactOptions
		cpus  string
		nodes []int
		rule  numa.NodeRule
		why   string
	}{
		{name: "interleaved, no NIC: node 0's even ids, one thread a core",
			topo: interleaved, n: 8, cpus: "0,2,4,6,8,10,12,14", nodes: []int{0}, rule: numa.NodeOfFirstCPU,
			why: "node 0: it holds cpu0, the lowest-numbered of the nodes with 8 online cpus"},
		{name: "interleaved, NIC on node 1: its odd ids",
			topo: interleaved, n: 8, opts: &numa.CompactOptions{Device: nic(1)},
			cpus: "1,3,5,7,9,11,13,15", nodes: []int{1}, rule: numa.NodeOfDevice, why: "node 1, eth0's (numa_node 1)"},
		{name: "interleaved, PackCores fills siblings",
			topo: interleaved, n: 4, opts: &numa.CompactOptions{PickOptions: numa.PickOptions{SMT: numa.PackCores}, Device: nic(1)},
			cpus: "1,3,33,35", nodes: []int{1}, rule: numa.NodeOfDevice},
		{name: "interleaved, NIC numa_node -1: cpu0's node, said so",
			topo: interleaved, n: 8, opts: &numa.CompactOptions{Device: nic(numa.NodeUnknown)},
			cpus: "0,2,4,6,8,10,12,14", nodes: []int{0}, rule: numa.NodeOfFirstCPU,
			why: "node 0: it holds cpu0, the lowest-numbered of the nodes with 8 online cpus; eth0 has no NUMA node (numa_node -1)"},
		{name: "interleaved, cpu0 cannot go offline, NIC on node 1: node 0",
			topo: interleaved, n: 8, opts: &numa.CompactOptions{Device: nic(1), Include: numa.CPUs(0)},
			cpus: "0,2,4,6,8,10,12,14", nodes: []int{0}, rule: numa.NodeOfIncluded,
			why: "node 0: it holds cpu0, which cannot go offline and so stays among the cpus kept; eth0's node 1 would leave cpu0 of node 0 online beside it"},
		{name: "interleaved, 20 cpus with cpu0 kept: its sibling 32 comes after the other cores, as without it",
			topo: interleaved, n: 20, opts: &numa.CompactOptions{Include: numa.CPUs(0)},
			cpus: "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38", nodes: []int{0}, rule: numa.NodeOfIncluded},
		{name: "the NIC's node too small: the nearest that holds them",
			topo: fourNodes, n: 8, opts: &numa.CompactOptions{Device: nic(2)},
			cpus: "20-27", nodes: []int{3}, rule: numa.NodeNearDevice,
			why: "node 3, the nearest to eth0's node 2 (distance 16) that has 8 online cpus; eth0's node 2 has 4 online cpus, fewer than 8"},
		{name: "the NIC's node big enough for 4",
			topo: fourNodes, n: 4, opts: &numa.CompactOptions{Device: nic(2)},
			cpus: "16-19", nodes: []int{2}, rule: numa.NodeOfDevice},
		{name: "no node holds 12: two nodes, the NIC's whole, then the nearest",
			topo: fourNodes, n: 12, opts: &numa.CompactOptions{Device: nic(2)},
			cpus: "16-27", nodes: []int{2, 3}, rule: numa.NodeOfDevice,
			why: "nodes 2,3: no node has 12 cpus (the most is 8), so the fewest that hold them, nearest first to node 2, eth0's (numa_node 2)"},
		{name: "20 cpus from node 2: three nodes, its nearest whole, the next in part",
			topo: fourNodes, n: 20, opts: &numa.CompactOptions{Device: nic(2)},
			cpus: "0-7,16-27", nodes: []int{2, 3, 0}, rule: numa.NodeOfDevice},
		{name: "the fewest nodes, not the nearest first: a small near node is skipped",
			topo: threeNodes("0-7", "8-15", "16-19"), n: 16,
			cpus: "0-15", nodes: []int{0, 1}, rule: numa.NodeOfFirstCPU,
			why: "nodes 0,1: no node has 16 cpus (the most is 8), so the fewest that hold them, nearest first to node 0, which holds cpu0, the lowest-numbered"},
		{name: "the fewest nodes even without cpu0's node",
			topo: threeNodes("0-3", "4-11", "12-19"), n: 16,
			cpus: "4-19", nodes: []int{2, 1}, rule: numa.NodeOfFirstCPU,
			why: "nodes 2,1: no node has 16 cpus (the most is 8), so the fewest that hold them, nearest first to node 0, which holds cpu0, the lowest-numbered (taking node 0 itself would need 3 nodes)"},
		{name: "no NIC, 12 cpus: from cpu0's node and its nearest",
			topo: fourNodes, n: 12, cpus: "0-11", nodes: []int{0, 1}, rule: numa.NodeOfFirstCPU},
		{name: "the guide's host after its first step: node 1's CPUs offline, brought online",
			topo: func(t *testing.T) *numa.Topology {
				return topo(t, nil, tnode{id: 0, online: "0-7", all: "0-95", memMB: 193502, dist: []int{10, 100}},
					tnode{id: 1, online: "", all: "96-191", memMB: 192625, dist: []int{100, 10}})
			},
			n: 8, opts: &numa.CompactOptions{PickOptions: numa.PickOptions{IncludeOffline: true}, Device: &numa.Device{Name: "enp1s0f0np0", Node: 1}},
			cpus: "96-103", nodes: []int{1}, rule: numa.NodeOfDevice, why: "node 1, enp1s0f0np0's (numa_node 1)"},
		{name: "the same, online CPUs only: node 1 has none",
			topo: func(t *testing.T) *numa.Topology {
				return topo(t, nil, tnode{id: 0, online: "0-7", all: "0-95", memMB: 193502, dist: []int{10, 100}},
					tnode{id: 1, online: "", all: "96-191", memMB: 192625, dist: []int{100, 10}})
			},
			n: 8, opts: &numa.CompactOptions{Device: &numa.Device{Name: "enp1s0f0np0", Node: 1}},
			cpus: "0-7", nodes: []int{0}, rule: numa.NodeNearDevice,
			why: "node 0, the nearest to enp1s0f0np0's node 1 (distance 100) that has 8 online cpus; enp1s0f0np0's node 1 has 0 online cpus, fewer than 8"},
		{name: "a memoryless node 0 is passed over",
			topo: func(t *testing.T) *numa.Topology {
				return topo(t, nil, tnode{id: 0, online: "0-5,24-29", memMB: 0}, tnode{id: 1, online: "6-11,30-35", memMB: 64307},
					tnode{id: 2, online: "12-17,36-41", memMB: 64472}, tnode{id: 3, online: "18-23,42-47", memMB: 0})
			},
			n: 8, cpus: "6-11,30-31", nodes: []int{1}, rule: numa.NodeOfFirstCPU,
			why: "node 1: it holds cpu6, the lowest-numbered of the nodes with memory and 8 online cpus (node 0, with cpu0, has none)"},
		{name: "a memoryless node that cpu0 pins is still taken",
			topo: func(t *testing.T) *numa.Topology {
				return topo(t, nil, tnode{id: 0, online: "0-5,24-29", memMB: 0}, tnode{id: 1, online: "6-11,30-35", memMB: 64307})
			},
			n: 8, opts: &numa.CompactOptions{Include: numa.CPUs(0)}, cpus: "0-5,24-25", nodes: []int{0}, rule: numa.NodeOfIncluded},
		{name: "a CPU-less NIC node (memory only): the nearest with CPUs",
			topo: func(t *testing.T) *numa.Topology {
				return topo(t, nil, tnode{id: 0, online: "0-15", memMB: 1024, dist: []int{10, 20, 40}},
					tnode{id: 1, online: "16-31", memMB: 1024, dist: []int{20, 10, 12}},
					tnode{id: 2, online: "", memMB: 4096, dist: []int{40, 12, 10}})
			},
			n: 8, opts: &numa.CompactOptions{Device: nic(2)}, cpus: "16-23", nodes: []int{1}, rule: numa.NodeNearDevice},
		{name: "excluded CPUs are not candidates",
			topo: fourNodes, n: 8, opts: &numa.CompactOptions{PickOptions: numa.PickOptions{Exclude: numa.CPUs(0)}},
			cpus: "8-15", nodes: []int{1}, rule: numa.NodeOfFirstCPU,
			why: "node 1: it holds cpu8, the lowest-numbered of the nodes with 8 online cpus outside 0"},
		{name: "sparse node ids",
			topo: func(t *testing.T) *numa.Topology {
				return topo(t, nil, tnode{id: 16, online: "80-87", memMB: 1}, tnode{id: 17, online: "120-127", memMB: 1})
			},
			n: 8, opts: &numa.CompactOptions{Device: nic(17)}, cpus: "120-127", nodes: []int{17}, rule: numa.NodeOfDevice},
		{name: "one node", n: 8,
			topo: func(t *testing.T) *numa.Topology {
				return topo(t, nil, tnode{id: 0, online: "0-191", memMB: -1})
			},
			opts: &numa.CompactOptions{Device: nic(numa.NodeUnknown)}, cpus: "0-7", nodes: []int{0}, rule: numa.NodeOfFirstCPU,
			why: "node 0: it holds cpu0, the lowest-numbered of the nodes with 8 online cpus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := tt.topo(t)
			got, err := tp.PickCompact(tt.n, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.cpus, got.CPUs.String())
			assert.Equal(t, tt.n, got.CPUs.Len())
			assert.Equal(t, tt.nodes, got.Nodes)
			assert.Equal(t, tt.rule, got.Rule, "rule %s", got.Rule)
			if tt.why != "" {
				assert.Equal(t, tt.why, got.Why)
			}
			assert.NotEmpty(t, got.Why)
			for _, id := range got.CPUs.IDs() {
				c, ok := tp.CPU(id)
				require.True(t, ok)
				assert.Contains(t, got.Nodes, c.Node, "cpu%d is on node %d", id, c.Node)
			}
		})
	}
}

func TestPickCompactErrors(t *testing.T) {
	tp := fourNodes(t)
	_, err := tp.PickCompact(0, nil)
	assert.ErrorContains(t, err, "asked for 0 cpus")
	_, err = tp.PickCompact(29, nil)
	assert.ErrorIs(t, err, numa.ErrNotEnoughCPUs)
	assert.ErrorContains(t, err, "the host's 4 nodes have 28 candidate cpus, asked for 29")
	_, err = tp.PickCompact(1, &numa.CompactOptions{Include: numa.CPUs(0, 8)})
	assert.ErrorContains(t, err, "asked for 1 cpus, but 2 (0,8) must be included")
	_, err = tp.PickCompact(4, &numa.CompactOptions{Include: numa.CPUs(0), PickOptions: numa.PickOptions{Exclude: numa.CPUs(0)}})
	assert.ErrorContains(t, err, "both included and excluded")
	_, err = tp.PickCompact(4, &numa.CompactOptions{Include: numa.CPUs(99)})
	assert.ErrorContains(t, err, "included cpus 99 are on no node")
	// Included CPUs on two nodes: both nodes, each with its own.
	got, err := tp.PickCompact(10, &numa.CompactOptions{Include: numa.CPUs(0, 8)})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, got.Nodes)
	assert.True(t, numa.CPUs(0, 8).IsSubsetOf(got.CPUs), got.CPUs.String())
	assert.Equal(t, 10, got.CPUs.Len())
}

// FuzzPickCompact checks PickCompact's promises on random topologies
// (node sizes, offline CPUs, memoryless nodes, a NIC node, cpu0 pinned):
// n CPUs, all candidates, the included ones among them, on the fewest
// nodes that can hold them, and on the NIC's node whenever it can.
func FuzzPickCompact(f *testing.F) {
	f.Add(uint64(1), uint8(8), uint8(2), int8(1), false, false)
	f.Add(uint64(7), uint8(40), uint8(4), int8(-1), true, true)
	f.Add(uint64(42), uint8(1), uint8(8), int8(3), false, true)
	f.Fuzz(func(t *testing.T, seed uint64, n8, nodes8 uint8, nicNode int8, offline, pin0 bool) {
		nodes := int(nodes8%8) + 1
		n := int(n8%64) + 1
		r := seed
		next := func(m int) int { // xorshift: the same topology for a seed
			r ^= r << 13
			r ^= r >> 7
			r ^= r << 17
			return int(r % uint64(m))
		}
		tp := &numa.Topology{}
		id := 0
		for i := 0; i < nodes; i++ {
			size := next(24)
			all := numa.CPUSet{}
			on := numa.CPUSet{}
			for j := 0; j < size; j++ {
				all = all.With(id)
				if !offline || next(3) > 0 || id == 0 {
					on = on.With(id)
				}
				tp.CPUs = append(tp.CPUs, numa.CPU{ID: id, Node: i, Online: on.Contains(id), Siblings: numa.CPUs(id)})
				id++
			}
			nd := numa.Node{ID: i, CPUs: on, AllCPUs: all, Memory: &numa.Memory{Total: uint64(next(2)) << 30}}
			for j := 0; j < nodes; j++ {
				nd.Distances = append(nd.Distances, map[bool]int{true: 10, false: 11 + next(30)}[i == j])
			}
			tp.Nodes = append(tp.Nodes, nd)
			tp.Online = tp.Online.Union(on)
		}
		o := &numa.CompactOptions{PickOptions: numa.PickOptions{IncludeOffline: offline && next(2) == 0}}
		if nicNode >= 0 {
			o.Device = &numa.Device{Name: "eth0", Node: int(nicNode) % nodes}
		}
		if pin0 && tp.Online.Contains(0) {
			o.Include = numa.CPUs(0)
		}
		got, err := tp.PickCompact(n, o)
		caps := make([]int, nodes)
		total := 0
		for i, nd := range tp.Nodes {
			c := nd.CPUs
			if o.IncludeOffline {
				c = nd.AllCPUs
			}
			caps[i] = c.Len()
			total += caps[i]
		}
		if total < n {
			if !errors.Is(err, numa.ErrNotEnoughCPUs) {
				t.Fatalf("%d candidates for %d: %v", total, n, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got.CPUs.Len() != n || !o.Include.IsSubsetOf(got.CPUs) {
			t.Fatalf("picked %s for %d, including %s", got.CPUs, n, o.Include)
		}
		on := map[int]bool{}
		for _, id := range got.CPUs.IDs() {
			c, _ := tp.CPU(id)
			nd, _ := tp.Node(c.Node)
			if !nd.AllCPUs.Contains(id) || !o.IncludeOffline && !nd.CPUs.Contains(id) {
				t.Fatalf("cpu%d is not a candidate", id)
			}
			on[c.Node] = true
		}
		if len(on) != len(got.Nodes) {
			t.Fatalf("cpus %s lie on %d nodes, Nodes says %v", got.CPUs, len(on), got.Nodes)
		}
		// The fewest nodes: the included CPUs' node, then the largest.
		need, have := 0, 0
		sorted := append([]int(nil), caps...)
		pinned := -1 // cpu0's node, when cpu0 is included
		if !o.Include.IsEmpty() {
			c, _ := tp.CPU(0)
			pinned = c.Node
			have, need = caps[pinned], 1
			sorted = append(sorted[:pinned:pinned], sorted[pinned+1:]...)
		}
		slices.Sort(sorted)
		for i := len(sorted) - 1; have < n && i >= 0; i-- {
			have += sorted[i]
			need++
		}
		if len(got.Nodes) != need {
			t.Fatalf("%d cpus on nodes %v; %d can hold them (capacities %v)", n, got.Nodes, need, caps)
		}
		if d := o.Device; d != nil && caps[d.Node] >= n && (pinned < 0 || d.Node == pinned) && got.Nodes[0] != d.Node {
			t.Fatalf("the NIC's node %d holds %d, yet nodes %v (%s)", d.Node, n, got.Nodes, got.Why)
		}
	})
}
