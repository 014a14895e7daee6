//go:build linux

package study

import (
	"context"
	"fmt"
	"strings"

	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// cpusKind gives Tomcat the study's CPUs (hotplug or affinity), in the
// baseline.
func cpusKind() Kind {
	return Kind{Name: StepCPUs, Title: func(h Host) string { return fmt.Sprintf("%d CPUs for Tomcat", h.CPUs.N) }, Baseline: true,
		Plan: (*planner).cpusStep, Needs: Needs{Place: cpusPlace, Hotplug: true, UnitDropIn: true, Persist: persistCPUs}}
}

// cpusStep keeps N CPUs online (hotplug), or pins the JVM (affinity:
// after each start, or through the unit's drop-in). Either way it says
// which NUMA node the CPUs are on and why (CPUs.Pick).
func (p *planner) cpusStep(context.Context) (*tuning.Change, error) {
	c := p.h.CPUs
	load := "load generator on CPUs " + c.Load.String()
	switch {
	case p.o.LoadHost != "":
		load = "load generator on " + p.o.LoadHost
	case c.Load.IsEmpty():
		load = "no CPU left for a local load generator"
	}
	where := ""
	if c.Pick.Why != "" {
		where = "CPUs " + c.Tomcat.String() + " on " + c.Pick.Why
	}
	if p.o.Method() == MethodAffinity && p.h.Tomcat.Systemd() {
		ch, err := p.dropIn(fmt.Sprintf("pin the JVM to CPUs %s (%s)", c.Tomcat, load),
			func(d *tomcatconf.DropIn) { d.CPUAffinity = c.Tomcat.IDs() })
		return withWhere(ch, where), err
	}
	if p.o.Method() == MethodAffinity {
		return withWhere(&tuning.Change{Describe: fmt.Sprintf("pin the JVM to CPUs %s after each start (sched_setaffinity); %s; no host change",
			c.Tomcat, load)}, where), nil
	}
	ch, err := p.cpus.KeepOnlineChange(c.Tomcat)
	return withWhere(ch, where), err
}

// withWhere adds the node line to a change's description: first when the
// change does something (or is skipped), at the end of the one line of
// an unchanged one, so that the plan's "unchanged: ..." keeps its start.
func withWhere(ch *tuning.Change, where string) *tuning.Change {
	switch {
	case ch == nil || where == "":
	case ch.Apply == nil && ch.Skip == "":
		ch.Describe = strings.TrimRight(ch.Describe, "\n") + " (" + where + ")"
	default:
		ch.Describe = where + "\n" + ch.Describe
	}
	return ch
}

// cpusPlace: Tomcat on the CPUs the cpus step keeps, the load on the rest.
func cpusPlace(h Host, _ Options, _ Placement) Placement {
	return Placement{Tomcat: h.CPUs.Tomcat, Load: h.CPUs.Load}
}

// persistCPUs keeps Tomcat on the CPUs the kept steps place it on.
func persistCPUs(pp *persistPlan) error {
	pp.cpus = true
	return nil
}
