package nic

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
)

// Interface is a network interface as the kernel lists it (ip addr), with
// the sysfs details of its device when sysfs under the root shows it.
type Interface struct {
	Index        int
	Name         string
	Flags        net.Flags
	MTU          int
	HardwareAddr net.HardwareAddr
	Addrs        []netip.Prefix // IPv4 and IPv6 addresses with their prefix length
	// Physical reports whether the interface has a device/ in sysfs.
	Physical bool
	// Driver comes from sysfs (device/driver) or, for virtual interfaces,
	// from the ETHTOOL_GDRVINFO ioctl ("veth", "bridge"); empty when
	// neither knows it (lo).
	Driver string
	// BusInfo is the ETHTOOL_GDRVINFO bus address ("0000:01:00.0"); empty
	// for virtual interfaces.
	BusInfo string
	// NUMANode is the device's NUMA node; -1 when unknown or virtual.
	NUMANode int
	// Sysfs reports whether the details came from sysfs: false when sysfs
	// under the root does not show this interface (another network
	// namespace), so Physical and NUMANode are unknown.
	Sysfs bool
}

// Holds reports whether the interface has address a (zone ignored).
func (i Interface) Holds(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	for _, p := range i.Addrs {
		if p.Addr().WithZone("") == a {
			return true
		}
	}
	return false
}

// Interfaces lists the interfaces of the Client's network namespace with
// their addresses (RTM_GETLINK and RTM_GETADDR over netlink, as `ip addr`),
// ordered by index, each completed from sysfs (Device) when sysfs shows an
// interface of that name with the same ifindex, and from ETHTOOL_GDRVINFO.
// It needs no privilege (CAP_SYS_ADMIN to enter Options.NetNS).
func (c *Client) Interfaces() ([]Interface, error) {
	var out []Interface
	err := inNetNS(c.netns, func() error {
		ifs, err := net.Interfaces()
		if err != nil {
			return err
		}
		for _, ni := range ifs {
			it := Interface{
				Index: ni.Index, Name: ni.Name, Flags: ni.Flags, MTU: ni.MTU,
				HardwareAddr: ni.HardwareAddr, NUMANode: -1,
			}
			addrs, err := ni.Addrs()
			if err != nil {
				return fmt.Errorf("addresses of %s: %w", ni.Name, err)
			}
			for _, a := range addrs {
				ipn, ok := a.(*net.IPNet)
				if !ok {
					continue
				}
				ip, ok := netip.AddrFromSlice(ipn.IP)
				if !ok {
					continue
				}
				ones, _ := ipn.Mask.Size()
				it.Addrs = append(it.Addrs, netip.PrefixFrom(ip.Unmap(), ones))
			}
			out = append(out, it)
		}
		return nil
	})
	if err != nil {
		return nil, opError("list interfaces", "", c.netns, err)
	}
	for k := range out {
		it := &out[k]
		if d, err := c.Device(it.Name); err == nil && d.Index == it.Index {
			it.Sysfs, it.Physical, it.Driver, it.NUMANode = true, d.Physical, d.Driver, d.NUMANode
		}
		if drv, bus, err := c.eth.DriverInfo(it.Name); err == nil {
			if it.Driver == "" {
				it.Driver = drv
			}
			it.BusInfo = bus
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Index < out[b].Index })
	return out, nil
}

// InterfaceByName returns the interface named name, as Interfaces lists it.
// The error matches ErrNoInterface when there is none.
func (c *Client) InterfaceByName(name string) (Interface, error) {
	ifs, err := c.Interfaces()
	if err != nil {
		return Interface{}, err
	}
	for _, it := range ifs {
		if it.Name == name {
			return it, nil
		}
	}
	return Interface{}, opError("find interface", name, "", ErrNoInterface)
}

// InterfaceByAddr returns the interface holding address a, IPv4 or IPv6
// (the Arm Neoverse Tomcat tuning guide reads `ip addr` to find the NIC of
// the host's IP). The error matches ErrNoInterface when no interface holds
// it.
func (c *Client) InterfaceByAddr(a netip.Addr) (Interface, error) {
	if !a.IsValid() {
		return Interface{}, opError("find interface", "", "for address", errors.New("invalid address"))
	}
	ifs, err := c.Interfaces()
	if err != nil {
		return Interface{}, err
	}
	for _, it := range ifs {
		if it.Holds(a) {
			return it, nil
		}
	}
	return Interface{}, opError("find interface", "", "holding "+a.String(), ErrNoInterface)
}
