//go:build linux

package study

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/nic"
)

// WriteHost prints what Discover found, section by section: the CPUs as
// lscpu and numactl -H show them, the Tomcat instance, the NIC and the
// boot configuration.
func WriteHost(w io.Writer, h Host) {
	fmt.Fprintln(w, "== Host CPUs (lscpu) ==")
	fmt.Fprint(w, h.CPUs.Summary.Text(nil))
	fmt.Fprintln(w, "== NUMA (numactl -H) ==")
	fmt.Fprint(w, h.CPUs.Topology.Numactl())
	for _, n := range h.CPUs.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	c := h.CPUs
	fmt.Fprintf(w, "Tomcat CPUs: %s (%d, by %s)", c.Tomcat, c.N, c.Method)
	if c.Method == MethodAffinity && !c.Load.IsEmpty() {
		fmt.Fprintf(w, "; load generator CPUs: %s", c.Load)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "CPU method: %s\n", c.Choice)
	writeTomcat(w, h)
	writeNIC(w, h.NIC, h.Live)
	writeBoot(w, h.Boot)
}

func writeTomcat(w io.Writer, h Host) {
	fmt.Fprintln(w, "== Tomcat ==")
	t := h.Tomcat
	in := t.Instance
	if in == nil {
		fmt.Fprintf(w, "no Tomcat instance: %v\n", t.Err)
		return
	}
	fmt.Fprintf(w, "CATALINA_HOME %s\nCATALINA_BASE %s\nserver.xml    %s\n", in.Home, in.Base, in.ServerXML())
	who := in.User
	if who == "" {
		who = "the owner of " + filepath.Join(in.Base, "conf")
		if a, err := in.Account(); err == nil {
			who = a.Name + " (" + who + ")"
		}
	}
	how := strings.Join(in.RunCommand, " ")
	if how == "" {
		how = filepath.Join(in.Home, "bin", "catalina.sh") + " run"
	}
	fmt.Fprintf(w, "runs as       %s: %s", who, how)
	if in.Service != "" {
		fmt.Fprintf(w, " (as the %s unit does)", in.Service)
	}
	fmt.Fprintln(w)
	if h.Live {
		switch {
		case t.JVMsErr != nil:
			fmt.Fprintf(w, "running JVMs: %v\n", t.JVMsErr)
		case len(t.JVMs) == 0:
			fmt.Fprintln(w, "not running")
		default:
			for _, j := range t.JVMs {
				fmt.Fprintf(w, "running       JVM %d as %s\n", j.PID, firstNonEmpty(j.User, strconv.Itoa(j.UID)))
			}
		}
	}
	if t.ConfigErr != nil {
		fmt.Fprintf(w, "cannot read the instance's configuration (run as root or as tomcat to plan its steps): %v\n", t.ConfigErr)
		return
	}
	for _, c := range t.Connectors {
		fmt.Fprintf(w, "Connector %s (Service %s, line %d):", c.Name(), c.Service, c.Line)
		for _, a := range c.Attrs {
			fmt.Fprintf(w, " %s=%q", a.Name, a.Value)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "tuning the Connector on port %s\n", t.Port)
	switch {
	case !h.Live:
	case t.Systemd():
		fmt.Fprintf(w, "controlled by systemd: %s (%s); restarts go through systemctl, limits through a runtime drop-in\n", in.Service, t.ControlWhy)
	default:
		fmt.Fprintf(w, "controlled by this program: the JVM runs as its child (%s)\n", t.ControlWhy)
	}
}

func writeNIC(w io.Writer, n NIC, live bool) {
	fmt.Fprintln(w, "== NIC ==")
	if n.LoadNetNS != "" {
		fmt.Fprintf(w, "load generator: network namespace %s (ip netns exec %s), as from a client machine\n", n.LoadNetNS, n.LoadNetNS)
	}
	if n.Name == "" {
		fmt.Fprintf(w, "no NIC: %s\n", n.Why)
		return
	}
	switch n.Found {
	case FoundByAddr:
		fmt.Fprintf(w, "%s holds %s (from %s)\n", n.Name, n.Addr, n.URL)
	case FoundFirstPhysical:
		fmt.Fprintf(w, "%s: first physical interface under %s\n", n.Name, n.Root)
	}
	fmt.Fprintf(w, "%s: NUMA node %s", n.Name, nodeText(n.Node))
	if n.Why != "" {
		fmt.Fprintf(w, " (%s)", n.Why)
	}
	fmt.Fprintln(w)
	switch {
	case n.Channels != nil:
		_ = nic.FormatChannels(w, n.Name, *n.Channels, nil)
		if n.Virtual && n.Channels.MaxQueues() > 1 {
			fmt.Fprintf(w, "%s is virtual but has channels to set (up to %d queues): the nic-queues step tunes it\n", n.Name, n.Channels.MaxQueues())
		}
	case !live:
		fmt.Fprintf(w, "%v\n", n.ChannelsErr)
	case n.ChannelsErr != nil:
		fmt.Fprintf(w, "channels: %v\n", n.ChannelsErr)
	}
}

func nodeText(n int) string {
	if n < 0 {
		return "unknown"
	}
	return strconv.Itoa(n)
}

func writeBoot(w io.Writer, b Boot) {
	fmt.Fprintln(w, "== Boot and IOMMU ==")
	if b.GrubPath == "" {
		fmt.Fprintf(w, "boot configuration: %v\n", b.Err)
		return
	}
	if b.Err != nil {
		fmt.Fprintf(w, "GRUB defaults: %v\n", b.Err)
	} else {
		for _, name := range []string{bootcfg.CmdlineLinux, bootcfg.CmdlineLinuxDefault} {
			v := b.Grub.Lookup(name)
			switch {
			case !v.Set:
				fmt.Fprintf(w, "%s: not set\n", name)
			case !v.Known:
				fmt.Fprintf(w, "%s: computed by the shell: %v\n", name, v.Dynamic)
			default:
				fmt.Fprintf(w, "%s (%s:%d): %q\n", name, v.File, v.Line, v.Value)
			}
		}
	}
	if b.Running != nil {
		fmt.Fprintf(w, "running kernel IOMMU parameters: %s\n", paramsText(bootcfg.IOMMUParams(b.Running)))
	}
	if b.IOMMUErr != nil {
		fmt.Fprintf(w, "IOMMU state: %v\n", b.IOMMUErr)
	} else {
		fmt.Fprintf(w, "IOMMU: %s\n", b.IOMMU)
	}
}

func paramsText(ps []bootcfg.Param) string {
	if len(ps) == 0 {
		return "none"
	}
	var b []string
	for _, p := range ps {
		b = append(b, p.String())
	}
	return strings.Join(b, " ")
}

// errText is err's message, or none when err is nil.
func errText(err error, none string) string {
	if err == nil {
		return none
	}
	return err.Error()
}
