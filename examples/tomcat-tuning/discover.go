//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// study is what discovery found and what the steps and the measurement
// share.
type study struct {
	o    options
	w    io.Writer
	live bool // the running host, not a fixture root

	cpuHost  *tuning.Host
	numaHost *numa.Host
	online   tuning.CPUSet

	// n is the CPU count the guide's steps use (-cpus capped).
	n int
	// tomcatCPUs are the CPUs Tomcat runs on: kept online (hotplug) or
	// its affinity (affinity); loadCPUs the others, for the local load
	// generator (affinity only). Changed by the numa-local step.
	mu           sync.Mutex
	tomcatCPUs   tuning.CPUSet
	loadCPUs     tuning.CPUSet
	notes        []string
	inst         *tomcatconf.Instance
	instErr      error
	connQuery    tomcatconf.ConnectorQuery
	port         string
	url          string
	iface        string // "" when none
	ifaceWhy     string // why there is none, or why it cannot be tuned
	ifaceVirtual bool
	ifaceNode    int
	channels     *nic.Channels
	channelsErr  error
	grubPath     string
	grub         *bootcfg.Config
	grubErr      error
	running      *bootcfg.Cmdline
	measured     []loadgen.StepFigures
	jvmPID       int
	wasRunning   bool
	// control is how the study starts and stops Tomcat: through its
	// systemd unit, or as its child.
	control tomcatconf.Control
	// stdin reads the Enter presses of -remote-load: one reader for the
	// whole run, so lines it buffered are not lost.
	stdin *bufio.Reader
}

func (s *study) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.notes = append(s.notes, msg)
	fmt.Fprintf(s.w, "note: %s\n", msg)
}

// discover reads the host and prints it: CPUs and nodes, the NIC that
// carries the target address, the IOMMU state and boot parameters, and the
// Tomcat instance with its Connectors.
func discover(ctx context.Context, w io.Writer, o options) (*study, error) {
	s := &study{o: o, w: w, live: o.root == "/", ifaceNode: numa.NodeUnknown}
	var err error
	if s.cpuHost, err = tuning.New(o.root); err != nil {
		return nil, err
	}
	if s.numaHost, err = numa.New(o.root); err != nil {
		return nil, err
	}
	if o.apply || o.revert {
		fmt.Fprintf(w, "journal: %s\n", o.journal)
	}

	fmt.Fprintln(w, "== Host CPUs (lscpu) ==")
	sum, err := s.cpuHost.Summary()
	if err != nil {
		return nil, err
	}
	fmt.Fprint(w, sum.Text(nil))
	topo, err := s.numaHost.Topology()
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(w, "== NUMA (numactl -H) ==")
	fmt.Fprint(w, topo.Numactl())
	s.online = topo.Online
	s.chooseCPUs()

	if err := s.findTomcat(); err != nil {
		return nil, err
	}
	if s.inst != nil {
		if err := s.detectControl(ctx); err != nil {
			return nil, err
		}
	}
	s.findNIC(ctx)
	s.findBoot()
	return s, nil
}

// chooseCPUs caps -cpus to the host and picks the CPUs Tomcat gets.
func (s *study) chooseCPUs() {
	s.n = s.o.cpus
	if have := s.online.Len(); s.n > have {
		s.note("-cpus %d capped to the %d online CPUs of this host", s.o.cpus, have)
		s.n = have
	}
	if s.o.cpuMethod == methodAffinity && s.live && !s.o.remote && s.n >= s.online.Len() && s.online.Len() > 1 {
		s.n = s.online.Len() - 1
		s.note("affinity: Tomcat gets %d CPU(s) so that the local load generator has the rest", s.n)
	}
	s.tomcatCPUs = s.online.First(s.n)
	s.loadCPUs = s.online.Difference(s.tomcatCPUs)
	fmt.Fprintf(s.w, "Tomcat CPUs: %s (%d, by %s)", s.tomcatCPUs, s.n, s.o.cpuMethod)
	if s.o.cpuMethod == methodAffinity && !s.loadCPUs.IsEmpty() {
		fmt.Fprintf(s.w, "; load generator CPUs: %s", s.loadCPUs)
	}
	fmt.Fprintln(s.w)
}

// findTomcat locates the instance and its HTTP Connector and prints them.
func (s *study) findTomcat() error {
	fmt.Fprintln(s.w, "== Tomcat ==")
	o := s.o
	if o.home != "" || o.base != "" {
		in := &tomcatconf.Instance{Home: o.home, Base: o.base}
		if in.Home == "" {
			in.Home = firstNonEmpty(os.Getenv("CATALINA_HOME"), tomcatconf.DefaultHome)
		}
		if in.Base == "" {
			in.Base = in.Home
		}
		if !hostExists(filepath.Join(in.Base, "conf", "server.xml")) {
			s.instErr = fmt.Errorf("%s: no conf/server.xml", in.Base)
		} else {
			s.inst = in
		}
	} else {
		s.inst, s.instErr = tomcatconf.FindInstance(o.root)
		if s.inst != nil && !s.live {
			// Read the fixture's files, not the host's.
			s.inst.Root = o.root
		}
	}
	if s.inst == nil {
		fmt.Fprintf(s.w, "no Tomcat instance: %v\n", s.instErr)
		s.port = o.port
		return nil
	}
	if o.home != "" || o.base != "" {
		// Debian's unit runs the base named by flags too.
		if _, err := s.inst.UseService(tomcatconf.DefaultService); err != nil && !errors.Is(err, tomcatconf.ErrNotFound) {
			return err
		}
	}
	xml := s.serverXML()
	fmt.Fprintf(s.w, "CATALINA_HOME %s\nCATALINA_BASE %s\nserver.xml    %s\n", s.inst.Home, s.inst.Base, xml)
	s.printTomcatRun()
	cfg, err := tomcatconf.Load(xml)
	if err != nil {
		// Debian's /etc/tomcat10 is root:tomcat 0640: plan on without it.
		fmt.Fprintf(s.w, "cannot read the instance's configuration (run as root or as tomcat to plan its steps): %v\n", err)
		s.inst, s.instErr = nil, err
		s.port = o.port
		return nil
	}
	for _, c := range cfg.Connectors() {
		fmt.Fprintf(s.w, "Connector %s (Service %s, line %d):", c.Name(), c.Service, c.Line)
		for _, a := range c.Attrs {
			fmt.Fprintf(s.w, " %s=%q", a.Name, a.Value)
		}
		fmt.Fprintln(s.w)
		if s.port == "" && (o.port == "" || o.port == c.Port) && isHTTP(c.Protocol) {
			s.port = c.Port
		}
	}
	if s.port == "" {
		if o.port != "" {
			return fmt.Errorf("%s: no HTTP Connector with port=%q", xml, o.port)
		}
		return fmt.Errorf("%s: no HTTP/1.1 Connector", xml)
	}
	s.connQuery = tomcatconf.ConnectorQuery{Port: s.port}
	if _, err := cfg.FindConnector(s.connQuery); err != nil {
		return err
	}
	fmt.Fprintf(s.w, "tuning the Connector on port %s\n", s.port)
	return nil
}

// printTomcatRun prints how the study runs Tomcat (the user, the command,
// the systemd unit it copies) and the JVMs of the base that run now.
func (s *study) printTomcatRun() {
	in := s.inst
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
	fmt.Fprintf(s.w, "runs as       %s: %s", who, how)
	if in.Service != "" {
		fmt.Fprintf(s.w, " (as the %s unit does)", in.Service)
	}
	fmt.Fprintln(s.w)
	if !s.live {
		return
	}
	jvms, err := in.JVMs()
	switch {
	case err != nil:
		fmt.Fprintf(s.w, "running JVMs: %v\n", err)
	case len(jvms) == 0:
		fmt.Fprintln(s.w, "not running")
	default:
		for _, j := range jvms {
			fmt.Fprintf(s.w, "running       JVM %d as %s\n", j.PID, firstNonEmpty(j.User, strconv.Itoa(j.UID)))
		}
	}
}

// serverXML is the path of server.xml as this process opens it
// (FindInstance joins the root already).
func (s *study) serverXML() string { return s.inst.ServerXML() }

func isHTTP(protocol string) bool {
	return protocol == "" || protocol == "HTTP/1.1" || strings.Contains(protocol, "Http11")
}

func hostExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func firstNonEmpty(v ...string) string {
	for _, x := range v {
		if x != "" {
			return x
		}
	}
	return ""
}

// targetURL is -url, or the HelloWorld page on the tuned Connector.
func (s *study) targetURL() string {
	if s.o.url != "" {
		return s.o.url
	}
	port := s.port
	if _, err := strconv.Atoi(port); err != nil || port == "" {
		port = "8080"
	}
	return "http://127.0.0.1:" + port + loadgen.HelloWorldPath
}

// findNIC finds the interface that carries the target address (or -iface),
// its NUMA node and its channels.
func (s *study) findNIC(ctx context.Context) {
	fmt.Fprintln(s.w, "== NIC ==")
	s.url = s.targetURL()
	if s.o.loadNetNS != "" {
		fmt.Fprintf(s.w, "load generator: network namespace %s (ip netns exec %s), as from a client machine\n", s.o.loadNetNS, s.o.loadNetNS)
	}
	name := s.o.iface
	if name == "" && s.live {
		addr, err := urlAddr(ctx, s.url)
		if err != nil {
			s.ifaceWhy = err.Error()
			fmt.Fprintf(s.w, "no NIC: %s\n", s.ifaceWhy)
			return
		}
		c, err := nic.NewDefault()
		if err != nil {
			s.ifaceWhy = err.Error()
			fmt.Fprintf(s.w, "no NIC: %s\n", s.ifaceWhy)
			return
		}
		defer c.Close()
		ifc, err := c.InterfaceByAddr(addr)
		if err != nil {
			s.ifaceWhy = fmt.Sprintf("no interface holds %s (the URL's host): it is remote", addr)
			fmt.Fprintf(s.w, "no NIC: %s\n", s.ifaceWhy)
			return
		}
		name = ifc.Name
		fmt.Fprintf(s.w, "%s holds %s (from %s)\n", name, addr, s.url)
	}
	if name == "" {
		name = firstPhysical(s.o.root)
		if name == "" {
			s.ifaceWhy = "no physical interface under " + s.o.root
			fmt.Fprintf(s.w, "no NIC: %s\n", s.ifaceWhy)
			return
		}
		fmt.Fprintf(s.w, "%s: first physical interface under %s\n", name, s.o.root)
	}
	s.iface = name
	dev, err := s.numaHost.NetDevice(name)
	switch {
	case err != nil:
		s.ifaceWhy = err.Error()
	case dev.Virtual:
		s.ifaceVirtual = true
		s.ifaceWhy = name + " is virtual (no device/: loopback, veth, bridge)"
	default:
		s.ifaceNode = dev.Node
	}
	fmt.Fprintf(s.w, "%s: NUMA node %s", name, nodeText(s.ifaceNode))
	if s.ifaceWhy != "" {
		fmt.Fprintf(s.w, " (%s)", s.ifaceWhy)
	}
	fmt.Fprintln(s.w)
	if !s.live {
		s.channelsErr = fmt.Errorf("channels of %s are not readable from a fixture root (ethtool ioctl on the running host)", name)
		fmt.Fprintf(s.w, "%v\n", s.channelsErr)
		return
	}
	c, err := nic.NewDefault()
	if err != nil {
		s.channelsErr = err
		return
	}
	defer c.Close()
	ch, err := c.Channels(name)
	if err != nil {
		s.channelsErr = err
		fmt.Fprintf(s.w, "channels: %v\n", err)
		return
	}
	s.channels = &ch
	_ = nic.FormatChannels(s.w, name, ch, nil)
	if s.ifaceVirtual && ch.MaxQueues() > 1 {
		fmt.Fprintf(s.w, "%s is virtual but has channels to set (up to %d queues): the nic-queues step tunes it\n", name, ch.MaxQueues())
	}
}

func nodeText(n int) string {
	if n < 0 {
		return "unknown"
	}
	return strconv.Itoa(n)
}

// urlAddr resolves the host of a URL to one address.
func urlAddr(ctx context.Context, raw string) (netip.Addr, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("-url %q: %w", raw, err)
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		return a, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("-url %q: cannot resolve %q: %v", raw, host, err)
	}
	return addrs[0].Unmap(), nil
}

// firstPhysical returns the first interface, by name, that sysfs under
// root shows as physical (nic.Device.Physical); "" when there is none.
func firstPhysical(root string) string {
	c, err := nic.New(&nic.Options{Root: root})
	if err != nil {
		return ""
	}
	defer c.Close()
	devs, err := c.Devices()
	if err != nil {
		return ""
	}
	for _, d := range devs {
		if d.Physical {
			return d.Name
		}
	}
	return ""
}

// findBoot reads the GRUB defaults file, the running command line and the
// IOMMU state.
func (s *study) findBoot() {
	fmt.Fprintln(s.w, "== Boot and IOMMU ==")
	bh, err := bootcfg.New(s.o.root)
	if err != nil {
		s.grubErr = err
		fmt.Fprintf(s.w, "boot configuration: %v\n", err)
		return
	}
	s.grubPath = s.o.grub
	if s.grubPath == "" {
		s.grubPath = bh.DefaultGrubPath()
	}
	if s.grub, s.grubErr = bootcfg.LoadConfig(s.grubPath); s.grubErr != nil {
		fmt.Fprintf(s.w, "GRUB defaults: %v\n", s.grubErr)
	} else {
		for _, name := range []string{bootcfg.CmdlineLinux, bootcfg.CmdlineLinuxDefault} {
			v := s.grub.Lookup(name)
			switch {
			case !v.Set:
				fmt.Fprintf(s.w, "%s: not set\n", name)
			case !v.Known:
				fmt.Fprintf(s.w, "%s: computed by the shell: %v\n", name, v.Dynamic)
			default:
				fmt.Fprintf(s.w, "%s (%s:%d): %q\n", name, v.File, v.Line, v.Value)
			}
		}
	}
	if cl, err := bh.Cmdline(); err == nil {
		s.running = cl
		fmt.Fprintf(s.w, "running kernel IOMMU parameters: %s\n", paramsText(bootcfg.IOMMUParams(cl)))
	}
	if st, err := bh.IOMMU(); err != nil {
		fmt.Fprintf(s.w, "IOMMU state: %v\n", err)
	} else {
		fmt.Fprintf(s.w, "IOMMU: %s\n", st)
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
