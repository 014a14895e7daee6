package nic_test

import (
	"fmt"
	"log"
	"net/netip"
	"os"
	"strings"

	"github.com/nettune/nettune/nic"
)

// Seed 001's step: the mlx5 NIC has 63 combined channels, the host keeps 8
// CPUs, so set combined 8 — checked as the kernel checks it.
func ExampleChannels_With() {
	before := nic.Channels{MaxCombined: 63, Combined: 63}
	after, err := before.With(before.QueueUpdate(8))
	if err != nil {
		log.Fatal(err)
	}
	nic.FormatChannels(os.Stdout, "enp1s0f0np0", after, nil)

	veth := nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}
	_, err = veth.With(nic.ChannelsUpdate{Combined: nic.Count(8)})
	fmt.Println(err)
	// Output:
	// Channel parameters for enp1s0f0np0:
	// Pre-set maximums:
	// RX:		n/a
	// TX:		n/a
	// Other:		n/a
	// Combined:	63
	// Current hardware settings:
	// RX:		n/a
	// TX:		n/a
	// Other:		n/a
	// Combined:	8
	// requested channel count exceeds maximum: combined 8, maximum 0 (the device has no combined channels; set rx and tx instead)
}

func ExampleParseChannels() {
	out := "Channel parameters for eno1:\nPre-set maximums:\nRX:             4\nTX:             4\n" +
		"Other:          n/a\nCombined:       n/a\nCurrent hardware settings:\nRX:             4\n" +
		"TX:             1\nOther:          n/a\nCombined:       n/a\n"
	name, ch, err := nic.ParseChannels(strings.NewReader(out))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(name, ch.HasCombined(), ch.RX, ch.TX, ch.QueueUpdate(2))
	// Output: eno1 false 4 1 rx 2 tx 2
}

func ExampleParseChannelsUpdate() {
	u, err := nic.ParseChannelsUpdate(strings.Fields("tx 2 rx 2"))
	fmt.Println(u, err)
	_, err = nic.ParseChannelsUpdate(strings.Fields("combined eight"))
	fmt.Println(err)
	// Output:
	// rx 2 tx 2 <nil>
	// nic: channels: combined "eight": want a decimal count 0-4294967295: invalid syntax
}

func ExampleParseInterrupts() {
	text := `           CPU0       CPU1       CPU3
 67:     548731          0          0   ITS-PCI-MSIX-0000:01:00.0   1 Edge      mlx5_comp0@pci:0000:01:00.0
 68:          0     412020         17   ITS-PCI-MSIX-0000:01:00.0   2 Edge      mlx5_comp1@pci:0000:01:00.0
IPI0:      65452      66228      51557       Rescheduling interrupts
`
	tab, err := nic.ParseInterrupts(strings.NewReader(text))
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range tab.Lines {
		kind, queue := nic.ClassifyIRQName(l.Name, "enp1s0f0np0")
		fmt.Printf("%s %v total=%d %s %d\n", l.IRQ, l.Counts, l.Total(), kind, queue)
	}
	// Output:
	// 67 [548731 0 0] total=548731 combined 0
	// 68 [0 412020 17] total=412037 combined 1
	// IPI0 [65452 66228 51557] total=183237 other -1
}

// Spread 63 queue IRQs over the 8 CPUs left online, as vendors'
// set_irq_affinity scripts do.
func ExamplePlanSpread() {
	var irqs []int
	for irq := 61; irq <= 123; irq++ {
		irqs = append(irqs, irq)
	}
	plan, err := nic.PlanSpread(irqs, []int{0, 1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(plan[0], plan[7], plan[8], plan[62])
	// Output: irq 61 cpus 0 irq 68 cpus 7 irq 69 cpus 0 irq 123 cpus 6
}

// Seed 001 end to end: find the NIC holding the host's address, set its
// queues to the number of CPUs kept online, and keep what to restore.
func ExampleClient_SetChannels() {
	c, err := nic.NewDefault()
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	it, err := c.InterfaceByAddr(netip.MustParseAddr("10.169.226.181"))
	if err != nil {
		log.Fatal(err)
	}
	ch, err := c.Channels(it.Name)
	if err != nil {
		log.Fatal(err)
	}
	change, err := c.SetChannels(it.Name, ch.QueueUpdate(8))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(it.Name, change) // enp1s0f0np0 combined 63 -> 8
	// Later: put the device back.
	if _, err := c.SetChannels(it.Name, change.Undo()); err != nil {
		log.Fatal(err)
	}
}

// Work on a veth inside a network namespace created with `ip netns add`.
func ExampleNew_netns() {
	c, err := nic.New(&nic.Options{NetNS: "/run/netns/bench"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ch, err := c.Channels("veth0")
	if err != nil {
		log.Fatal(err)
	}
	nic.FormatChannels(os.Stdout, "veth0", ch, nil)
}

// Pin each queue's IRQ of the NIC to one of the CPUs local to it, then
// restore the previous affinities.
func ExampleClient_SpreadQueueIRQs() {
	c, err := nic.NewDefault()
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	prev, err := c.SpreadQueueIRQs("enp1s0f0np0", []int{0, 1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		log.Fatal(err)
	}
	qs, err := c.QueueIRQs("enp1s0f0np0")
	if err != nil {
		log.Fatal(err)
	}
	for _, q := range qs {
		fmt.Println(q.IRQ, q.Kind, q.Queue, nic.CPUList(q.Affinity), q.Total())
	}
	if _, err := c.ApplyIRQAffinity(prev); err != nil {
		log.Fatal(err)
	}
}
