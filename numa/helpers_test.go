package numa_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/numa"
	"github.com/stretchr/testify/require"
)

// fakeNode describes one node of a tree built by writeFake.
type fakeNode struct {
	id        int
	online    string // nodeN/cpulist
	all       string // CPUs linked to the node, online or not ("" = online)
	totalKB   uint64
	freeKB    uint64
	dist      []int
	noMeminfo bool
}

// fakeSpec is a small sysfs tree: nodes, and per-CPU core siblings.
type fakeSpec struct {
	nodes    []fakeNode
	siblings map[int]string // cpu -> topology/core_cpus_list (online CPUs)
}

// writeFake writes spec under a new temp dir as the kernel lays out
// /sys/devices/system/{node,cpu} and returns the root.
func writeFake(t *testing.T, spec fakeSpec) string {
	t.Helper()
	root := t.TempDir()
	nodeDir := filepath.Join(root, "sys/devices/system/node")
	cpuDir := filepath.Join(root, "sys/devices/system/cpu")
	var online numa.CPUSet
	var ids []string
	for _, n := range spec.nodes {
		d := filepath.Join(nodeDir, fmt.Sprintf("node%d", n.id))
		on, all := nodeSets(t, n.online, n.all)
		online = online.Union(on)
		writeFile(t, filepath.Join(d, "cpulist"), n.online+"\n")
		if !n.noMeminfo {
			writeFile(t, filepath.Join(d, "meminfo"), fmt.Sprintf(
				"Node %d MemTotal:       %8d kB\nNode %d MemFree:        %8d kB\nNode %d MemUsed:        %8d kB\nNode %d HugePages_Total:     0\n",
				n.id, n.totalKB, n.id, n.freeKB, n.id, n.totalKB-n.freeKB, n.id))
		}
		if n.dist != nil {
			s := make([]string, len(n.dist))
			for i, v := range n.dist {
				s[i] = fmt.Sprint(v)
			}
			writeFile(t, filepath.Join(d, "distance"), strings.Join(s, " ")+"\n")
		}
		for _, c := range all.IDs() {
			cd := filepath.Join(cpuDir, fmt.Sprintf("cpu%d", c))
			require.NoError(t, os.MkdirAll(cd, 0o755))
			require.NoError(t, os.Symlink(fmt.Sprintf("../../node/node%d", n.id), filepath.Join(cd, fmt.Sprintf("node%d", n.id))))
			if c != 0 {
				writeFile(t, filepath.Join(cd, "online"), map[bool]string{true: "1\n", false: "0\n"}[on.Contains(c)])
			}
			if on.Contains(c) {
				sib := spec.siblings[c]
				if sib == "" {
					sib = fmt.Sprint(c)
				}
				writeFile(t, filepath.Join(cd, "topology/core_cpus_list"), sib+"\n")
				writeFile(t, filepath.Join(cd, "topology/physical_package_id"), fmt.Sprintf("%d\n", n.id))
			}
		}
		ids = append(ids, fmt.Sprint(n.id))
	}
	writeFile(t, filepath.Join(cpuDir, "online"), online.String()+"\n")
	writeFile(t, filepath.Join(nodeDir, "online"), strings.Join(ids, ",")+"\n")
	return root
}

// nodeSets parses a node's online cpulist and its list of all CPUs ("":
// the online ones).
func nodeSets(t *testing.T, online, all string) (numa.CPUSet, numa.CPUSet) {
	t.Helper()
	on, err := numa.ParseCPUList(online)
	require.NoError(t, err)
	if all == "" {
		return on, on
	}
	a, err := numa.ParseCPUList(all)
	require.NoError(t, err)
	return on, a
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// topologyAt reads the topology under root.
func topologyAt(t *testing.T, root string) (*numa.Host, *numa.Topology) {
	t.Helper()
	h, err := numa.New(root)
	require.NoError(t, err)
	topo, err := h.Topology()
	require.NoError(t, err)
	return h, topo
}

// neoverse extracts the seeds' Neoverse host (testdata, see gen_neoverse.go).
func neoverse(t *testing.T) string {
	t.Helper()
	return neoverseB(t)
}

func neoverseB(t testing.TB) string {
	t.Helper()
	return testutil.ExtractSysroot(t, filepath.Join("testdata", "neoverse-v2-192cpu-2node.tar.gz"))
}

// corpusTree extracts a captured tree from ../shared/corpus/sysfs.
func corpusTree(t *testing.T, archive string) string {
	t.Helper()
	return testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", archive))
}

// fields splits text into lines of whitespace-separated fields, dropping
// blank lines: the comparison for outputs whose spacing was not kept.
func fields(text string) [][]string {
	var out [][]string
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// readCorpus returns a cmd-outputs file's text.
func readCorpus(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(testutil.CorpusFile(t, "cmd-outputs", name))
	require.NoError(t, err)
	return string(b)
}
