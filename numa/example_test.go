package numa_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/nettune/nettune/numa"
)

// The Arm Neoverse Tomcat tuning guide's 192-CPU host after its first
// step: CPUs 0-7 online, node 1's CPUs all offline. A Topology is plain data, so it can be built by hand.
func neoverseTopology() *numa.Topology {
	mib := func(n uint64) uint64 { return n << 20 }
	node0 := numa.CPUs(0, 1, 2, 3, 4, 5, 6, 7)
	var all0, all1 numa.CPUSet
	for c := 0; c < 96; c++ {
		all0, all1 = all0.With(c), all1.With(c+96)
	}
	return &numa.Topology{
		Nodes: []numa.Node{
			{ID: 0, CPUs: node0, AllCPUs: all0, Memory: &numa.Memory{Total: mib(193502), Free: mib(188478)}, Distances: []int{10, 100}},
			{ID: 1, AllCPUs: all1, Memory: &numa.Memory{Total: mib(192625), Free: mib(192338)}, Distances: []int{100, 10}},
		},
		Online: node0,
	}
}

func ExampleTopology_WriteNumactl() {
	topo := neoverseTopology()
	var b strings.Builder
	if err := topo.WriteNumactl(&b); err != nil {
		log.Fatal(err)
	}
	// numactl ends each distance line with a space, which an Output
	// comment cannot show: trim it here.
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		fmt.Println(strings.TrimRight(line, " "))
	}
	// Output:
	// available: 2 nodes (0-1)
	// node 0 cpus: 0 1 2 3 4 5 6 7
	// node 0 size: 193502 MB
	// node 0 free: 188478 MB
	// node 1 cpus:
	// node 1 size: 192625 MB
	// node 1 free: 192338 MB
	// node distances:
	// node   0   1
	//   0:  10  100
	//   1:  100  10
}

func ExampleTopology_WriteLscpu() {
	topo := neoverseTopology()
	if err := topo.WriteLscpu(os.Stdout, &numa.LscpuOptions{Sections: true}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// NUMA:
	//   NUMA node(s):      2
	//   NUMA node0 CPU(s): 0-7
	//   NUMA node1 CPU(s):
}

// The guide's NUMA step: keep 8 CPUs on the NIC's node (node 1), which are
// offline now and will be brought online by the tuning step.
func ExampleTopology_PickCPUsNear() {
	topo := neoverseTopology()
	nic := numa.Device{Name: "enp1s0f0np0", Node: 1}
	keep, err := topo.PickCPUsNear(nic, 8, &numa.PickOptions{IncludeOffline: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("keep online:", keep)
	fmt.Println("take offline:", topo.AllCPUs().Difference(keep))

	_, err = topo.PickCPUsNear(nic, 8, nil) // online CPUs only
	fmt.Println(errors.Is(err, numa.ErrNotEnoughCPUs), err)
	// Output:
	// keep online: 96-103
	// take offline: 0-95,104-191
	// true numa: node 1 has 0 online cpus (none), asked for 8
}

// A CPU list in lscpu's form, where a pair is two ids, and in the
// kernel's.
func ExampleCPUs() {
	fmt.Println(numa.CPUs(0, 1, 4, 5, 6).Lscpu())
	fmt.Println(numa.CPUs(0, 1, 4, 5, 6).String())
	// Output:
	// 0,1,4-6
	// 0-1,4-6
}

// Discover this host and print it as numactl -H does.
func ExampleHost_Topology() {
	topo, err := numa.NewDefault().Topology()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(topo.Numactl())
}

// Find the node of a NIC from /sys/class/net/IF/device/numa_node.
func ExampleHost_NetDevice() {
	h := numa.NewDefault()
	dev, err := h.NetDevice("eth0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: node %d, local cpus %s\n", dev.Name, dev.Node, dev.LocalCPUs)
}

// Pin a process and all its threads to the CPUs local to its NIC, then put
// it back: the non-destructive alternative to taking CPUs offline.
func ExampleHost_Pin() {
	h := numa.NewDefault()
	topo, err := h.Topology()
	if err != nil {
		log.Fatal(err)
	}
	dev, err := h.NetDevice("eth0")
	if err != nil {
		log.Fatal(err)
	}
	cpus, err := topo.PickCPUsNear(dev, 8, nil)
	if err != nil {
		log.Fatal(err)
	}
	pid := 4677 // e.g. Tomcat's JVM
	before, err := h.Pin(pid, cpus)
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := h.RestoreAffinity(before); err != nil {
			log.Print(err)
		}
	}()
}
