package numa_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/numa"
)

// abiTree is a /sys/devices/system tree written file by file as the
// kernel's Documentation/ABI describes it (stable/sysfs-devices-node:
// node/online, node/possible, nodeN/cpumap, nodeN/cpulist, nodeN/meminfo,
// nodeN/distance, the nodeN/cpuM links; testing/sysfs-devices-system-cpu:
// cpu/online, cpu/possible, cpu/present, cpuN/online), with the quirks
// of trees captured from real machines (issue 24).
type abiTree struct {
	name  string
	files map[string]string // relative to sys/devices/system
	links map[string]string // link -> target, relative to sys/devices/system
	// numactl is what numactl -H prints for the tree (checked against the
	// real numactl by TestIntegrationNumactlOnKernelTrees).
	numactl string
	// ours, when not "", is what we print where numactl is wrong.
	ours string
	// warning is what numactl prints on stderr ("" for nothing).
	warning string
}

func (a abiTree) write(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	sys := filepath.Join(root, "sys/devices/system")
	for p, c := range a.files {
		writeFile(t, filepath.Join(sys, p), c)
	}
	for l, target := range a.links {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(sys, l)), 0o755))
		require.NoError(t, os.Symlink(target, filepath.Join(sys, l)))
	}
	return root
}

// twoNodes is a 4-CPU, 2-node host of an older kernel: nodeN/cpumap (the
// 32-bit hex words numactl reads), no nodeN/cpulist (added in 2.6.28).
func twoNodes() (map[string]string, map[string]string) {
	files := map[string]string{
		"node/online":         "0-1\n",
		"node/possible":       "0-1\n",
		"node/node0/cpumap":   "00000003\n",
		"node/node1/cpumap":   "0000000c\n",
		"node/node0/meminfo":  "Node 0 MemTotal:        1048576 kB\nNode 0 MemFree:          524288 kB\nNode 0 MemUsed:          524288 kB\n",
		"node/node1/meminfo":  "Node 1 MemTotal:        2097152 kB\nNode 1 MemFree:         1048576 kB\nNode 1 MemUsed:         1048576 kB\n",
		"node/node0/distance": "10 20\n",
		"node/node1/distance": "20 10\n",
		"cpu/online":          "0-3\n",
		"cpu/possible":        "0-3\n",
		"cpu/present":         "0-3\n",
		"cpu/cpu1/online":     "1\n",
		"cpu/cpu2/online":     "1\n",
		"cpu/cpu3/online":     "1\n",
	}
	links := map[string]string{
		"node/node0/cpu0": "../../cpu/cpu0", "node/node0/cpu1": "../../cpu/cpu1",
		"node/node1/cpu2": "../../cpu/cpu2", "node/node1/cpu3": "../../cpu/cpu3",
		"cpu/cpu0/node0": "../../node/node0", "cpu/cpu1/node0": "../../node/node0",
		"cpu/cpu2/node1": "../../node/node1", "cpu/cpu3/node1": "../../node/node1",
	}
	return files, links
}

const twoNodesNumactl = `available: 2 nodes (0-1)
node 0 cpus: 0 1
node 0 size: 1024 MB
node 0 free: 512 MB
node 1 cpus: 2 3
node 1 size: 2048 MB
node 1 free: 1024 MB
node distances:
node   0   1 
  0:  10  20 
  1:  20  10 
`

func abiTrees() []abiTree {
	var trees []abiTree

	files, links := twoNodes()
	trees = append(trees, abiTree{name: "cpumap without cpulist", files: files, links: links, numactl: twoNodesNumactl})

	files, links = twoNodes()
	files["cpu/cpu1/online"] = ""
	trees = append(trees, abiTree{name: "empty cpu1/online", files: files, links: links, numactl: twoNodesNumactl})

	// Node 1 alone in a tree whose distance row covers nodes 0 and 1: the
	// kernel prints one distance per online node in id order, so "21 10"
	// means node 1 to node 0 is 21 and to itself 10. numactl (libnuma's
	// parse_numbers) gives the row's entries to the nodes present, in
	// order, and prints 21 as node 1's distance to itself: wrong, as a
	// node's distance to itself is 10 (LocalDistance) on every kernel.
	trees = append(trees, abiTree{name: "distance row over the possible nodes",
		files: map[string]string{
			"node/possible":       "0-1\n",
			"node/node1/cpulist":  "0-1\n",
			"node/node1/cpumap":   "00000003\n",
			"node/node1/meminfo":  "Node 1 MemTotal:        1048576 kB\nNode 1 MemFree:          524288 kB\nNode 1 MemUsed:          524288 kB\n",
			"node/node1/distance": "21 10\n",
			"cpu/online":          "0-1\n",
			"cpu/possible":        "0-1\n",
			"cpu/present":         "0-1\n",
			"cpu/cpu1/online":     "1\n",
		},
		links: map[string]string{"cpu/cpu0/node1": "../../node/node1", "cpu/cpu1/node1": "../../node/node1"},
		numactl: `available: 1 nodes (1)
node 1 cpus: 0 1
node 1 size: 1024 MB
node 1 free: 512 MB
node distances:
node   1 
  1:  21 
`,
		ours: `available: 1 nodes (1)
node 1 cpus: 0 1
node 1 size: 1024 MB
node 1 free: 512 MB
node distances:
node   1 
  1:  10 
`,
	})
	// A node meminfo with MemTotal and no MemFree (some captured trees):
	// libnuma's numa_node_size64 returns the size it found and leaves the
	// free memory at -1, which numactl prints as "<not available>", with
	// one warning on stderr. Before, Topology failed on the file.
	files, links = twoNodes()
	files["node/node1/meminfo"] = "Node 1 MemTotal:        2097152 kB\nNode 1 MemUsed:         1048576 kB\n"
	trees = append(trees, abiTree{name: "meminfo without MemFree", files: files, links: links,
		numactl: strings.Replace(twoNodesNumactl, "node 1 free: 1024 MB", "node 1 free: <not available>", 1),
		warning: "libnuma: Warning: Cannot parse sysfs meminfo (1)\n"})

	// The reverse, MemFree alone: the size is "<not available>".
	files, links = twoNodes()
	files["node/node0/meminfo"] = "Node 0 MemFree:          524288 kB\n"
	trees = append(trees, abiTree{name: "meminfo without MemTotal", files: files, links: links,
		numactl: strings.Replace(twoNodesNumactl, "node 0 size: 1024 MB", "node 0 size: <not available>", 1),
		warning: "libnuma: Warning: Cannot parse sysfs meminfo (1)\n"})

	// Neither line: both are "<not available>", as without the file.
	files, links = twoNodes()
	files["node/node1/meminfo"] = "Node 1 HugePages_Total:     0\n"
	trees = append(trees, abiTree{name: "meminfo without either line", files: files, links: links,
		numactl: strings.Replace(strings.Replace(twoNodesNumactl, "node 1 free: 1024 MB", "node 1 free: <not available>", 1),
			"node 1 size: 2048 MB", "node 1 size: <not available>", 1),
		warning: "libnuma: Warning: Cannot parse sysfs meminfo (0)\n"})
	return trees
}

// TestKernelABITrees reads trees real kernels expose and prints them as
// numactl -H does. Before, each failed: "node 0: ... cpulist: no such
// file", "cpu1/online "": expected 0 or 1", "2 distances for 1 nodes".
func TestKernelABITrees(t *testing.T) {
	for _, tt := range abiTrees() {
		t.Run(tt.name, func(t *testing.T) {
			_, topo := topologyAt(t, tt.write(t))
			want := tt.numactl
			if tt.ours != "" {
				want = tt.ours
			}
			assert.Equal(t, want, topo.Numactl())
		})
	}
}

// TestEmptyRootIsAnError: a -root with no sysfs in it was read as one node
// with no CPUs ("available: 1 nodes", rc 0).
func TestEmptyRootIsAnError(t *testing.T) {
	root := t.TempDir()
	h, err := numa.New(root)
	require.NoError(t, err)
	_, err = h.Topology()
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "the root holds no Linux sysfs")
	assert.ErrorContains(t, err, filepath.Join(root, "sys/devices/system/node"))
}
