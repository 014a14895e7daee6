package tuning_test

import (
	"context"
	"fmt"
	"log"
	"os/exec"

	"github.com/nettune/nettune/tuning"
)

// The lscpu summary of the Arm Neoverse Tomcat tuning guide's 192-CPU,
// two-node host once only node 1's CPUs 96-103 are online.
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

// CPU lists in the kernel's form and in lscpu's, which writes a pair as two
// ids.
func ExampleParseCPUList() {
	smt, err := tuning.ParseCPUList("0-1,8-9,16-23")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(smt.String())
	fmt.Println(smt.Lscpu())
	// Output:
	// 0-1,8-9,16-23
	// 0,1,8,9,16-23
}

// The Arm Neoverse Tomcat tuning guide's first step on the running host:
// keep CPUs 0-7 online, show lscpu's view, and put everything back.
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

// Start Tomcat as the Arm Neoverse Tomcat tuning guide does after
// `ulimit -n 65535`, then put this process's limit back.
func ExampleRaiseOpenFilesLimit() {
	prev, err := tuning.RaiseOpenFilesLimit(65535)
	if err != nil {
		log.Fatal(err) // above the hard limit without CAP_SYS_RESOURCE
	}
	cmd := exec.Command("/usr/share/tomcat10/bin/catalina.sh", "run")
	startErr := cmd.Start() // the child inherits the raised limit
	if _, err := tuning.SetOpenFilesLimit(0, prev); err != nil {
		log.Print(err)
	}
	if startErr != nil {
		log.Fatal(startErr)
	}
	lim, err := tuning.OpenFilesLimit(cmd.Process.Pid)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tomcat runs with", lim)
}
