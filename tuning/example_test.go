package tuning_test

import (
	"context"
	"fmt"
	"log"
	"os/exec"

	"github.com/nettune/nettune/tuning"
)

// The lscpu summary of the seeds' host after step 002: only node 1's
// 96-103 online.
func ExampleSummary_Text() {
	online, _ := tuning.ParseCPUList("96-103")
	offline, _ := tuning.ParseCPUList("0-95,104-191")
	s := tuning.Summary{
		CPUs:    192,
		Online:  online,
		Offline: offline,
		Nodes:   []tuning.NodeCPUs{{Node: 0}, {Node: 1, CPUs: online}},
	}
	fmt.Print(s.Text(nil))
	// Output:
	// CPU(s):                      192
	//   On-line CPU(s) list:       96-103
	//   Off-line CPU(s) list:      0-95,104-191
	// NUMA:
	//   NUMA node(s):              2
	//   NUMA node0 CPU(s):
	//   NUMA node1 CPU(s):         96-103
}

func ExampleLscpuList() {
	smt, _ := tuning.ParseCPUList("0-1,8-9,16-23")
	fmt.Println(smt.String())
	fmt.Println(tuning.LscpuList(smt))
	// Output:
	// 0-1,8-9,16-23
	// 0,1,8,9,16-23
}

func ExampleSysctlPath() {
	for _, name := range []string{"net.ipv4.tcp_max_tw_buckets", "net/ipv4/conf/eth0.100/rp_filter", "net.ipv4..x"} {
		p, err := tuning.SysctlPath(name)
		fmt.Println(p, err)
	}
	// Output:
	// net/ipv4/tcp_max_tw_buckets <nil>
	// net/ipv4/conf/eth0.100/rp_filter <nil>
	//  tuning: invalid sysctl name "net.ipv4..x": empty component; expected a dotted name like net.ipv4.tcp_max_tw_buckets
}

func ExampleOpenFilesTarget() {
	cur := tuning.FileLimit{Soft: 1024, Hard: 524288}
	fmt.Println(tuning.OpenFilesTarget(cur, tuning.DefaultOpenFiles))
	fmt.Println(tuning.OpenFilesTarget(cur, 1048576))
	// Output:
	// soft 65535, hard 524288
	// soft 1048576, hard 1048576
}

// The seeds' step 000 on the running host: keep CPUs 0-7 online, show
// lscpu's view, and put everything back.
func ExampleHost_KeepOnline() {
	h := tuning.NewDefault()
	want, err := tuning.ParseCPUList("0-7")
	if err != nil {
		log.Fatal(err)
	}
	snap, err := h.KeepOnline(context.Background(), want, nil)
	if err != nil {
		log.Fatal(err) // a *HotplugError: every CPU that failed, and why
	}
	defer func() {
		if err := h.RestoreCPUs(context.Background(), snap); err != nil {
			log.Print(err)
		}
	}()
	s, err := h.Summary()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(s)
}

// The ApacheBench walkthrough's sysctl, raised and put back.
func ExampleHost_SetSysctl() {
	h := tuning.NewDefault()
	prev, err := h.SetSysctl("net.ipv4.tcp_max_tw_buckets", "2000000")
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if _, err := h.SetSysctl("net.ipv4.tcp_max_tw_buckets", prev); err != nil {
			log.Print(err)
		}
	}()
}

// Start Tomcat as the seeds do after `ulimit -n 65535`.
func ExampleStartWithOpenFiles() {
	cmd := exec.Command("/usr/share/tomcat10/bin/catalina.sh", "run")
	lim, err := tuning.StartWithOpenFiles(cmd, tuning.DefaultOpenFiles)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tomcat runs with", lim)
}
