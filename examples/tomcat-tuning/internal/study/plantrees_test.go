//go:build linux

package study

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// planTree is a host the study plans on: a captured tree or one built
// from a real machine's lscpu or numactl -H output.
type planTree struct {
	name string
	// from says where its shape comes from.
	from string
	root func(t testing.TB) string
}

const gib = 1 << 20 // kB

// builtTrees are the big hosts the corpus has only command output of,
// written by testutil.WriteSysfs.
func builtTrees() []planTree {
	return []planTree{
		{name: "grace-144cpu-2node",
			from: "numactl-H_arm-lp_grace-144cpu.txt (nodes, sizes, distances 10/40); the NIC enp1s0f0np0 of ip-addr_arm-lp_grace.txt on node 1, " +
				"where the guide's run on that host kept 72-79 (lscpu_arm-lp_grace-144cpu_72-79-online); every CPU hotpluggable, as on Arm",
			root: func(t testing.TB) string {
				return testutil.WriteSysfs(t, testutil.Sysfs{
					Nodes: []testutil.SysfsNode{
						{ID: 0, CPUs: "0-71", MemTotalKB: 483129 << 10, MemFreeKB: 462395 << 10, Distances: []int{10, 40}},
						{ID: 1, CPUs: "72-143", MemTotalKB: 481845 << 10, MemFreeKB: 472013 << 10, Distances: []int{40, 10}},
					},
					NICs: []testutil.SysfsNIC{{Name: "enp1s0f0np0", PCI: "0000:01:00.0", Node: 1}},
				})
			}},
		{name: "graviton4-192cpu-1node",
			from: "lscpu_arm-lp_graviton4-192cpu (192 Neoverse-V2 CPUs) as one node, every CPU online and hotpluggable; an ENA NIC whose numa_node is -1",
			root: func(t testing.TB) string {
				return testutil.WriteSysfs(t, testutil.Sysfs{
					Nodes: []testutil.SysfsNode{{ID: 0, CPUs: "0-191", MemTotalKB: 370 * gib, MemFreeKB: 360 * gib, Distances: []int{10}}},
					NICs:  []testutil.SysfsNIC{{Name: "ens5", PCI: "0000:00:05.0", Node: numa.NodeUnknown}},
				})
			}},
		{name: "epyc-2socket-256cpu-4node",
			from: "AMD's numbering as numactl-H_numactl-issue165 (threadripper NPS4) shows it, first threads then siblings +N, scaled to 2 sockets x 64 cores x 2 " +
				"threads in NPS2 (4 nodes, distances 10/12/32); x86: cpu0 cannot go offline; the NIC on node 2",
			root: func(t testing.TB) string {
				near, far := 12, 32
				d := [][]int{{10, near, far, far}, {near, 10, far, far}, {far, far, 10, near}, {far, far, near, 10}}
				var nodes []testutil.SysfsNode
				for i := 0; i < 4; i++ {
					nodes = append(nodes, testutil.SysfsNode{ID: i, CPUs: fmt.Sprintf("%d-%d,%d-%d", 32*i, 32*i+31, 128+32*i, 128+32*i+31),
						MemTotalKB: 128 * gib, MemFreeKB: 120 * gib, Distances: d[i]})
				}
				return testutil.WriteSysfs(t, testutil.Sysfs{Nodes: nodes, Fixed: "0",
					Core: func(c int) (int, int) { return c % 128 / 64, c % 128 },
					NICs: []testutil.SysfsNIC{{Name: "enp129s0f0np0", PCI: "0000:81:00.0", Node: 2}}})
			}},
		{name: "xeon-2socket-80cpu-interleaved",
			from: "the captured Xeon L5640 tree's numbering (node 0 even ids, node 1 odd, SMT siblings +N/2, distances 10/20; its lscpu --sysroot " +
				"failed) scaled to 2 sockets x 20 cores x 2 threads; x86: cpu0 cannot go offline; the NIC on node 1",
			root: func(t testing.TB) string {
				var even, odd []int
				for c := 0; c < 80; c++ {
					if c%2 == 0 {
						even = append(even, c)
					} else {
						odd = append(odd, c)
					}
				}
				return testutil.WriteSysfs(t, testutil.Sysfs{
					Nodes: []testutil.SysfsNode{
						{ID: 0, CPUs: numa.CPUs(even...).String(), MemTotalKB: 96 * gib, MemFreeKB: 90 * gib, Distances: []int{10, 20}},
						{ID: 1, CPUs: numa.CPUs(odd...).String(), MemTotalKB: 96 * gib, MemFreeKB: 91 * gib, Distances: []int{20, 10}},
					},
					Fixed: "0",
					Core:  func(c int) (int, int) { return c % 2, c % 40 },
					NICs:  []testutil.SysfsNIC{{Name: "ens1f0", PCI: "0000:af:00.0", Node: 1}},
				})
			}},
		{name: "power8-160cpu-sparse-nodes",
			from: "lscpu_prometheus-procfs-issue84_power8 (nodes 0,1,16,17 of 40 CPUs, SMT8 cores with 6 threads of 8 offline); distances in " +
				"POWER's 10/20/40 form and the node sizes are not in the output and are made up",
			root: func(t testing.TB) string {
				ids := []int{0, 1, 16, 17}
				d := [][]int{{10, 20, 40, 40}, {20, 10, 40, 40}, {40, 40, 10, 20}, {40, 40, 20, 10}}
				var nodes []testutil.SysfsNode
				var off []int
				for i, id := range ids {
					nodes = append(nodes, testutil.SysfsNode{ID: id, CPUs: fmt.Sprintf("%d-%d", 40*i, 40*i+39),
						MemTotalKB: 64 * gib, MemFreeKB: 60 * gib, Distances: d[i]})
				}
				for c := 0; c < 160; c++ {
					if c%8 > 1 {
						off = append(off, c)
					}
				}
				return testutil.WriteSysfs(t, testutil.Sysfs{Nodes: nodes, Offline: numa.CPUs(off...).String(),
					Core: func(c int) (int, int) { return c / 40, c / 8 }})
			}},
		{name: "threadripper-48cpu-memoryless-offline",
			from: "numactl-H_numactl-issue165_threadripper3960x-NPS4 (4 nodes, nodes 0 and 3 memoryless, distances 10/12) with the SMT " +
				"siblings 24-47 offline (as nosmt leaves them); x86: cpu0 cannot go offline; no NIC",
			root: func(t testing.TB) string {
				d := func(i int) []int {
					r := []int{12, 12, 12, 12}
					r[i] = 10
					return r
				}
				return testutil.WriteSysfs(t, testutil.Sysfs{
					Nodes: []testutil.SysfsNode{
						{ID: 0, CPUs: "0-5,24-29", Distances: d(0)},
						{ID: 1, CPUs: "6-11,30-35", MemTotalKB: 64307 << 10, MemFreeKB: 19214 << 10, Distances: d(1)},
						{ID: 2, CPUs: "12-17,36-41", MemTotalKB: 64472 << 10, MemFreeKB: 27945 << 10, Distances: d(2)},
						{ID: 3, CPUs: "18-23,42-47", Distances: d(3)},
					},
					Offline: "24-47", Fixed: "0",
					Core: func(c int) (int, int) { return 0, c % 24 },
				})
			}},
	}
}

// capturedTrees are the corpus's sysfs archives and the guide's host.
func capturedTrees() []planTree {
	corpus := func(archive string) func(t testing.TB) string {
		return func(t testing.TB) string {
			return testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", archive))
		}
	}
	return []planTree{
		{name: "kunpeng920-128cpu-4node", from: "captured: 128arm-2pa2n8cluster4co.tar.bz2 (no NIC)", root: corpus("128arm-2pa2n8cluster4co.tar.bz2")},
		{name: "neoverse-v2-192cpu-2node", from: "the Arm guide's host after its first step (CPUs 0-7 online), numa/testdata",
			root: func(t testing.TB) string {
				return testutil.ExtractSysroot(t, filepath.Join(testutil.RepoRoot(t), "numa", "testdata", "neoverse-v2-192cpu-2node.tar.gz"))
			}},
		{name: "xeon-L5640-24cpu-interleaved", from: "captured: ghw-linux-amd64-intel-xeon-L5640-2node.tar.gz (no cpuN/online files, no NIC)",
			root: corpus("ghw-linux-amd64-intel-xeon-L5640-2node.tar.gz")},
		{name: "32em64t-16cpu-2node", from: "captured: 32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2 (eth0 on node 0, ib0 on node 1)",
			root: corpus("32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2")},
		{name: "ryzen-12cpu-numa-minus1", from: "captured: ghw-linux-amd64-amd-ryzen-1600-nic-numa-minus1.tar.gz",
			root: corpus("ghw-linux-amd64-amd-ryzen-1600-nic-numa-minus1.tar.gz")},
		{name: "offline-4cpu", from: "captured: ghw-linux-amd64-offlineCPUs.tar.gz", root: corpus("ghw-linux-amd64-offlineCPUs.tar.gz")},
	}
}

// withTomcat adds upstream Tomcat 10.1's server.xml and a catalina.sh at
// Debian's places under root, so the threads step has a Connector to plan.
func withTomcat(t testing.TB, root string) {
	t.Helper()
	xml, err := os.ReadFile(testutil.CorpusFile(t, "tomcat", "server-10.1.59.xml"))
	require.NoError(t, err)
	p := filepath.Join(root, tomcatconf.DefaultBase, "conf", "server.xml")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, xml, 0o644))
	bin := filepath.Join(root, tomcatconf.DefaultHome, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "catalina.sh"), nil, 0o755))
}

// discoverTree discovers the tree under root as the study does for
// -root, with method; a NIC gets the channels of the guide's mlx5 NIC as
// captured (a fixture root has no ethtool to ask).
func discoverTree(t testing.TB, root, method string) (Host, Options) {
	t.Helper()
	o := DefaultOptions()
	o.Root, o.CPUMethod = root, method
	h, err := Discover(context.Background(), o)
	require.NoError(t, err)
	if h.NIC.Name != "" && !h.NIC.Virtual {
		f, err := os.Open(testutil.CorpusFile(t, "cmd-outputs", "ethtool-l_arm-lp_grace-mlx5_enp1s0f0np0_before.txt"))
		require.NoError(t, err)
		defer f.Close()
		_, ch, err := nic.ParseChannels(f)
		require.NoError(t, err)
		h.NIC.Channels, h.NIC.ChannelsErr = &ch, nil
	}
	return h, o
}

// planText plans the CPU-related steps on h and writes what they choose:
// the CPUs and their node with the reason, maxThreads by the rule and the
// search's candidates, the queue count and its candidates, the
// numa-local set.
func planText(t testing.TB, h Host, o Options) string {
	t.Helper()
	f := &Findings{}
	steps, err := Steps(h, o, f)
	require.NoError(t, err)
	var b strings.Builder
	c := h.CPUs
	fmt.Fprintf(&b, "-- %s\n", o.CPUMethod)
	fmt.Fprintf(&b, "Tomcat's CPUs: %s (%d of %d online), on nodes %v by rule %q\n  why: %s\n", c.Tomcat, c.N, c.Online.Len(), c.Pick.Nodes, c.Pick.Rule, c.Pick.Why)
	for _, st := range steps {
		switch st.Name {
		case StepCPUs, StepThreads, StepNICQueues, StepNUMALocal:
		default:
			continue
		}
		ch, err := st.Prepare(context.Background())
		require.NoError(t, err, st.Name)
		fmt.Fprintf(&b, "%s:\n", st.Name)
		for _, line := range strings.Split(strings.TrimSpace(ch.Describe), "\n") {
			if st.Name == StepThreads && !strings.HasPrefix(line, "maxThreads=") {
				continue // the server.xml diff
			}
			if st.Name == StepNICQueues && strings.HasPrefix(line, "search:") {
				continue // the candidates follow
			}
			if line != "" {
				fmt.Fprintf(&b, "  %s\n", line)
			}
		}
		if s := f.Searches[st.Name]; s != nil {
			fmt.Fprintf(&b, "  candidates: %s (the rule first)\n", s.values())
		}
		// Whether root may set channels is this machine's, not the tree's.
		if ch.Skip != "" && !strings.Contains(ch.Skip, "CAP_NET_ADMIN") {
			fmt.Fprintf(&b, "  skipped: %s\n", ch.Skip)
		}
	}
	return b.String()
}

// golden compares got with testdata/name byte for byte (-update rewrites
// it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(got), 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err, "golden file missing; run go test -update")
	assert.Equal(t, string(want), got)
}

// assertFewestNodes checks that Tomcat's CPUs are online, N of them, on
// the fewest nodes whose online CPUs can hold N, and on the NIC's node
// when it has N online CPUs and no fixed CPU pins them elsewhere.
func assertFewestNodes(t *testing.T, h Host, o Options) {
	t.Helper()
	c := h.CPUs
	tp := c.Topology
	require.Equal(t, c.N, c.Tomcat.Len())
	assert.True(t, c.Tomcat.IsSubsetOf(c.Online), "CPUs %s online (%s)", c.Tomcat, c.Online)
	on := map[int]bool{}
	for _, id := range c.Tomcat.IDs() {
		cpu, ok := tp.CPU(id)
		require.True(t, ok)
		on[cpu.Node] = true
	}
	var caps []int
	for _, n := range tp.Nodes {
		caps = append(caps, n.CPUs.Len())
	}
	need, have := 0, 0
	for have < c.N {
		best := 0
		for i := range caps {
			if caps[i] > caps[best] {
				best = i
			}
		}
		have, caps[best], need = have+caps[best], 0, need+1
	}
	assert.Len(t, on, need, "CPUs %s on nodes %v; %d can hold %d", c.Tomcat, c.Pick.Nodes, need, c.N)
	if nd, ok := tp.Node(h.NIC.Node); ok && nd.CPUs.Len() >= c.N && c.Pick.Rule != numa.NodeOfIncluded {
		assert.Equal(t, []int{h.NIC.Node}, c.Pick.Nodes, "the NIC's node %d has %d online CPUs", h.NIC.Node, nd.CPUs.Len())
	}
}

// TestPlanTrees plans the cpus, threads, nic-queues and numa-local steps
// on big hosts, captured and built, under both CPU methods, and compares
// what they keep with testdata/TestPlanTrees/NAME.golden (issue 35): the
// CPUs on the fewest nodes that hold them (the NIC's when it has them),
// the node and its reason, maxThreads = CPUs - 1 and the search's
// candidates, queues = CPUs and theirs, the numa-local set.
func TestPlanTrees(t *testing.T) {
	t.Setenv("CATALINA_HOME", "")
	t.Setenv("CATALINA_BASE", "")
	for _, tr := range append(builtTrees(), capturedTrees()...) {
		t.Run(tr.name, func(t *testing.T) {
			root := tr.root(t)
			withTomcat(t, root)
			var b strings.Builder
			fmt.Fprintf(&b, "tree %s\nfrom %s\n", tr.name, tr.from)
			for _, method := range []string{MethodHotplug, MethodAffinity} {
				start := time.Now()
				h, o := discoverTree(t, root, method)
				if method == MethodHotplug {
					tp := h.CPUs.Topology
					fmt.Fprintf(&b, "%d CPUs, online %s, %d nodes:", len(tp.CPUs), tp.Online, len(tp.Nodes))
					for _, n := range tp.Nodes {
						fmt.Fprintf(&b, " %d=%s", n.ID, n.AllCPUs)
					}
					nic := "none"
					if h.NIC.Name != "" {
						nic = fmt.Sprintf("%s on node %d", h.NIC.Name, h.NIC.Node)
					}
					fmt.Fprintf(&b, "\nNIC %s\n", nic)
				}
				assertFewestNodes(t, h, o)
				b.WriteString(planText(t, h, o))
				t.Logf("%s, %s: discovery and plan in %s", tr.name, method, time.Since(start).Round(time.Millisecond))
			}
			// The tree's temporary directory, as the reasons name files in it.
			got := strings.ReplaceAll(b.String(), root, "ROOT")
			golden(t, filepath.Join("TestPlanTrees", tr.name+".golden"), got)
		})
	}
}

// BenchmarkPlan256CPUs is discovery and the plan of every step on the
// 256-CPU, 4-node tree, as a -root run does before it measures.
func BenchmarkPlan256CPUs(b *testing.B) {
	b.Setenv("CATALINA_HOME", "")
	b.Setenv("CATALINA_BASE", "")
	var tr planTree
	for _, x := range builtTrees() {
		if x.name == "epyc-2socket-256cpu-4node" {
			tr = x
		}
	}
	root := tr.root(b)
	withTomcat(b, root)
	for b.Loop() {
		h, o := discoverTree(b, root, MethodHotplug)
		steps, err := Steps(h, o, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, st := range steps {
			if _, err := st.Prepare(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
}
