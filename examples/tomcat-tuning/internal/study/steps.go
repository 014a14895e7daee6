//go:build linux

package study

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/rlimit"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
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
	return []string{StepIOMMU, StepCPUs, StepOpenFiles, StepAccessLog, StepThreads, StepNICQueues, StepNUMALocal}
}

func isStep(name string) bool { return slices.Contains(StepNames(), name) }

// Journal kinds of the study's changes: each record is the change value of
// the package that owns it, undone by tuning.RevertAs (Reverters).
const (
	KindNICChannels = "nic-channels"      // nic.ChannelsEdit
	KindTomcat      = "tomcat-instance"   // tomcatconf.RestartChange
	KindDropIn      = "systemd-drop-in"   // tomcatconf.DropInChange
	KindServerXML   = "tomcat-server-xml" // tomcatconf.ServerXMLEdit
)

// StepTomcat is the journal's step name for the study's hold on Tomcat
// (KindTomcat): the first record, so a revert handles it last, with the
// files back as found.
const StepTomcat = "tomcat"

// Reverters undo every kind of change the study journals: tuning's
// (file, cpu-online, sysctl, under h's root) and the packages' values.
func Reverters(h *tuning.Host) tuning.Reverters {
	rev := h.Reverters()
	rev[KindNICChannels] = tuning.RevertAs[nic.ChannelsEdit]()
	rev[KindTomcat] = tuning.RevertAs[tomcatconf.RestartChange]()
	rev[KindDropIn] = tuning.RevertAs[tomcatconf.DropInChange]()
	rev[KindServerXML] = tuning.RevertAs[tomcatconf.ServerXMLEdit]()
	rev[KindFile] = tuning.RevertAs[tuning.FileEdit]()
	rev[KindLinkFile] = tuning.RevertAs[nic.LinkFileEdit]()
	rev[KindTunedSwitch] = tuning.RevertAs[tuning.TunedActivation]()
	rev[KindRemoteDir] = revertRemoteDir
	return rev
}

// Findings are what the run learns and later steps are planned from: the
// thread census taken under the baseline's load, for maxThreads. A nil
// Census plans from the guide's rule.
type Findings struct {
	Census *tomcatconf.Recommendation
	// Searches are the searched steps as planned (Options.Search), by
	// step name; the run measures their candidates after the step.
	Searches map[string]*Search
	// MaxThreads and Queues are the values the searches kept; 0 before
	// (or without) a search: the guide's rule.
	MaxThreads int
	Queues     uint32
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
	all := map[string]tuning.Step{
		StepIOMMU: {Name: StepIOMMU, Title: "IOMMU boot settings iommu.strict=1 iommu.passthrough=0", Baseline: true,
			Prepare: p.iommu},
		StepCPUs: {Name: StepCPUs, Title: fmt.Sprintf("%d CPUs for Tomcat", h.CPUs.N), Baseline: true,
			Prepare: p.cpusStep},
		StepOpenFiles: {Name: StepOpenFiles, Title: fmt.Sprintf("ulimit -n %d for Tomcat", rlimit.DefaultNoFile), Baseline: true,
			Prepare: p.openFiles},
		StepAccessLog: {Name: StepAccessLog, Title: "Access log off", Prepare: p.accessLog},
		StepThreads:   {Name: StepThreads, Title: "maxThreads: the guide's CPUs - 1 and measured candidates, keep-alive limits", Prepare: p.threads},
		StepNICQueues: {Name: StepNICQueues, Title: fmt.Sprintf("NIC queues = %d CPUs", h.CPUs.N), Prepare: p.nicQueues},
		StepNUMALocal: {Name: StepNUMALocal, Title: "CPUs local to the NIC's NUMA node", Prepare: p.numaLocal},
	}
	steps := make([]tuning.Step, len(names))
	for i, n := range names {
		steps[i] = all[n]
	}
	return steps, nil
}

// iommu plans the Arm guide's IOMMU parameters in GRUB_CMDLINE_LINUX.
// It is always skipped: the change needs a reboot, and the study never
// edits the boot configuration (examples/grubiommu does).
func (p *planner) iommu(context.Context) (*tuning.Change, error) {
	b := p.h.Boot
	if b.Grub == nil {
		return &tuning.Change{Skip: fmt.Sprintf("no GRUB defaults file to plan against (%v)", b.Err)}, nil
	}
	want := bootcfg.IOMMUAlign(bootcfg.DefaultIOMMUStrict, bootcfg.DefaultIOMMUPassthrough)
	plan, err := b.Grub.Plan(bootcfg.Edit{Var: bootcfg.CmdlineLinux, Set: want})
	if err != nil {
		return &tuning.Change{Skip: fmt.Sprintf("cannot plan the edit: %v", err)}, nil
	}
	if plan.Changed() {
		return &tuning.Change{Describe: plan.Diff(),
			Skip: "reboot required: apply with `grubiommu -strict -apply -update`, reboot, then run the study"}, nil
	}
	boot, err := b.Grub.BootCmdline()
	if err == nil && b.Running != nil && bootcfg.PendingReboot(boot, b.Running, want, nil).RebootRequired() {
		return &tuning.Change{Describe: b.GrubPath + " already has " + paramsText(want),
			Skip: "reboot required: the running kernel does not have these parameters yet"}, nil
	}
	return &tuning.Change{Describe: "the file and the running kernel already have " + paramsText(want)}, nil
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

// openFiles describes the open-files limit Tomcat is started with: set on
// every start (Instance.NoFile), not on the host; under systemd the unit's
// LimitNOFILE=, in its runtime drop-in.
func (p *planner) openFiles(context.Context) (*tuning.Change, error) {
	if p.h.Tomcat.Systemd() {
		return p.dropIn(fmt.Sprintf("LimitNOFILE=%d for %s", rlimit.DefaultNoFile, p.h.Tomcat.Instance.Service),
			func(d *tomcatconf.DropIn) { d.LimitNOFILE = rlimit.DefaultNoFile })
	}
	cur, err := tuning.OpenFilesLimit(0)
	if err != nil {
		return nil, err
	}
	d := fmt.Sprintf("Tomcat is started under `ulimit -n %d` (this process: %s)", rlimit.DefaultNoFile, cur)
	if cur.Hard < rlimit.DefaultNoFile {
		d += fmt.Sprintf("; the hard limit here is %d, so the JVM gets %d unless CAP_SYS_RESOURCE can raise it", cur.Hard, cur.Hard)
	}
	return &tuning.Change{Describe: d}, nil
}

// dropIn is a step that sets one setting of the unit's runtime drop-in,
// keeping the others.
func (p *planner) dropIn(what string, set func(*tomcatconf.DropIn)) (*tuning.Change, error) {
	c, err := p.h.Tomcat.Instance.Unit().PlanDropIn(set)
	if err != nil {
		return nil, err
	}
	ch, err := tuning.ChangeOf(KindDropIn, c)
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
	ch, err := tuning.ChangeOf(KindServerXML, e)
	return ch, e, err
}

// accessLog comments out every AccessLogValve in server.xml.
func (p *planner) accessLog(context.Context) (*tuning.Change, error) {
	if !p.h.Tomcat.Usable() {
		return &tuning.Change{Skip: fmt.Sprintf("no Tomcat instance: %v", p.h.Tomcat.why())}, nil
	}
	ch, e, err := p.serverXML(func(c *tomcatconf.Config) error {
		_, err := c.DisableAccessLog(tomcatconf.AccessLogComment)
		return err
	})
	if err == nil && ch.Apply == nil {
		ch.Describe = "no active AccessLogValve in " + e.Path
	}
	return ch, err
}

// threads sets the guide's maxThreads = CPUs - 1 with its keep-alive
// limits. With -search (the default) that is the first candidate: the
// run then measures the census's recommendation, 2× and 4× the CPUs and
// the pool before the step in its place, and keeps the best (Search).
func (p *planner) threads(context.Context) (*tuning.Change, error) {
	if !p.h.Tomcat.Usable() {
		return &tuning.Change{Skip: fmt.Sprintf("no Tomcat instance: %v", p.h.Tomcat.why())}, nil
	}
	workers := max(1, p.h.CPUs.N-1)
	how := fmt.Sprintf("the guide's CPUs - 1 = %d", workers)
	ch, e, err := p.serverXML(func(c *tomcatconf.Config) error {
		_, err := c.SetConnector(p.h.Tomcat.Query, tomcatconf.ArmGuideConnectorAttrs(workers), &tomcatconf.SetOptions{ToExecutor: true})
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.o.Search != SearchOff {
		cur, err := tomcatconf.Parse(e.Path, []byte(e.Before))
		if err != nil {
			return nil, err
		}
		current, err := cur.MaxThreads(p.h.Tomcat.Query)
		if err != nil {
			current = 0 // a ${...} pool: measured as a candidate of its own is not possible; left out
		}
		s := threadSearch(e.Path, p.h.Tomcat.Query, ThreadCandidates(p.h.CPUs.N, p.f.Census, current), e.Before)
		p.f.search(s)
		how += "\n" + s.Plan()
		if p.f.Census == nil {
			how += " (-apply adds the thread census's recommendation)"
		}
		if !e.Changed() {
			// Already the rule: the step is applied as it is (a write of
			// the same bytes, journaled), so that it is measured and the
			// search runs from it.
			if ch, err = tuning.ChangeOf(KindServerXML, e); err != nil {
				return nil, err
			}
			ch.Describe = e.Path + " already has the guide's Connector attributes: kept as it is and measured, for the search"
		}
	}
	ch.Describe = fmt.Sprintf("maxThreads=%d from %s\n%s", workers, how, ch.Describe)
	return ch, nil
}

// nicQueues sets the NIC's queue count to the number of CPUs Tomcat gets
// (ethtool -L IF combined N, or rx N tx N), capped at the device's
// maximum. A virtual device is a NIC for this step when it has channels to
// set: a veth made with numrxqueues/numtxqueues N has rx and tx channels up
// to N; lo and one-queue devices are skipped.
func (p *planner) nicQueues(context.Context) (*tuning.Change, error) {
	n, nc := uint32(p.h.CPUs.N), p.h.NIC
	virtual := nc.Name == "lo" || nc.Virtual
	switch {
	case nc.Name == "":
		return &tuning.Change{Skip: "no NIC: " + nc.Why}, nil
	case nc.Channels == nil && virtual:
		return &tuning.Change{Describe: fmt.Sprintf("ethtool -L %s combined %d", nc.Name, n),
			Skip: fmt.Sprintf("no physical NIC: %s, without channels to set (%s)",
				firstNonEmpty(nc.Why, nc.Name+" is the loopback"), errText(nc.ChannelsErr, "none reported"))}, nil
	case nc.Channels == nil:
		return &tuning.Change{Describe: fmt.Sprintf("ethtool -L %s combined %d", nc.Name, n),
			Skip: fmt.Sprintf("channels unknown: %v", nc.ChannelsErr)}, nil
	}
	ch := *nc.Channels
	limit := ch.MaxQueues()
	switch {
	case limit == 0:
		return &tuning.Change{Skip: nc.Name + " has no combined or rx/tx channels to set"}, nil
	case limit == 1 && virtual:
		return &tuning.Change{Skip: fmt.Sprintf("no physical NIC, and virtual %s has one queue (ethtool -l: %s): "+
			"no queue count to set (a veth made with numrxqueues N numtxqueues N has N)", nc.Name, channelsText(ch))}, nil
	}
	var notes []string
	if virtual {
		notes = append(notes, fmt.Sprintf("%s is virtual, with channels to set (%s)", nc.Name, channelsText(ch)))
	}
	if n > limit {
		notes = append(notes, fmt.Sprintf("%d CPUs capped at %s's maximum of %d queues", n, nc.Name, limit))
		n = limit
	}
	e, err := nic.PlanChannelsEdit(nc.Name, ch, ch.QueueUpdate(n))
	if err != nil {
		return &tuning.Change{Skip: err.Error()}, nil
	}
	desc := e.Describe()
	for _, note := range notes {
		desc += "\n(" + note + ")"
	}
	if p.o.Search != SearchOff {
		s := queueSearch(nc.Name, ch, QueueCandidates(uint32(p.h.CPUs.N), limit, ch.Queues()))
		p.f.search(s)
		desc += "\n" + s.Plan()
	}
	// A device already at the rule's count is left alone, unless the
	// search measures the others against it: then the step is applied as
	// it is (journaled; ETHTOOL_SCHANNELS writes nothing) and measured.
	searchFrom := !e.Changed() && p.o.Search != SearchOff && os.Geteuid() == 0
	if !e.Changed() && !searchFrom {
		return &tuning.Change{Describe: desc}, nil
	}
	if os.Geteuid() != 0 {
		return &tuning.Change{Describe: desc, Skip: "not permitted: changing channels needs CAP_NET_ADMIN (run as root)"}, nil
	}
	c, err := tuning.ChangeOf(KindNICChannels, e)
	if err != nil {
		return nil, err
	}
	c.Describe = desc
	if searchFrom {
		c.Describe += fmt.Sprintf("\n(%s already has %d queues: kept as it is and measured, for the search)", nc.Name, ch.Queues())
	}
	return c, nil
}

// channelsText is ch's maxima and counts in short: "rx 8/8, tx 8/8" (the
// current count, then the maximum) for the kinds the device has.
func channelsText(ch nic.Channels) string {
	var parts []string
	for _, k := range []struct {
		name     string
		cur, max uint32
	}{{"rx", ch.RX, ch.MaxRX}, {"tx", ch.TX, ch.MaxTX}, {"other", ch.Other, ch.MaxOther}, {"combined", ch.Combined, ch.MaxCombined}} {
		if k.max > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", k.name, k.cur, k.max))
		}
	}
	if len(parts) == 0 {
		return "no channels"
	}
	return strings.Join(parts, ", ")
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
		if ch.Apply != nil && picked.Equal(p.h.CPUs.Tomcat) && stepBefore(p.o.Steps, StepCPUs, StepNUMALocal) {
			// The cpus step already keeps these (its change is this one,
			// planned from the same state): nothing is left to move.
			return &tuning.Change{Describe: fmt.Sprintf("the cpus step already keeps Tomcat on CPUs %s of node %d (%s's)", picked, node, iface)}, nil
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

// stepBefore reports whether steps has first, and has it before then.
func stepBefore(steps []string, first, then string) bool {
	i, j := slices.Index(steps, first), slices.Index(steps, then)
	return i >= 0 && (j < 0 || i < j)
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

// PlacementAfter is the placement once step has been applied: the cpus
// step keeps Tomcat on its CPUs, numa-local moves it to the NIC's node;
// every other step keeps cur.
func PlacementAfter(h Host, o Options, step string, cur Placement) Placement {
	switch step {
	case StepCPUs:
		return Placement{Tomcat: h.CPUs.Tomcat, Load: h.CPUs.Load}
	case StepNUMALocal:
		if picked, skip := NUMAPick(h, o); skip == "" {
			return Placement{Tomcat: picked, Load: h.CPUs.Online.Difference(picked)}
		}
	}
	return cur
}
