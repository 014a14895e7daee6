//go:build linux

package study

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nettune/nettune/tuning"
)

// A Kind is a kind of step: its name in -steps, how it plans its change
// from the Host, and what it declares to the procedure (Needs). The
// procedure reads the declarations and never asks a step for its name:
// a new kind is a value of its own and one line in Kinds.
type Kind struct {
	// Name is the step's name in -steps, in the journal and the table.
	Name string
	// Title is the one-line description the plan and the table show.
	Title func(Host) string
	// Baseline: the step is part of the starting configuration the
	// baseline is measured on.
	Baseline bool
	// Plan looks at the host and returns the step's change, touching
	// nothing (the dry run).
	Plan func(*planner, context.Context) (*tuning.Change, error)
	// Needs are the step's effects besides its change.
	Needs Needs
	// Arg, for a kind the user parameterises, is the form of what follows
	// "NAME:" in -steps (e.g. "NAME=VALUE" for sysctl:NAME=VALUE); With
	// then makes the step of one such argument, or says what is wrong with
	// it. Such kinds are the user's own steps: none is in the defaults.
	Arg  string
	With func(arg string) (Kind, error)
	// Check, when not nil, looks at the host before anything is taken or
	// changed (-apply and -plan), so a step that cannot work fails the
	// run at its start rather than after the steps before it.
	Check func(Host) error
}

// Needs declare what a step does besides its change, for the procedure:
// where Tomcat then runs, which locks and restarts it needs, what it is
// planned from, what it costs, how it persists. The zero value is a step
// that edits Tomcat's files and nothing else.
type Needs struct {
	// Place is where Tomcat and a local load run once the step is
	// applied; nil keeps them where they were.
	Place func(h Host, o Options, cur Placement) Placement
	// HostLock: the step changes host-wide state (NIC channels, CPUs),
	// so the study holds the host's lock as well as its Tomcat's.
	HostLock bool
	// Hotplug: under -cpu-method hotplug the step takes CPUs offline;
	// once reverted, the drift guard cannot take them offline again.
	Hotplug bool
	// UnitDropIn: under systemd the step is a setting of the unit's
	// runtime drop-in; in the baseline, the drift guard applies it
	// again after the revert.
	UnitDropIn bool
	// Census: the step is planned from the thread census taken under
	// the baseline's load.
	Census bool
	// Measures returns how many measurements the step takes on h: 1,
	// plus each candidate a search measures; 0 when the host lets it
	// not run. Nil is 1.
	Measures func(h Host, o Options) int
	// Persist adds the kept step to a persistence plan (PlanPersist);
	// nil: the step has nothing to keep.
	Persist func(*persistPlan) error
	// JVMArg is the option the step adds to the JVM's command line: once
	// Tomcat is restarted with the step, the study checks the JVM has it.
	JVMArg string
	// GuideUplift is the Arm guide's own change of throughput for the
	// step against the step before, in percent; nil: the guide has none.
	GuideUplift *float64
}

// Kinds returns every kind of step, in the Arm guide's order; the
// baseline's kinds come first.
func Kinds() []Kind {
	return []Kind{iommuKind(), cpusKind(), openFilesKind(), accessLogKind(), threadsKind(), nicQueuesKind(), numaLocalKind()}
}

// UserKinds returns the kinds of step a user parameterises in -steps
// (KIND:ARG), after the guide's: a sysctl, an attribute of the Connector,
// an option of the JVM, the NIC's IRQs spread, a tuned profile.
func UserKinds() []Kind {
	return []Kind{sysctlKind(), connectorKind(), jvmKind(), irqKind(), tunedKind()}
}

// lookupKind returns the Kind of the step named name: one of Kinds, or a
// user kind's step ("sysctl:net.core.somaxconn=4096"). ok is false for a
// name no kind has; err says what is wrong with a user kind's argument.
func lookupKind(name string) (k Kind, ok bool, err error) {
	for _, k := range Kinds() {
		if k.Name == name {
			return k, true, nil
		}
	}
	prefix, arg, found := strings.Cut(name, ":")
	for _, k := range UserKinds() {
		if found && k.Name == prefix {
			s, err := k.With(arg)
			if err != nil {
				return Kind{}, false, fmt.Errorf("-steps: %q: %w; want %s:%s", name, err, k.Name, k.Arg)
			}
			return s, true, nil
		}
	}
	return Kind{}, false, nil
}

// kindOf returns the Kind of the step named name, or the zero Kind (no
// needs) for a name no kind has, such as a persistence step's.
func kindOf(name string) Kind {
	if k, ok, _ := lookupKind(name); ok {
		return k
	}
	return Kind{Name: name}
}

// kindForms lists the steps -steps takes: the guide's by name, then each
// user kind's form.
func kindForms() string {
	forms := StepNames()
	for _, k := range UserKinds() {
		forms = append(forms, k.Name+":"+k.Arg)
	}
	return strings.Join(forms, ",")
}

// anyStep reports whether a step of steps (only the baseline's, with
// baseline) declares what pred asks for.
func anyStep(steps []tuning.Step, baseline bool, pred func(Needs) bool) bool {
	for _, s := range steps {
		if (!baseline || s.Baseline) && pred(kindOf(s.Name).Needs) {
			return true
		}
	}
	return false
}

// placeThrough is where the steps named place Tomcat, each in turn from
// the initial placement, and the last of them that moved it ("" for
// none).
func placeThrough(h Host, o Options, names []string) (Placement, string) {
	place, by := InitialPlacement(h, o), ""
	for _, s := range names {
		if kindOf(s).Needs.Place != nil {
			place, by = PlacementAfter(h, o, s, place), s
		}
	}
	return place, by
}

// baselinePlacement is where Tomcat and a local load run for the
// baseline: the initial placement, moved by each baseline step in order.
func baselinePlacement(h Host, o Options, steps []tuning.Step) Placement {
	var names []string
	for _, s := range steps {
		if s.Baseline {
			names = append(names, s.Name)
		}
	}
	place, _ := placeThrough(h, o, names)
	return place
}

// placedBefore is where the steps o.Steps lists before step place
// Tomcat (all of them when step is not listed), and the last of them
// that moved it ("" for none).
func placedBefore(h Host, o Options, step string) (Placement, string) {
	names := o.Steps
	if i := slices.Index(names, step); i >= 0 {
		names = names[:i]
	}
	return placeThrough(h, o, names)
}

// uplift is a GuideUplift value.
func uplift(pct float64) *float64 { return &pct }

// guideUplifts is the guide's uplift of each kind that has one.
func guideUplifts() map[string]float64 {
	m := map[string]float64{}
	for _, k := range Kinds() {
		if k.Needs.GuideUplift != nil {
			m[k.Name] = *k.Needs.GuideUplift
		}
	}
	return m
}
