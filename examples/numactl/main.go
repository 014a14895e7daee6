//go:build linux

// Command numactl prints the NUMA hardware view as `numactl -H` does, the
// lscpu NUMA lines, and the node and CPUs local to a network interface.
//
//	numactl -H                     # numactl -H on this host
//	numactl -lscpu                 # the lscpu NUMA lines
//	numactl -dev eth0 -n 8         # eth0's node and the 8 CPUs a tuning step keeps
//	numactl -root DIR -H           # a captured tree (DIR holds sys/)
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/nettune/nettune/numa"
)

func main() {
	log.SetFlags(0)
	hw := flag.Bool("H", false, "print the hardware view as numactl -H does")
	lscpu := flag.Bool("lscpu", false, "print the NUMA lines of lscpu")
	dev := flag.String("dev", "", "network interface: print its node and the CPUs local to it")
	n := flag.Int("n", 0, "with -dev: how many CPUs to keep (0: all of the node's CPUs)")
	smt := flag.Bool("pack", false, "with -dev: fill whole cores (all siblings) before the next core")
	onlineOnly := flag.Bool("online-only", false, "with -dev: pick only among CPUs online now")
	root := flag.String("root", "/", "host root holding sys/ and proc/")
	flag.Parse()
	if err := run(os.Stdout, os.Stderr, *root, *hw, *lscpu, *dev, *n, *smt, *onlineOnly); err != nil {
		log.Fatal(err)
	}
}

// run prints to w, and to warn what numactl warns about on stderr.
func run(w, warn io.Writer, root string, hw, lscpu bool, dev string, n int, pack, onlineOnly bool) error {
	h, err := numa.New(root)
	if err != nil {
		return err
	}
	t, err := h.Topology()
	if err != nil {
		return err
	}
	if !hw && !lscpu && dev == "" {
		hw = true
	}
	if hw {
		if err := t.WriteNumactl(w); err != nil {
			return err
		}
		for _, nd := range t.Nodes {
			if m := nd.Memory; m != nil && (m.NoTotal || m.NoFree) {
				fmt.Fprintf(warn, "numactl: warning: node %d: meminfo has only one of MemTotal and MemFree; the other is <not available>\n", nd.ID)
			}
		}
	}
	if lscpu {
		if err := t.WriteLscpu(w, nil); err != nil {
			return err
		}
	}
	if dev == "" {
		return nil
	}
	d, err := h.NetDevice(dev)
	if err != nil {
		return err
	}
	node, err := t.DeviceNode(d)
	if err != nil {
		return err
	}
	if d.Virtual {
		fmt.Fprintf(w, "%s: virtual interface, no numa_node; using node %d, the host's only node\n", d.Name, node)
	} else {
		where := d.Path
		if root != "/" {
			where = strings.TrimPrefix(where, h.Root())
		}
		fmt.Fprintf(w, "%s: numa_node %d (%s), local_cpulist %s\n", d.Name, d.Node, where, d.LocalCPUs)
	}
	nd, _ := t.Node(node)
	if n == 0 {
		n = nd.AllCPUs.Len()
		if onlineOnly {
			n = nd.CPUs.Len()
		}
	}
	opts := &numa.PickOptions{IncludeOffline: !onlineOnly}
	if pack {
		opts.SMT = numa.PackCores
	}
	keep, err := t.PickCPUsNear(d, n, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "node %d cpus: %s (online now: %s)\n", node, nd.AllCPUs, orNone(nd.CPUs.String()))
	fmt.Fprintf(w, "keep online: %s\n", keep)
	fmt.Fprintf(w, "take offline: %s\n", orNone(t.AllCPUs().Difference(keep).String()))
	return nil
}

func orNone(list string) string {
	if list == "" {
		return "(none)"
	}
	return list
}
