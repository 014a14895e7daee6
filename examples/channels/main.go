//go:build linux

// Command channels shows and sets a NIC's ethtool channels like
// `ethtool -l IF` and `ethtool -L IF combined N`, finds the NIC that holds
// an address as the Arm Neoverse Tomcat tuning guide does with `ip addr`,
// and shows or spreads the queues' IRQs over CPUs. Changes are a dry run unless -apply is given.
//
//	channels -l eth0
//	channels -L eth0 combined 8 [-apply]
//	channels -for-ip 10.169.226.181 -L rx 2 tx 2 [-apply]
//	channels -irqs eth0
//	channels -spread 0-7 eth0 [-apply]
package main

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/nic"
)

const synopsis = `usage: channels [-l] IF | -for-ip ADDR [-l]      show channels, as ethtool -l
       channels -L IF (rx N | tx N | other N | combined N)... [-apply]
       channels -irqs IF                            show the queues' IRQs
       channels -spread CPUS IF [-apply]            spread the queue IRQs over CPUS
Changes are a dry run without -apply. Exit status: 0 done, 1 failed, 2 a bad command line.`

func main() {
	cliflag.Exit("channels", run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := cliflag.New("channels", synopsis, stdout)
	fs.Bool("l", false, "show channels, as ethtool -l IF (the default)")
	set := fs.Bool("L", false, "set channels: IF followed by rx N, tx N, other N or combined N, as ethtool -L")
	irqs := fs.Bool("irqs", false, "show which IRQ serves which queue, its per-CPU counts and affinity")
	spread := fs.String("spread", "", "spread the queue IRQs one per CPU over this CPU list (0-7)")
	forIP := fs.String("for-ip", "", "use the interface holding this IPv4 or IPv6 address instead of naming it")
	apply := fs.Bool("apply", false, "make the change; without it -L and -spread only print what they would do")
	netns := fs.String("netns", "", "network namespace file (/run/netns/NAME)")
	root := fs.String("root", "/", "host root holding sys/ and proc/")
	// Flags may follow the positional arguments (-L eth0 combined 8 -apply).
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		i := 0
		for i < len(args) && !strings.HasPrefix(args[i], "-") {
			i++
		}
		pos = append(pos, args[:i]...)
		if i == len(args) {
			break
		}
		args = args[i:]
	}
	if err := refuse(fs.Given(), *set, *spread != "", *forIP != "", len(pos)); err != nil {
		return err
	}

	c, err := nic.New(&nic.Options{Root: *root, NetNS: *netns})
	if err != nil {
		return err
	}
	defer c.Close()

	var ifname string
	if *forIP != "" {
		a, err := netip.ParseAddr(*forIP)
		if err != nil {
			return cliflag.Usagef("-for-ip %q: want an IPv4 or IPv6 address: %w", *forIP, err)
		}
		it, err := c.InterfaceByAddr(a)
		if err != nil {
			return err
		}
		ifname = it.Name
		fmt.Fprintf(stderr, "%s holds %s (driver %q, physical %t, NUMA node %d)\n", it.Name, a, it.Driver, it.Physical, it.NUMANode)
	} else {
		ifname, pos = pos[0], pos[1:]
	}

	switch {
	case *set:
		u, err := nic.ParseChannelsUpdate(pos)
		if err != nil {
			return cliflag.Usage(err)
		}
		if !*apply {
			plan, err := c.PlanChannels(ifname, u)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "dry run: %s on %s: %s (pass -apply to change it)\n", u, ifname, plan)
			return nil
		}
		change, err := c.SetChannels(ifname, u)
		if err != nil {
			return err
		}
		undo := fmt.Sprintf("-L %s %s -apply", ifname, change.Undo())
		if *netns != "" {
			undo = "-netns " + *netns + " " + undo
		}
		fmt.Fprintf(stdout, "%s: %s; to undo: channels %s\n", ifname, change, undo)
		return nic.FormatChannels(stdout, ifname, change.After, nil)
	case *spread != "":
		cpus, err := nic.ParseCPUList(*spread)
		if err != nil {
			return cliflag.Usagef("-spread: %w", err)
		}
		if !*apply {
			plan, err := c.PlanQueueSpread(ifname, cpus)
			if err != nil {
				return err
			}
			for _, a := range plan {
				fmt.Fprintf(stdout, "dry run: %s\n", a)
			}
			return nil
		}
		prev, err := c.SpreadQueueIRQs(ifname, cpus)
		if err != nil {
			return err
		}
		for _, a := range prev {
			fmt.Fprintf(stdout, "irq %d was on cpus %s\n", a.IRQ, nic.CPUList(a.CPUs))
		}
		return nil
	case *irqs:
		qs, err := c.QueueIRQs(ifname)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-5s %-12s %-10s %-10s %-12s %s\n", "IRQ", "QUEUE", "AFFINITY", "EFFECTIVE", "COUNT", "NAME")
		for _, q := range qs {
			queue := q.Kind.String()
			if q.Queue >= 0 {
				queue = fmt.Sprintf("%s %d", q.Kind, q.Queue)
			}
			fmt.Fprintf(stdout, "%-5d %-12s %-10s %-10s %-12d %s\n", q.IRQ, queue, nic.CPUList(q.Affinity), nic.CPUList(q.Effective), q.Total(), q.Name)
		}
		return nil
	default: // -l
		ch, err := c.Channels(ifname)
		if err != nil {
			return err
		}
		return nic.FormatChannels(stdout, ifname, ch, nil)
	}
}

// refuse returns the first contradictory or pointless combination: one
// mode at most, -apply only where there is a change, and the interface
// named once (an argument or -for-ip).
func refuse(given cliflag.Given, set, spread, forIP bool, npos int) error {
	var modes []string
	for _, m := range []string{"l", "L", "irqs", "spread"} {
		if given[m] {
			modes = append(modes, "-"+m)
		}
	}
	switch {
	case len(modes) > 1:
		return cliflag.Usagef("%s: give one of them", strings.Join(modes, " and "))
	case given["apply"] && !set && !spread:
		return cliflag.Usagef("-apply makes the change of -L or -spread: give one of them (showing changes nothing)")
	case !forIP && npos == 0:
		return cliflag.Usagef("name an interface, or pass -for-ip ADDR")
	case !set && (forIP && npos > 0 || npos > 1):
		return cliflag.Usagef("unexpected arguments: one interface, named or by -for-ip (only -L takes more: rx N tx N ...)")
	}
	return nil
}
