package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nettune/nettune/internal/cpuset"
)

// Sysfs is a host's NUMA nodes, CPUs and NICs, for WriteSysfs to lay out
// as a minimal sysfs tree: the files numa, tuning, nic and numactl read.
// It builds the big hosts the corpus has only command output of.
type Sysfs struct {
	// Nodes are the NUMA nodes (ids may be sparse), in any order.
	Nodes []SysfsNode
	// Offline lists the CPUs that are offline: cpuN/online reads 0, they
	// have no topology/, and they are missing from nodeN/cpulist, cpumap
	// and cpu/online, as the kernel shows them. Default: none.
	Offline string
	// Fixed lists the CPUs that cannot go offline: they have no
	// cpuN/online file (cpu0 on most x86 kernels). Default: none, every
	// CPU has one.
	Fixed string
	// Core returns a CPU's physical package and core ids; CPUs with the
	// same pair are hardware threads (SMT siblings) of one core. Default
	// (nil): the package is the CPU's node and every CPU its own core.
	Core func(cpu int) (pkg, core int)
	// NICs are physical interfaces on PCI. Default: none (only lo).
	NICs []SysfsNIC
}

// SysfsNode is one NUMA node of a Sysfs.
type SysfsNode struct {
	ID int
	// CPUs are all of the node's CPUs, online or not, as a cpulist
	// ("0-31,128-159"); "" for a CPU-less node.
	CPUs string
	// MemTotalKB and MemFreeKB are the MemTotal and MemFree lines of
	// nodeN/meminfo; both 0 for a memoryless node.
	MemTotalKB, MemFreeKB uint64
	// Meminfo, when not "", is written as nodeN/meminfo instead of the
	// kernel's lines (a partial file, as some captured trees have).
	Meminfo string
	// NoMeminfo leaves nodeN/meminfo out.
	NoMeminfo bool
	// Distances is nodeN/distance, one per node in id order; nil leaves
	// the file out.
	Distances []int
}

// SysfsNIC is a PCI network interface of a Sysfs.
type SysfsNIC struct {
	Name string // interface name, "enp1s0f0np0"
	PCI  string // PCI address, "0000:01:00.0"
	// Node is the device's numa_node: -1 when the firmware gives none.
	Node int
	// LocalCPUs is local_cpulist; "" is the node's CPUs (all of them,
	// for numa_node -1).
	LocalCPUs string
}

// WriteSysfs writes s under a new directory in t.TempDir() and returns it,
// the root holding sys/:
//
//   - sys/devices/system/node: online, possible, has_cpu, has_memory and
//     per node cpulist, cpumap (the kernel's comma-separated 32-bit hex
//     groups, which numactl reads), meminfo, distance and the cpuM links;
//   - sys/devices/system/cpu: online, offline, possible, present,
//     kernel_max and per CPU online (unless Fixed), the nodeN link, and for
//     online CPUs topology/{physical_package_id,core_id,core_cpus_list,
//     thread_siblings_list};
//   - each NIC under sys/devices/pci0000:00/0000:00:00.0/ADDR (numa_node,
//     local_cpulist, local_cpus, net/NAME with its device link), linked
//     from sys/class/net and sys/bus/pci/devices; sys/class/net/lo is
//     virtual.
func WriteSysfs(t testing.TB, s Sysfs) string {
	t.Helper()
	root := t.TempDir()
	if err := s.write(root); err != nil {
		t.Fatalf("write sysfs tree: %v", err)
	}
	return root
}

func (s Sysfs) write(root string) error {
	w := &treeWriter{root: root}
	offline, err := cpuset.Parse(s.Offline)
	if err != nil {
		return fmt.Errorf("Offline: %w", err)
	}
	fixed, err := cpuset.Parse(s.Fixed)
	if err != nil {
		return fmt.Errorf("Fixed: %w", err)
	}
	nodes := append([]SysfsNode(nil), s.Nodes...)
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].ID < nodes[b].ID })
	var all, nodeIDs, withCPU, withMem cpuset.Set
	nodeOf := map[int]int{}
	cpusOf := map[int]cpuset.Set{}
	for _, n := range nodes {
		c, err := cpuset.Parse(n.CPUs)
		if err != nil {
			return fmt.Errorf("node %d CPUs: %w", n.ID, err)
		}
		if !all.Intersect(c).IsEmpty() {
			return fmt.Errorf("node %d: CPUs %s are on another node too", n.ID, all.Intersect(c))
		}
		all, cpusOf[n.ID], nodeIDs = all.Union(c), c, nodeIDs.With(n.ID)
		for _, id := range c.IDs() {
			nodeOf[id] = n.ID
		}
		if !c.Difference(offline).IsEmpty() {
			withCPU = withCPU.With(n.ID)
		}
		if n.MemTotalKB > 0 {
			withMem = withMem.With(n.ID)
		}
	}
	if all.IsEmpty() {
		return fmt.Errorf("no CPUs")
	}
	online := all.Difference(offline)
	groups := (all.Max() + 32) / 32 // nr_cpu_ids bits, as the kernel prints masks
	node := "sys/devices/system/node/"
	w.file(node+"online", nodeIDs.String()+"\n")
	w.file(node+"possible", nodeIDs.String()+"\n")
	w.file(node+"has_cpu", withCPU.String()+"\n")
	w.file(node+"has_memory", withMem.String()+"\n")
	for _, n := range nodes {
		d := fmt.Sprintf("%snode%d/", node, n.ID)
		on := cpusOf[n.ID].Difference(offline)
		w.file(d+"cpulist", on.String()+"\n")
		w.file(d+"cpumap", on.Mask(groups)+"\n")
		switch {
		case n.NoMeminfo:
		case n.Meminfo != "":
			w.file(d+"meminfo", n.Meminfo)
		default:
			w.file(d+"meminfo", fmt.Sprintf(
				"Node %d MemTotal:       %8d kB\nNode %d MemFree:        %8d kB\nNode %d MemUsed:        %8d kB\nNode %d HugePages_Total:     0\n",
				n.ID, n.MemTotalKB, n.ID, n.MemFreeKB, n.ID, n.MemTotalKB-min(n.MemFreeKB, n.MemTotalKB), n.ID))
		}
		if n.Distances != nil {
			d2 := make([]string, len(n.Distances))
			for i, v := range n.Distances {
				d2[i] = strconv.Itoa(v)
			}
			w.file(d+"distance", strings.Join(d2, " ")+"\n")
		}
		for _, c := range cpusOf[n.ID].IDs() {
			w.link(fmt.Sprintf("%scpu%d", d, c), fmt.Sprintf("../../cpu/cpu%d", c))
		}
	}
	cpu := "sys/devices/system/cpu/"
	w.file(cpu+"online", online.String()+"\n")
	w.file(cpu+"offline", offline.String()+"\n")
	w.file(cpu+"possible", all.String()+"\n")
	w.file(cpu+"present", all.String()+"\n")
	w.file(cpu+"kernel_max", "4095\n")
	core := s.Core
	if core == nil {
		core = func(c int) (int, int) { return nodeOf[c], c }
	}
	type key struct{ pkg, core int }
	siblings := map[key]cpuset.Set{}
	for _, c := range all.IDs() {
		p, k := core(c)
		siblings[key{p, k}] = siblings[key{p, k}].With(c)
	}
	for _, c := range all.IDs() {
		d := fmt.Sprintf("%scpu%d/", cpu, c)
		w.link(fmt.Sprintf("%snode%d", d, nodeOf[c]), fmt.Sprintf("../../node/node%d", nodeOf[c]))
		if !fixed.Contains(c) {
			w.file(d+"online", map[bool]string{true: "1\n", false: "0\n"}[online.Contains(c)])
		}
		if online.Contains(c) { // an offline CPU has no topology/
			p, k := core(c)
			sib := siblings[key{p, k}].Intersect(online).String() + "\n"
			w.file(d+"topology/physical_package_id", fmt.Sprintf("%d\n", p))
			w.file(d+"topology/core_id", fmt.Sprintf("%d\n", k))
			w.file(d+"topology/core_cpus_list", sib)
			w.file(d+"topology/thread_siblings_list", sib)
		}
	}
	for _, nic := range s.NICs {
		local := nic.LocalCPUs
		if local == "" {
			local = cpusOf[nic.Node].String()
			if nic.Node < 0 {
				local = all.String()
			}
		}
		ls, err := cpuset.Parse(local)
		if err != nil {
			return fmt.Errorf("NIC %s LocalCPUs: %w", nic.Name, err)
		}
		pci := "sys/devices/pci0000:00/0000:00:00.0/" + nic.PCI + "/"
		w.file(pci+"numa_node", fmt.Sprintf("%d\n", nic.Node))
		w.file(pci+"local_cpulist", ls.String()+"\n")
		w.file(pci+"local_cpus", ls.Mask(groups)+"\n")
		w.file(pci+"vendor", "0x15b3\n")
		w.file(pci+"net/"+nic.Name+"/address", "0e:cc:0b:ff:f6:57\n")
		w.link(pci+"net/"+nic.Name+"/device", "../../../"+nic.PCI)
		w.link("sys/class/net/"+nic.Name, "../../devices/pci0000:00/0000:00:00.0/"+nic.PCI+"/net/"+nic.Name)
		w.link("sys/bus/pci/devices/"+nic.PCI, "../../../devices/pci0000:00/0000:00:00.0/"+nic.PCI)
	}
	w.file("sys/devices/virtual/net/lo/address", "00:00:00:00:00:00\n")
	w.link("sys/class/net/lo", "../../devices/virtual/net/lo")
	return w.err
}

// treeWriter writes files and links under root, keeping the first error.
type treeWriter struct {
	root string
	err  error
}

func (w *treeWriter) file(rel, content string) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.root, rel)
	if w.err = os.MkdirAll(filepath.Dir(p), 0o755); w.err == nil {
		w.err = os.WriteFile(p, []byte(content), 0o644)
	}
}

func (w *treeWriter) link(rel, target string) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.root, rel)
	if w.err = os.MkdirAll(filepath.Dir(p), 0o755); w.err == nil {
		w.err = os.Symlink(target, p)
	}
}

// RealNumactl runs the installed numactl with args (say "-H") on the
// sysfs tree under root: root's sys/devices/system/node and cpu are
// bind-mounted over the host's in a private mount namespace (unshare -m
// --propagation private), so the host's own mounts never change. It
// returns numactl's stdout and stderr apart. The test is skipped unless it
// runs as root with numactl and unshare installed and the namespace can
// be made; a numactl that fails fails the test.
func RealNumactl(t testing.TB, root string, args ...string) (stdout, stderr string) {
	t.Helper()
	RequireRoot(t)
	bin, err := exec.LookPath("numactl")
	if err != nil {
		t.Skip("skipped: numactl not installed (apt-get install numactl)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("skipped: unshare not installed (util-linux)")
	}
	sys := filepath.Join(root, "sys", "devices", "system")
	script := `mount --bind "$1/node" /sys/devices/system/node || exit 97
mount --bind "$1/cpu" /sys/devices/system/cpu || exit 97
shift; exec "$@"`
	cmd := exec.Command(unshare, append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh", sys, bin}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 97 || err != nil && strings.Contains(errb.String(), "unshare") {
		t.Skipf("skipped: cannot bind-mount a tree over /sys in a new mount namespace here: %s", errb.String())
	}
	if err != nil {
		t.Fatalf("numactl %s on %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), root, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// VirtioNICRoot returns a host root holding this VM's virtio eth0 as sysfs
// shows it: the net device under virtio2 (driver virtio_net, ifindex 4),
// whose PCI function 0000:00:03.0 holds msi_irqs 37-39 and numa_node -1,
// each IRQ's smp_affinity_list 0-1, and the /proc/interrupts captured here
// (nic/testdata/interrupts-x86-virtio-2cpu.txt: config 37, input.0 38,
// output.0 39).
func VirtioNICRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	pci := filepath.Join(root, "sys/devices/pci0000:00/0000:00:03.0")
	mk := func(p, content string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(pci, "numa_node"), "-1\n")
	mk(filepath.Join(pci, "virtio2/net/eth0/ifindex"), "4\n")
	ln("../../../virtio2", filepath.Join(pci, "virtio2/net/eth0/device"))
	ln("../../../../bus/virtio/drivers/virtio_net", filepath.Join(pci, "virtio2/driver"))
	ln("../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0", filepath.Join(root, "sys/class/net/eth0"))
	for _, irq := range []string{"37", "38", "39"} {
		mk(filepath.Join(pci, "msi_irqs", irq), "msix\n")
		mk(filepath.Join(root, "proc/irq", irq, "smp_affinity_list"), "0-1\n")
	}
	b, err := os.ReadFile(filepath.Join(RepoRoot(t), "nic", "testdata", "interrupts-x86-virtio-2cpu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	mk(filepath.Join(root, "proc/interrupts"), string(b))
	return root
}
