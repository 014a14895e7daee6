//go:build ignore

// gen_neoverse writes neoverse-v2-192cpu-2node.tar.gz: the sysfs of the
// Arm Neoverse Tomcat tuning guide's Neoverse-V2 host (192 CPUs, node0 =
// 0-95, node1 = 96-191, distances 10/100) in the state the guide's NUMA
// step shows it — CPUs 0-7 online, the rest offline — with node sizes and
// free memory that render as the guide's `numactl -H`, and the NIC
// enp1s0f0np0 on node 1 (numa_node 1, local_cpulist 96-191). Run with
// `go generate` in numa/.
package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
	"time"
)

const (
	ncpu     = 192
	perNode  = 96
	onlineHi = 7 // cpus 0..7 online, as the guide's first step leaves the host
)

// kB values whose MiB (kB/1024, rounded down) are the guide's numbers; the
// odd kB on top show the rounding.
var mem = [2]struct{ total, free uint64 }{
	{193502*1024 + 517, 188478*1024 + 211},
	{192625*1024 + 90, 192338*1024 + 1003},
}

func main() {
	files := map[string]string{}
	links := map[string]string{}
	node := "sys/devices/system/node/"
	cpu := "sys/devices/system/cpu/"
	files[node+"online"] = "0-1\n"
	files[node+"possible"] = "0-1\n"
	files[node+"has_cpu"] = "0\n"
	files[node+"has_memory"] = "0-1\n"
	files[node+"has_normal_memory"] = "0-1\n"
	dist := []string{"10 100\n", "100 10\n"}
	for n := 0; n < 2; n++ {
		d := fmt.Sprintf("%snode%d/", node, n)
		cpulist := ""
		if n == 0 {
			cpulist = fmt.Sprintf("0-%d", onlineHi)
		}
		files[d+"cpulist"] = cpulist + "\n"
		files[d+"distance"] = dist[n]
		m := mem[n]
		files[d+"meminfo"] = fmt.Sprintf(
			"Node %d MemTotal:       %8d kB\nNode %d MemFree:        %8d kB\nNode %d MemUsed:        %8d kB\n"+
				"Node %d Active:           123456 kB\nNode %d HugePages_Total:     0\nNode %d HugePages_Free:      0\n",
			n, m.total, n, m.free, n, m.total-m.free, n, n, n)
		for c := n * perNode; c < (n+1)*perNode; c++ {
			links[fmt.Sprintf("%scpu%d", d, c)] = fmt.Sprintf("../../cpu/cpu%d", c)
		}
	}
	files[cpu+"online"] = fmt.Sprintf("0-%d\n", onlineHi)
	files[cpu+"offline"] = fmt.Sprintf("%d-%d\n", onlineHi+1, ncpu-1)
	files[cpu+"possible"] = fmt.Sprintf("0-%d\n", ncpu-1)
	files[cpu+"present"] = fmt.Sprintf("0-%d\n", ncpu-1)
	files[cpu+"kernel_max"] = "4095\n"
	for c := 0; c < ncpu; c++ {
		d := fmt.Sprintf("%scpu%d/", cpu, c)
		links[fmt.Sprintf("%snode%d", d, c/perNode)] = fmt.Sprintf("../../node/node%d", c/perNode)
		if c > 0 { // cpu0 cannot be taken offline: no online file
			files[d+"online"] = map[bool]string{true: "1\n", false: "0\n"}[c <= onlineHi]
		}
		if c <= onlineHi { // offline CPUs have no topology/
			t := d + "topology/"
			files[t+"physical_package_id"] = fmt.Sprintf("%d\n", c/perNode)
			files[t+"core_id"] = fmt.Sprintf("%d\n", c)
			files[t+"core_cpus_list"] = fmt.Sprintf("%d\n", c)
			files[t+"thread_siblings_list"] = fmt.Sprintf("%d\n", c)
		}
	}
	pci := "sys/devices/pci0000:00/0000:00:00.0/0000:01:00.0/"
	files[pci+"numa_node"] = "1\n"
	files[pci+"local_cpulist"] = fmt.Sprintf("%d-%d\n", perNode, ncpu-1)
	files[pci+"local_cpus"] = "ffffffff,ffffffff,ffffffff,00000000,00000000,00000000\n"
	files[pci+"vendor"] = "0x15b3\n"
	files[pci+"net/enp1s0f0np0/address"] = "0e:cc:0b:ff:f6:57\n"
	links[pci+"net/enp1s0f0np0/device"] = "../../../0000:01:00.0"
	links["sys/class/net/enp1s0f0np0"] = "../../devices/pci0000:00/0000:00:00.0/0000:01:00.0/net/enp1s0f0np0"
	links["sys/bus/pci/devices/0000:01:00.0"] = "../../../devices/pci0000:00/0000:00:00.0/0000:01:00.0"
	files["sys/devices/virtual/net/lo/address"] = "00:00:00:00:00:00\n"
	links["sys/class/net/lo"] = "../../devices/virtual/net/lo"
	if err := write("neoverse-v2-192cpu-2node.tar.gz", files, links); err != nil {
		log.Fatal(err)
	}
}

func write(name string, files, links map[string]string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	mtime := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC) // reproducible output
	dirs := map[string]bool{}
	var names []string
	for p := range files {
		names = append(names, p)
	}
	for p := range links {
		names = append(names, p)
	}
	for _, p := range names {
		for d := p; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			dirs[d+"/"] = true
		}
	}
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, p := range names {
		h := &tar.Header{Name: p, ModTime: mtime, Mode: 0o444, Typeflag: tar.TypeReg}
		switch {
		case dirs[p]:
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case links[p] != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, links[p], 0o777
		default:
			h.Size = int64(len(files[p]))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(files[p])); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}
