package numa

import (
	"fmt"
	"sort"

	"github.com/nettune/nettune/internal/cpuset"
)

// SMT says how a pick treats the hardware threads (siblings) of a physical
// core.
type SMT int

const (
	// SpreadCores takes one thread of every physical core before taking a
	// second thread of any: N CPUs on N distinct cores when the node has
	// them. It is the zero value.
	SpreadCores SMT = iota
	// PackCores takes every thread of a core before moving to the next
	// core, so the pick occupies as few whole cores as possible.
	PackCores
)

// PickOptions tunes a pick. A nil *PickOptions is the zero value.
type PickOptions struct {
	// SMT chooses between spreading over cores and packing siblings.
	// Default: SpreadCores.
	SMT SMT
	// IncludeOffline picks from all of the node's CPUs, online or not, as a
	// plan that will bring them online does (the Arm Neoverse Tomcat tuning
	// guide keeps 96-103 on the NIC's node while only 0-7 are online). Default: false, online CPUs
	// only.
	IncludeOffline bool
	// Exclude lists CPUs never to pick (say, the CPUs serving NIC IRQs).
	// Default: none.
	Exclude CPUSet
}

// PickCPUs returns n CPUs of node, lowest ids first within the order the
// SMT policy gives. Cores are ordered by their lowest CPU id. When the node
// has fewer than n candidate CPUs the error is a *NotEnoughCPUsError
// (errors.Is(err, ErrNotEnoughCPUs)); an absent node matches ErrNoSuchNode.
// Pure: it reads nothing from the host.
func (t *Topology) PickCPUs(node, n int, opts *PickOptions) (CPUSet, error) {
	var o PickOptions
	if opts != nil {
		o = *opts
	}
	nd, ok := t.Node(node)
	if !ok {
		return CPUSet{}, fmt.Errorf("%w: node %d (the host has nodes %s)", ErrNoSuchNode, node, t.NodeIDs())
	}
	if n < 1 {
		return CPUSet{}, fmt.Errorf("numa: asked for %d cpus; expected at least 1", n)
	}
	cand := nd.CPUs
	if o.IncludeOffline {
		cand = nd.AllCPUs
	}
	excluded := cand.Intersect(o.Exclude)
	cand = cand.Difference(o.Exclude)
	if cand.Len() < n {
		return CPUSet{}, &NotEnoughCPUsError{Node: node, Want: n, Have: cand, OnlineOnly: !o.IncludeOffline, Excluded: excluded}
	}
	return cpuset.Of(t.pickOrder(cand, o.SMT, n)...), nil
}

// pickOrder returns the first n of cand in the order smt takes them.
func (t *Topology) pickOrder(cand CPUSet, smt SMT, n int) []int {
	cores := t.cores(cand)
	var picked []int
	switch smt {
	case PackCores:
		for _, core := range cores {
			for _, id := range core {
				if len(picked) < n {
					picked = append(picked, id)
				}
			}
		}
	default:
		for round := 0; len(picked) < n && len(picked) < cand.Len(); round++ {
			for _, core := range cores {
				if round < len(core) && len(picked) < n {
					picked = append(picked, core[round])
				}
			}
		}
	}
	return picked
}

// PickCPUsNear returns n CPUs on dev's node, as PickCPUs does. A device with
// no node (virtual, or numa_node -1) is placed on the only node of a
// one-node host; on a host with more nodes the error matches
// ErrUnknownNode.
func (t *Topology) PickCPUsNear(dev Device, n int, opts *PickOptions) (CPUSet, error) {
	node, err := t.DeviceNode(dev)
	if err != nil {
		return CPUSet{}, err
	}
	return t.PickCPUs(node, n, opts)
}

// DeviceNode returns the node CPUs local to dev are picked from: dev.Node,
// or the only node of a one-node host when dev.Node is NodeUnknown. On a
// host with more nodes an unknown node gives an error matching
// ErrUnknownNode.
func (t *Topology) DeviceNode(dev Device) (int, error) {
	if dev.Node != NodeUnknown {
		return dev.Node, nil
	}
	if len(t.Nodes) == 1 {
		return t.Nodes[0].ID, nil
	}
	why := "numa_node is -1"
	if dev.Virtual {
		why = "it is a virtual interface"
	}
	return NodeUnknown, fmt.Errorf("%w: %s (%s) on a host with %d nodes", ErrUnknownNode, dev.Name, why, len(t.Nodes))
}

// cores groups cand into physical cores (by Siblings), each core's ids
// ascending, cores ordered by their lowest id.
func (t *Topology) cores(cand CPUSet) [][]int {
	seen := map[int]bool{}
	var cores [][]int
	for _, id := range cand.IDs() {
		if seen[id] {
			continue
		}
		sib := cpuset.Of(id)
		if c, ok := t.CPU(id); ok {
			sib = c.Siblings.Intersect(cand).With(id)
		}
		core := sib.IDs()
		for _, s := range core {
			seen[s] = true
		}
		cores = append(cores, core)
	}
	sort.SliceStable(cores, func(a, b int) bool { return cores[a][0] < cores[b][0] })
	return cores
}
