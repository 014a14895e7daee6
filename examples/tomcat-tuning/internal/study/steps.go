//go:build linux

package study

import (
	"context"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// The steps, in the Arm guide's order.
const (
	StepIOMMU     = "iommu"
	StepCPUs      = "cpus"
	StepOpenFiles = "open-files"
	StepAccessLog = "access-log"
	StepThreads   = "threads"
	StepNICQueues = "nic-queues"
	StepNUMALocal = "numa-local"
)

// StepNames returns every step, in the Arm guide's order; the first three
// make the baseline.
func StepNames() []string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name)
	}
	return names
}

// isStep reports whether name is a step -steps takes: the guide's, or a
// user kind's with a well-formed argument.
func isStep(name string) bool {
	_, ok, err := lookupKind(name)
	return ok && err == nil
}

// StepTomcat is the journal's step name for the study's hold on Tomcat
// (a tomcatconf.RestartChange): the first record, so a revert handles it last, with the
// files back as found.
const StepTomcat = "tomcat"

// Reverters undo every kind of change the study journals: tuning's
// (file, cpu-online, sysctl, under h's root) and the packages' values.
func Reverters(h *tuning.Host) tuning.Reverters {
	rev := h.Reverters()
	journaled(rev, nil)
	remoteload.Register(rev, nil)
	return rev
}

// journaled registers every value type the study journals under its own
// kind: its revert in rev, its check in ver (either may be nil).
func journaled(rev tuning.Reverters, ver persist.Verifiers) {
	journal[nic.ChannelsEdit](rev, ver)
	journal[nic.IRQAffinityEdit](rev, ver)
	journal[nic.IRQBalanceStop](rev, ver)
	journal[tomcatconf.RestartChange](rev, ver)
	journal[tomcatconf.DropInChange](rev, ver)
	journal[tomcatconf.ServerXMLEdit](rev, ver)
	journal[persist.FileEdit](rev, ver)
	journal[nic.LinkFileEdit](rev, ver)
	journal[persist.TunedActivation](rev, ver)
	journal[numa.PinChange](rev, ver)
}

// journal registers T in rev and ver, those that are not nil.
func journal[T any, P interface {
	*T
	tuning.Kinded
}](rev tuning.Reverters, ver persist.Verifiers) {
	if rev != nil {
		tuning.AddReverter[T, P](rev)
	}
	if ver != nil {
		persist.AddVerifier[T, P](ver)
	}
}

// Findings are what the run learns and later steps are planned from: the
// thread census taken under the baseline's load, for maxThreads. A nil
// Census plans from the guide's rule.
type Findings struct {
	Census *tomcatconf.Recommendation
	// Searches are the searched steps as planned (Options.Search), by
	// step name; the run measures their candidates after the step.
	Searches map[string]*Search
	// Chosen holds the value each search kept, by step name; none
	// before (or without) a search: the step's rule.
	Chosen map[string]int
}

// choose records the value a step's search kept.
func (f *Findings) choose(step string, v int) {
	if f.Chosen == nil {
		f.Chosen = map[string]int{}
	}
	f.Chosen[step] = v
}

// chosen returns the value step's search kept, or 0 without one (f may
// be nil).
func (f *Findings) chosen(step string) int {
	if f == nil {
		return 0
	}
	return f.Chosen[step]
}

// search records a step's planned search.
func (f *Findings) search(s *Search) {
	if f.Searches == nil {
		f.Searches = map[string]*Search{}
	}
	f.Searches[s.Step] = s
}

// planner prepares the steps from a Host.
type planner struct {
	h    Host
	o    Options
	cpus *tuning.Host
	f    *Findings
}

// Steps returns the steps o.Steps names, in its order, planned from h:
// each Prepare looks at the host and returns its change (the dry run)
// without touching anything; the threads step reads f (nil: no census).
// Each kind's Check runs first: a step that cannot work on h fails the
// run before any step is planned.
func Steps(h Host, o Options, f *Findings) ([]tuning.Step, error) {
	names, err := checkSteps(o.Steps)
	if err != nil {
		return nil, err
	}
	cpus, err := tuning.New(h.Root)
	if err != nil {
		return nil, err
	}
	if f == nil {
		f = &Findings{}
	}
	p := &planner{h: h, o: o, cpus: cpus, f: f}
	steps := make([]tuning.Step, len(names))
	kinds := make([]Kind, len(names))
	for i, n := range names {
		// Every step's own check before any is planned or applied.
		if kinds[i] = kindOf(n); kinds[i].Check != nil {
			if err := kinds[i].Check(h); err != nil {
				return nil, err
			}
		}
	}
	for i, k := range kinds {
		steps[i] = tuning.Step{Name: k.Name, Title: k.Title(h), Baseline: k.Baseline,
			Prepare: func(ctx context.Context) (*tuning.Change, error) { return k.Plan(p, ctx) }}
	}
	return steps, nil
}

// title is a Kind's Title that does not depend on the host.
func title(t string) func(Host) string { return func(Host) string { return t } }

// dropIn is a step that sets one setting of the unit's runtime drop-in,
// keeping the others.
func (p *planner) dropIn(what string, set func(*tomcatconf.DropIn)) (*tuning.Change, error) {
	c, err := p.h.Tomcat.Instance.Unit().PlanDropIn(set)
	if err != nil {
		return nil, err
	}
	ch, err := tuning.ChangeFor(c)
	if err != nil {
		return nil, err
	}
	ch.Describe = what + ": " + c.Describe()
	return ch, nil
}

// serverXML is a step that edits server.xml: unchanged when the edit
// changes nothing.
func (p *planner) serverXML(edit func(*tomcatconf.Config) error) (*tuning.Change, tomcatconf.ServerXMLEdit, error) {
	e, err := tomcatconf.EditServerXML(p.h.Tomcat.Instance.ServerXML(), edit)
	if err != nil {
		return nil, e, err
	}
	if !e.Changed() {
		return &tuning.Change{}, e, nil
	}
	ch, err := tuning.ChangeFor(e)
	return ch, e, err
}

// Placement is where Tomcat and a local load generator run.
type Placement struct {
	Tomcat, Load tuning.CPUSet
}

// InitialPlacement is where Tomcat runs before any step: under affinity
// the CPUs the cpus step names (the JVM is pinned from its first start),
// under hotplug every online CPU.
func InitialPlacement(h Host, o Options) Placement {
	if o.Method() == MethodAffinity {
		return Placement{Tomcat: h.CPUs.Tomcat, Load: h.CPUs.Load}
	}
	return Placement{Tomcat: h.CPUs.Online}
}

// PlacementAfter is the placement once step has been applied: its
// kind's Needs.Place (the cpus step keeps Tomcat on its CPUs, numa-local
// moves it to the NIC's node); every other step keeps cur.
func PlacementAfter(h Host, o Options, step string, cur Placement) Placement {
	if place := kindOf(step).Needs.Place; place != nil {
		return place(h, o, cur)
	}
	return cur
}
