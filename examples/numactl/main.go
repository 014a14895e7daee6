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
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/numa"
)

const synopsis = `usage: numactl [-H] [-lscpu] [-root DIR]          numactl -H's hardware view, lscpu's NUMA lines
       numactl -dev IFACE [-n N] [-pack] [-online-only] [-H] [-lscpu] [-root DIR]
Exit status: 0 done, 1 failed, 2 a bad command line.`

func main() {
	cliflag.Exit("numactl", runArgs(os.Args[1:], os.Stdout))
}

// runArgs parses the command line, refusing contradictory or pointless
// flag combinations, then runs it.
func runArgs(args []string, w io.Writer) error {
	fs := cliflag.New("numactl", synopsis, w)
	hw := fs.Bool("H", false, "print the hardware view as numactl -H does (the default without -lscpu or -dev)")
	lscpu := fs.Bool("lscpu", false, "print the NUMA lines of lscpu")
	dev := fs.String("dev", "", "network interface: print its node and the CPUs local to it")
	n := fs.Int("n", 0, "with -dev: how many CPUs to keep (0: all of the node's CPUs)")
	smt := fs.Bool("pack", false, "with -dev: fill whole cores (all siblings) before the next core")
	onlineOnly := fs.Bool("online-only", false, "with -dev: pick only among CPUs online now")
	root := fs.String("root", "/", "host root holding sys/ and proc/")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	given := fs.Given()
	for _, f := range []string{"n", "pack", "online-only"} {
		if given[f] && *dev == "" {
			return cliflag.Usagef("-%s picks CPUs near -dev's interface: give -dev IFACE", f)
		}
	}
	if *n < 0 {
		return cliflag.Usagef("-n %d: want a CPU count >= 0 (0: all of the node's)", *n)
	}
	return run(w, os.Stderr, *root, *hw, *lscpu, *dev, *n, *smt, *onlineOnly)
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
