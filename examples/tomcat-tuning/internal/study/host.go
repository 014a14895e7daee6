//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// Host is what discovery found, one part per component, each with its own
// error or the reason a step cannot use it. It is a plain value: Discover
// reads it, WriteHost prints it, Steps plans from it.
type Host struct {
	// Root is the host root it was read from; Live when that is the
	// running host.
	Root string
	Live bool
	CPUs CPUs
	// Tomcat is the instance and its HTTP Connector.
	Tomcat Tomcat
	// NIC is the interface that carries the target URL's address.
	NIC NIC
	// Boot is the GRUB defaults file, the running command line and the
	// IOMMU state.
	Boot Boot
}

// CPUs is the host's CPUs and how the study splits them.
type CPUs struct {
	Summary  tuning.Summary
	Topology *numa.Topology
	// Online is the CPUs online at discovery.
	Online tuning.CPUSet
	// N is the CPU count the guide's steps use (-cpus capped); Tomcat the
	// CPUs Tomcat gets (kept online, or its affinity) and Load the others,
	// for a local load generator (affinity only).
	N            int
	Tomcat, Load tuning.CPUSet
	// Method is the CPU method used (Options.Method), Choice how it was
	// chosen.
	Method string
	Choice CPUMethodChoice
	// Pick is where Tomcat's CPUs are: the NUMA nodes they lie on (one
	// unless no node has N online CPUs) and why those (chooseCPUs).
	Pick numa.CompactPick
	// Notes say where -cpus was adjusted and why.
	Notes []string
}

// Tomcat is the instance the study tunes.
type Tomcat struct {
	// Instance is nil when none was found (Err says why) or its
	// configuration is unreadable (ConfigErr).
	Instance  *tomcatconf.Instance
	Err       error
	ConfigErr error
	// JVMs are the instance's JVMs running at discovery (JVMsErr when
	// they could not be listed); only on the running host.
	JVMs    []tomcatconf.JVM
	JVMsErr error
	// Connectors are server.xml's Connectors; Port the one tuned.
	Connectors []tomcatconf.Connector
	Port       string
	Query      tomcatconf.ConnectorQuery
	// Control is how the study starts and stops it (through its unit or
	// as its child) and ControlWhy why.
	Control    tomcatconf.Control
	ControlWhy string
}

// Usable reports whether there is an instance whose configuration could
// be read: one the steps can change.
func (t Tomcat) Usable() bool { return t.Instance != nil && t.ConfigErr == nil }

// why is the reason there is no usable instance.
func (t Tomcat) why() error {
	if t.ConfigErr != nil {
		return t.ConfigErr
	}
	return t.Err
}

// Systemd reports whether the study controls Tomcat through its unit.
func (t Tomcat) Systemd() bool { return t.Instance != nil && t.Control == tomcatconf.ControlSystemd }

// NIC is the interface the nic-queues and numa-local steps tune.
type NIC struct {
	// URL is the page measured; Addr its host's address (when resolved).
	URL  string
	Addr netip.Addr
	// LoadNetNS is the namespace the load runs from ("" this one).
	LoadNetNS string
	// Name is the interface, "" when none (Why says why). Found says how
	// it was found: FoundByAddr, FoundFirstPhysical, or "" (-iface).
	Name, Why, Found string
	// Root is the host root it was looked up under.
	Root string
	// Virtual: no device/ (loopback, veth, bridge). Node is its NUMA
	// node, numa.NodeUnknown when unknown.
	Virtual bool
	Node    int
	// Channels are its ethtool channels; nil with ChannelsErr when they
	// could not be read.
	Channels    *nic.Channels
	ChannelsErr error
}

// How NIC.Name was found.
const (
	FoundByAddr        = "address"        // it holds the URL's address
	FoundFirstPhysical = "first-physical" // the first physical interface
)

// Boot is the boot configuration the iommu step plans against.
type Boot struct {
	GrubPath string
	Grub     *bootcfg.Config
	Err      error
	// Running is the running kernel's command line; nil when unreadable.
	Running  *bootcfg.Cmdline
	IOMMU    string
	IOMMUErr error
}

// Discover reads the host under o.Root: CPUs and NUMA nodes, the Tomcat
// instance and its Connectors, the NIC that carries the target address,
// and the boot configuration. It changes nothing. Errors that make a
// component unusable are kept in that component; the returned error is
// one that leaves nothing to plan.
func Discover(ctx context.Context, o Options) (Host, error) {
	h := Host{Root: o.Root, Live: o.Live()}
	cpuHost, err := tuning.New(o.Root)
	if err != nil {
		return h, err
	}
	numaHost, err := numa.New(o.Root)
	if err != nil {
		return h, err
	}
	if h.CPUs.Summary, err = cpuHost.Summary(); err != nil {
		return h, err
	}
	if h.CPUs.Topology, err = numaHost.Topology(); err != nil {
		return h, err
	}
	state, err := cpuHost.CPUState()
	if err != nil {
		return h, err
	}
	if h.Tomcat, err = findTomcat(ctx, o, h.Live); err != nil {
		return h, err
	}
	h.NIC = findNIC(ctx, o, h.Live, h.Tomcat.Port, numaHost)
	h.CPUs.chooseCPUs(o, h.Live, h.NIC, state.Online.Difference(state.Hotpluggable()))
	h.Boot = findBoot(o)
	return h, nil
}

// chooseCPUs caps -cpus to the host and picks the CPUs Tomcat gets: N of
// the online CPUs on as few NUMA nodes as hold them, on the NIC's node
// when it has N online (numa.Topology.PickCompact gives the rules and says
// which applied). Online ones, under hotplug too: the step keeps CPUs
// online, and bringing the NIC's node up when its CPUs are offline (the
// Arm guide's host after its first step) is the numa-local step's change,
// measured against this baseline as the guide measures it; plan mode
// pins the temporary copy to these CPUs, which must be online. Under
// hotplug the CPUs that cannot go offline (fixed: no cpuN/online file,
// cpu0 on x86) stay online whatever is kept, so they are kept, unless
// there are more of them than N (the step is then skipped with the
// reason).
func (c *CPUs) chooseCPUs(o Options, live bool, nc NIC, fixed tuning.CPUSet) {
	c.Choice = CPUMethodChoiceOf(o)
	c.Online, c.Method = c.Topology.Online, c.Choice.Chosen
	c.N = o.CPUs
	if have := c.Online.Len(); c.N > have {
		c.Notes = append(c.Notes, fmt.Sprintf("-cpus %d capped to the %d online CPUs of this host", o.CPUs, have))
		c.N = have
	}
	if o.Method() == MethodAffinity && live && o.LoadHost == "" && c.N >= c.Online.Len() && c.Online.Len() > 1 {
		c.N = c.Online.Len() - 1
		c.Notes = append(c.Notes, fmt.Sprintf("affinity: Tomcat gets %d CPU(s) so that the local load generator has the rest", c.N))
	}
	opts := &numa.CompactOptions{}
	if nc.Name != "" {
		opts.Device = &numa.Device{Name: nc.Name, Node: nc.Node, Virtual: nc.Virtual}
	}
	if o.Method() == MethodHotplug && fixed.Len() <= c.N {
		opts.Include = fixed.Intersect(c.Online)
	}
	pick, err := c.Topology.PickCompact(c.N, opts)
	if err != nil {
		// Cannot happen with N capped to the online CPUs; keep the
		// lowest ids rather than fail the plan.
		c.Notes = append(c.Notes, fmt.Sprintf("CPUs for Tomcat: %v; taking the first %d online", err, c.N))
		pick = numa.CompactPick{CPUs: c.Online.First(c.N)}
	}
	c.Pick, c.Tomcat = pick, pick.CPUs
	c.Load = c.Online.Difference(c.Tomcat)
}

// findTomcat locates the instance and its HTTP Connector.
func findTomcat(ctx context.Context, o Options, live bool) (Tomcat, error) {
	var t Tomcat
	if o.Home != "" || o.Base != "" {
		in := &tomcatconf.Instance{Home: o.Home, Base: o.Base}
		if in.Home == "" {
			in.Home = firstNonEmpty(os.Getenv("CATALINA_HOME"), tomcatconf.DefaultHome)
		}
		if in.Base == "" {
			in.Base = in.Home
		}
		if _, err := os.Stat(filepath.Join(in.Base, "conf", "server.xml")); err != nil {
			t.Err = fmt.Errorf("%s: no conf/server.xml", in.Base)
		} else {
			t.Instance = in
		}
	} else {
		t.Instance, t.Err = tomcatconf.FindInstance(o.Root)
		if t.Instance != nil && !live {
			// Read the fixture's files, not the host's.
			t.Instance.Root = o.Root
		}
	}
	if t.Instance == nil {
		t.Port = o.Port
		return t, nil
	}
	if o.Home != "" || o.Base != "" {
		// Debian's unit runs the base named by flags too.
		if _, err := t.Instance.UseService(tomcatconf.DefaultService); err != nil && !errors.Is(err, tomcatconf.ErrNotFound) {
			return t, err
		}
	}
	if live {
		t.JVMs, t.JVMsErr = t.Instance.JVMs()
	}
	xml := t.Instance.ServerXML()
	cfg, err := tomcatconf.Load(xml)
	if errors.Is(err, os.ErrPermission) {
		// Debian's /etc/tomcat10 is root:tomcat 0640: plan on without it.
		t.ConfigErr = err
		t.Port = o.Port
		return t, nil
	}
	if err != nil {
		// A server.xml that does not parse is the user's to fix: measuring
		// something else instead would hide it.
		return t, fmt.Errorf("the Tomcat instance's configuration: %w", err)
	}
	t.Connectors = cfg.Connectors()
	for _, c := range t.Connectors {
		if t.Port == "" && (o.Port == "" || o.Port == c.Port) && isHTTP(c.Protocol) {
			t.Port = c.Port
		}
	}
	if t.Port == "" {
		if o.Port != "" {
			return t, fmt.Errorf("%s: no HTTP Connector with port=%q", xml, o.Port)
		}
		return t, fmt.Errorf("%s: no HTTP/1.1 Connector", xml)
	}
	t.Query = tomcatconf.ConnectorQuery{Port: t.Port}
	if _, err := cfg.FindConnector(t.Query); err != nil {
		return t, err
	}
	if live {
		c, why, err := t.Instance.DetectControl(ctx)
		if err != nil {
			return t, err
		}
		t.Control, t.ControlWhy = c, why
		// A unit the study stops must still be started through systemd.
		t.Instance.Control = c
	}
	return t, nil
}

func isHTTP(protocol string) bool {
	return protocol == "" || protocol == "HTTP/1.1" || strings.Contains(protocol, "Http11")
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
func targetURL(o Options, port string) string {
	if o.URL != "" {
		return o.URL
	}
	if _, err := strconv.Atoi(port); err != nil || port == "" {
		port = "8080"
	}
	return "http://127.0.0.1:" + port + loadgen.HelloWorldPath
}

// findNIC finds the interface that carries the target address (or -iface),
// its NUMA node and its channels.
func findNIC(ctx context.Context, o Options, live bool, port string, numaHost *numa.Host) NIC {
	n := NIC{URL: targetURL(o, port), LoadNetNS: o.LoadNetNS, Node: numa.NodeUnknown, Root: o.Root}
	name := o.Iface
	if name == "" && live {
		addr, err := urlAddr(ctx, n.URL)
		if err != nil {
			n.Why = err.Error()
			return n
		}
		n.Addr = addr
		c, err := nic.NewDefault()
		if err != nil {
			n.Why = err.Error()
			return n
		}
		defer c.Close()
		ifc, err := c.InterfaceByAddr(addr)
		if err != nil {
			n.Why = fmt.Sprintf("no interface holds %s (the URL's host): it is remote", addr)
			return n
		}
		name = ifc.Name
		n.Found = FoundByAddr
	}
	if name == "" {
		name = firstPhysical(o.Root)
		if name == "" {
			n.Why = "no physical interface under " + o.Root
			return n
		}
		n.Found = FoundFirstPhysical
	}
	n.Name = name
	dev, err := numaHost.NetDevice(name)
	switch {
	case err != nil:
		n.Why = err.Error()
	case dev.Virtual:
		n.Virtual = true
		n.Why = name + " is virtual (no device/: loopback, veth, bridge)"
	default:
		n.Node = dev.Node
	}
	if !live {
		n.ChannelsErr = fmt.Errorf("channels of %s are not readable from a fixture root (ethtool ioctl on the running host)", name)
		return n
	}
	c, err := nic.NewDefault()
	if err != nil {
		n.ChannelsErr = err
		return n
	}
	defer c.Close()
	ch, err := c.Channels(name)
	if err != nil {
		n.ChannelsErr = err
		return n
	}
	n.Channels = &ch
	return n
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
func findBoot(o Options) Boot {
	var b Boot
	bh, err := bootcfg.New(o.Root)
	if err != nil {
		b.Err = err
		return b
	}
	b.GrubPath = firstNonEmpty(o.Grub, bh.DefaultGrubPath())
	b.Grub, b.Err = bootcfg.LoadConfig(b.GrubPath)
	if cl, err := bh.Cmdline(); err == nil {
		b.Running = cl
	}
	if st, err := bh.IOMMU(); err != nil {
		b.IOMMUErr = err
	} else {
		b.IOMMU = st.String()
	}
	return b
}
