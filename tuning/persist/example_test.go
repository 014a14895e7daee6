package persist_test

import (
	"fmt"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// The Arm Neoverse Tomcat guide's CPU and sysctl steps as a tuned profile
// that builds on the active one, with a [net] section as package nic
// renders it (nic.Channels.TunedNet).
func ExampleTunedProfile_Render() {
	offline, _ := tuning.ParseCPUList("8-9")
	net, _ := persist.ParseTunedConf([]byte("[net_nettune_eth0]\ntype=net\npriority=-1\ndevices=eth0\nchannels=combined 8\n"), "nic")
	p := persist.TunedProfile{
		Name:    "nettune-tomcat",
		Include: []string{"throughput-performance"},
		Sysfs:   persist.OfflineCPUs(offline),
		Sysctl:  []persist.Setting{{Key: "net.ipv4.tcp_max_tw_buckets", Value: "450000"}},
		Extra:   net,
	}
	conf, err := p.Conf().Render()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(conf))
	// Output:
	// [main]
	// include=throughput-performance
	//
	// [sysfs]
	// /sys/devices/system/cpu/cpu8/online=0
	// /sys/devices/system/cpu/cpu9/online=0
	//
	// [sysctl]
	// net.ipv4.tcp_max_tw_buckets=450000
	//
	// [net_nettune_eth0]
	// type=net
	// priority=-1
	// devices=eth0
	// channels=combined 8
}
