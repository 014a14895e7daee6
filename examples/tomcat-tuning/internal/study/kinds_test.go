//go:build linux

package study

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// TestKindsDeclareTheGuide: the kinds are the guide's seven steps in its
// order, the baseline's three first, each with a title and a plan, and
// the declarations the procedure reads are the ones each step needs.
func TestKindsDeclareTheGuide(t *testing.T) {
	var names []string
	for i, k := range Kinds() {
		names = append(names, k.Name)
		assert.Equal(t, i < 3, k.Baseline, k.Name)
		assert.NotNil(t, k.Plan, k.Name)
		require.NotNil(t, k.Title, k.Name)
		assert.NotEmpty(t, k.Title(Host{CPUs: CPUs{N: 8}}), k.Name)
		assert.Equal(t, k.Name, kindOf(k.Name).Name)
	}
	assert.Equal(t, []string{StepIOMMU, StepCPUs, StepOpenFiles, StepAccessLog, StepThreads, StepNICQueues, StepNUMALocal}, names)
	assert.Equal(t, names, StepNames())
	// The guide's wrk2 runs: 244k -> 272k -> 358k -> 379k -> 364k req/s.
	assert.Equal(t, map[string]float64{StepAccessLog: 11.1, StepThreads: 31.7, StepNICQueues: 5.9, StepNUMALocal: -4.0}, GuideUplift)

	has := func(pred func(Needs) bool) []string {
		var out []string
		for _, k := range Kinds() {
			if pred(k.Needs) {
				out = append(out, k.Name)
			}
		}
		return out
	}
	assert.Equal(t, []string{StepCPUs, StepNUMALocal}, has(func(n Needs) bool { return n.Place != nil }))
	assert.Equal(t, []string{StepNICQueues, StepNUMALocal}, has(func(n Needs) bool { return n.HostLock }))
	assert.Equal(t, []string{StepCPUs, StepNUMALocal}, has(func(n Needs) bool { return n.Hotplug }))
	assert.Equal(t, []string{StepCPUs, StepOpenFiles}, has(func(n Needs) bool { return n.UnitDropIn }))
	assert.Equal(t, []string{StepThreads}, has(func(n Needs) bool { return n.Census }))
	assert.Equal(t, []string{StepIOMMU, StepCPUs, StepOpenFiles, StepAccessLog, StepThreads, StepNICQueues, StepNUMALocal},
		has(func(n Needs) bool { return n.Persist != nil }))
	assert.Equal(t, Kind{Name: "persist-drop-in"}.Needs, kindOf("persist-drop-in").Needs, "a name no kind has declares nothing")
}

// TestKindsReadInOrder: the baseline's placement is every baseline step's
// Place in turn, and a step's placement before it is the listed steps'
// before it; a step list without a declaring step reads as none.
func TestKindsReadInOrder(t *testing.T) {
	h, _, _ := guideHost(t) // 192 CPUs on 2 nodes
	o := DefaultOptions()
	o.CPUMethod = MethodAffinity
	steps := func(names ...string) []tuning.Step {
		var out []tuning.Step
		for _, n := range names {
			k := kindOf(n)
			out = append(out, tuning.Step{Name: n, Baseline: k.Baseline})
		}
		return out
	}
	init := InitialPlacement(h, o)
	assert.Equal(t, init, baselinePlacement(h, o, steps(StepOpenFiles, StepAccessLog)))
	assert.Equal(t, cpusPlace(h, o, init), baselinePlacement(h, o, steps(StepCPUs, StepAccessLog)))
	assert.True(t, anyStep(steps(StepOpenFiles, StepThreads), false, func(n Needs) bool { return n.Census }))
	assert.False(t, anyStep(steps(StepOpenFiles, StepThreads), true, func(n Needs) bool { return n.Census }), "threads is not a baseline step")
	assert.False(t, anyStep(steps(StepAccessLog), false, func(n Needs) bool { return n.HostLock }))

	// The host's lock: only a HostLock step that runs on h takes it.
	lo := Host{CPUs: CPUs{N: 1, Tomcat: cpuset.Of(0), Online: cpuset.Of(0, 1)}, NIC: NIC{Name: "lo", Virtual: true, Node: -1}}
	guide := steps(StepCPUs, StepOpenFiles, StepAccessLog, StepThreads, StepNICQueues, StepNUMALocal)
	assert.False(t, hostWide(lo, o, guide), "on lo and one node, nic-queues and numa-local are skipped")
	veth := lo
	veth.NIC.Channels = &nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}
	assert.True(t, hostWide(veth, o, guide), "a veth with 8 queues: nic-queues sets its channels")
	assert.False(t, hostWide(veth, o, steps(StepAccessLog, StepThreads)))
	// The guide's tree: CPUs 0-7 online, all on node 0, the NIC on node 1.
	// By affinity numa-local has no online CPU of node 1 to move Tomcat
	// to; by hotplug it brings eight online.
	_, skip := NUMAPick(h, o)
	assert.Contains(t, skip, "node 1")
	assert.False(t, hostWide(h, o, steps(StepNUMALocal)))
	hot := o
	hot.CPUMethod = MethodHotplug
	assert.True(t, hostWide(h, hot, steps(StepNUMALocal)), "by hotplug numa-local changes which CPUs are online")

	o.Steps = []string{StepAccessLog, StepCPUs, StepNUMALocal}
	p, by := placedBefore(h, o, StepNUMALocal)
	assert.Equal(t, StepCPUs, by)
	assert.Equal(t, h.CPUs.Tomcat, p.Tomcat)
	assert.Equal(t, 8, p.Tomcat.Len())
	o.Steps = []string{StepNUMALocal, StepCPUs}
	p, by = placedBefore(h, o, StepNUMALocal)
	assert.Equal(t, "", by)
	assert.Equal(t, init, p)
}

// procedureFiles are the study's files outside the steps' own (steps.go
// and step_*.go): they may read the steps' declarations, never branch on
// a step's name.
func procedureFiles(t *testing.T) []string {
	all, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, "_test.go") && !strings.HasPrefix(f, "step_") && f != "steps.go" {
			out = append(out, f)
		}
	}
	require.Contains(t, out, "run.go")
	return out
}

// TestProcedureNamesNoStep: no procedure file names a step constant, and
// no hasStep is left (issue 32: a new kind of step touches no file of the
// procedure). A step's name as a string is caught where it is compared.
func TestProcedureNamesNoStep(t *testing.T) {
	consts := map[string]bool{}
	for _, n := range []string{"StepIOMMU", "StepCPUs", "StepOpenFiles", "StepAccessLog", "StepThreads", "StepNICQueues", "StepNUMALocal"} {
		consts[n] = true
	}
	fset := token.NewFileSet()
	for _, name := range procedureFiles(t) {
		f, err := parser.ParseFile(fset, filepath.Join(".", name), nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Ident:
				if consts[x.Name] || x.Name == "hasStep" {
					t.Errorf("%s: the procedure names %s", fset.Position(x.Pos()), x.Name)
				}
			case *ast.BinaryExpr:
				if x.Op == token.EQL || x.Op == token.NEQ {
					stepLit(t, fset, x.X)
					stepLit(t, fset, x.Y)
				}
			case *ast.CaseClause:
				for _, e := range x.List {
					stepLit(t, fset, e)
				}
			}
			return true
		})
	}
}

// stepLit fails t when e is a step's name as a string literal: a branch
// on a step's name.
func stepLit(t *testing.T, fset *token.FileSet, e ast.Expr) {
	if l, ok := e.(*ast.BasicLit); ok && l.Kind == token.STRING && slices.Contains(StepNames(), strings.Trim(l.Value, "`\"")) {
		t.Errorf("%s: the procedure branches on step %s", fset.Position(l.Pos()), l.Value)
	}
}

// TestJournalKinds: the study reverts and verifies every value it
// journals under the kind the value's package gives it, and those kinds
// are the strings journals written before Kind existed hold.
func TestJournalKinds(t *testing.T) {
	rev, ver := Reverters(tuning.NewDefault()), Verifiers(persist.NewDefault())
	for kind, got := range map[string]string{
		"nic-channels":        nic.ChannelsEdit{}.Kind(),
		"nic-irq-affinity":    nic.IRQAffinityEdit{}.Kind(),
		"nic-irqbalance-stop": nic.IRQBalanceStop{}.Kind(),
		"nic-link-file":       nic.LinkFileEdit{}.Kind(),
		"tomcat-instance":     tomcatconf.RestartChange{}.Kind(),
		"systemd-drop-in":     tomcatconf.DropInChange{}.Kind(),
		"tomcat-server-xml":   tomcatconf.ServerXMLEdit{}.Kind(),
		"persist-file":        persist.FileEdit{}.Kind(),
		"tuned-activation":    persist.TunedActivation{}.Kind(),
		"cpu-affinity":        numa.PinChange{}.Kind(),
		"ssh-worker-dir":      remoteload.KindRemoteDir,
		"file":                "file",
	} {
		assert.Equal(t, kind, got)
		assert.Contains(t, rev, kind, "a reverter")
		assert.Contains(t, ver, kind, "a verifier")
	}
}
