//go:build linux

package study

import (
	"context"
	"fmt"

	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// numaLocalKind moves Tomcat to CPUs of the NIC's NUMA node.
func numaLocalKind() Kind {
	return Kind{Name: StepNUMALocal, Title: title("CPUs local to the NIC's NUMA node"),
		Plan: (*planner).numaLocal, Needs: Needs{Place: numaLocalPlace, HostLock: true, Hotplug: true, Measures: numaLocalMeasures,
			Persist: persistCPUs, GuideUplift: uplift(-4.0)}}
}

// NUMAPick returns the CPUs the numa-local step gives Tomcat: N CPUs of
// the NIC's node (offline ones too under hotplug), or the reason the step
// is skipped. It is a pure function of the Host, so the plan and the run
// agree on it without sharing state.
func NUMAPick(h Host, o Options) (tuning.CPUSet, string) {
	topo := h.CPUs.Topology
	if topo == nil || len(topo.Nodes) <= 1 {
		return tuning.CPUSet{}, "one NUMA node"
	}
	if h.NIC.Node < 0 {
		return tuning.CPUSet{}, "the NIC's NUMA node is unknown: " + firstNonEmpty(h.NIC.Why, "no numa_node")
	}
	picked, err := topo.PickCPUs(h.NIC.Node, h.CPUs.N, &numa.PickOptions{IncludeOffline: o.Method() == MethodHotplug})
	if err != nil {
		return tuning.CPUSet{}, fmt.Sprintf("node %d: %v", h.NIC.Node, err)
	}
	return picked, ""
}

// numaLocal moves Tomcat to CPUs of the NIC's NUMA node: online ones by
// hotplug, or its affinity (the drop-in's CPUAffinity=, or a pin after
// each start).
func (p *planner) numaLocal(context.Context) (*tuning.Change, error) {
	picked, skip := NUMAPick(p.h, p.o)
	if skip != "" {
		return &tuning.Change{Skip: skip}, nil
	}
	node, iface := p.h.NIC.Node, p.h.NIC.Name
	if p.o.Method() == MethodHotplug {
		ch, err := p.cpus.KeepOnlineChange(picked)
		if err != nil {
			return nil, err
		}
		if before, by := placedBefore(p.h, p.o, StepNUMALocal); ch.Apply != nil && by != "" && picked.Equal(before.Tomcat) {
			// A step before already keeps these (its change is this one,
			// planned from the same state): nothing is left to move.
			return &tuning.Change{Describe: fmt.Sprintf("the %s step already keeps Tomcat on CPUs %s of node %d (%s's)", by, picked, node, iface)}, nil
		}
		ch.Describe = fmt.Sprintf("CPUs %s of node %d (%s's)\n%s", picked, node, iface, ch.Describe)
		return ch, nil
	}
	cur := p.h.CPUs.Tomcat
	if cur.Equal(picked) {
		return &tuning.Change{Describe: fmt.Sprintf("Tomcat already on CPUs %s of node %d", picked, node)}, nil
	}
	what := fmt.Sprintf("pin the JVM to CPUs %s of node %d (%s's) instead of %s", picked, node, iface, cur)
	if p.h.Tomcat.Systemd() {
		return p.dropIn(what, func(d *tomcatconf.DropIn) { d.CPUAffinity = picked.IDs() })
	}
	// The run pins each JVM it starts from now on (Placement); the host
	// itself does not change.
	return &tuning.Change{Describe: what, Apply: func(context.Context) error { return nil }}, nil
}

// numaLocalMeasures: none when NUMAPick skips the step.
func numaLocalMeasures(h Host, o Options) int {
	if _, skip := NUMAPick(h, o); skip != "" {
		return 0
	}
	return 1
}

// numaLocalPlace: Tomcat on NUMAPick's CPUs of the NIC's node, the load
// on the other online ones; cur when the step is skipped.
func numaLocalPlace(h Host, o Options, cur Placement) Placement {
	if picked, skip := NUMAPick(h, o); skip == "" {
		return Placement{Tomcat: picked, Load: h.CPUs.Online.Difference(picked)}
	}
	return cur
}
