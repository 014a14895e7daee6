package numa

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
)

// NodeUnknown is the node of a device or CPU the kernel does not place on
// any node: numa_node reads -1, or the interface is virtual.
const NodeUnknown = -1

// Device is where a network interface or PCI device sits.
type Device struct {
	// Name is the interface name or PCI address asked for.
	Name string
	// Path is the sysfs directory the locality was read from (the PCI
	// function, or the nearest ancestor with a numa_node file); empty for
	// a virtual interface.
	Path string
	// Virtual is true for an interface with no backing device (lo,
	// bridges, veth, VLANs, tunnels): it has no device/ link.
	Virtual bool
	// Node is the device's NUMA node from numa_node, or NodeUnknown.
	Node int
	// LocalCPUs are the CPUs the kernel reports as local to the device
	// (local_cpulist, or the local_cpus mask); empty when not reported.
	LocalCPUs CPUSet
}

// NetDevice returns the locality of network interface name from
// /sys/class/net/NAME/device/numa_node and local_cpulist. When the device
// itself has no numa_node (a virtio device under its PCI function), the
// nearest ancestor that has one is used. A virtual interface gives
// Virtual=true and Node=NodeUnknown without error. An interface that does
// not exist gives an error matching os.ErrNotExist. No privilege needed.
func (h *Host) NetDevice(name string) (Device, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return Device{}, fmt.Errorf("numa: invalid interface name %q", name)
	}
	link := h.root.Sys("class", "net", name)
	if _, err := os.Lstat(link); err != nil {
		return Device{}, fmt.Errorf("numa: interface %q: no %s: %w", name, link, fs.ErrNotExist)
	}
	d := Device{Name: name, Node: NodeUnknown}
	start := ""
	if dev, err := filepath.EvalSymlinks(filepath.Join(link, "device")); err == nil {
		start = dev
	} else if real, err := filepath.EvalSymlinks(link); err == nil {
		// Some captures drop the device link; the device is then the
		// directory above .../net/NAME unless that is devices/virtual.
		parent := filepath.Dir(real)
		virtual := h.root.Sys("devices", "virtual")
		if v, err := filepath.EvalSymlinks(virtual); err == nil {
			virtual = v
		}
		if filepath.Base(parent) == "net" && !strings.HasPrefix(real, virtual+string(filepath.Separator)) {
			start = filepath.Dir(parent)
		}
	}
	if start == "" {
		d.Virtual = true
		return d, nil
	}
	return h.locate(d, start)
}

// PCIDevice returns the locality of the PCI device at addr ("0000:01:00.0";
// the domain "0000:" may be left out) from
// /sys/bus/pci/devices/ADDR/numa_node and local_cpulist. A device that does
// not exist gives an error matching os.ErrNotExist. No privilege needed.
func (h *Host) PCIDevice(addr string) (Device, error) {
	if strings.Count(addr, ":") == 1 {
		addr = "0000:" + addr
	}
	if addr == "" || strings.ContainsAny(addr, "/\x00") || strings.Count(addr, ":") != 2 {
		return Device{}, fmt.Errorf("numa: invalid PCI address %q; expected DDDD:BB:DD.F like 0000:01:00.0", addr)
	}
	p := h.root.Sys("bus", "pci", "devices", addr)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return Device{}, fmt.Errorf("numa: PCI device %s: no %s: %w", addr, p, fs.ErrNotExist)
	}
	return h.locate(Device{Name: addr, Node: NodeUnknown}, real)
}

// locate walks from dir up to the sysfs devices directory and reads
// numa_node and local_cpulist from the first directory that has numa_node.
func (h *Host) locate(d Device, dir string) (Device, error) {
	top := h.root.Sys("devices")
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	for p := dir; strings.HasPrefix(p, top+string(filepath.Separator)); p = filepath.Dir(p) {
		f := filepath.Join(p, "numa_node")
		v, err := hostfs.ReadInt(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Device{}, fmt.Errorf("numa: %s: %w: %w", d.Name, ErrParse, err)
		}
		if v < NodeUnknown || v > cpuset.MaxID {
			return Device{}, &ParseError{Path: f, Text: fmt.Sprint(v), Reason: "expected -1 or a node id"}
		}
		d.Path, d.Node = p, int(v)
		if d.LocalCPUs, err = readLocalCPUs(p); err != nil {
			return Device{}, err
		}
		return d, nil
	}
	// A real device but nothing on its path reports a node (non-PCI buses).
	d.Path = dir
	return d, nil
}

func readLocalCPUs(dir string) (CPUSet, error) {
	p := filepath.Join(dir, "local_cpulist")
	if s, err := hostfs.ReadString(p); err == nil {
		set, err := cpuset.ParseNamed(s, p)
		if err != nil {
			return CPUSet{}, fmt.Errorf("numa: %w: %w", ErrParse, err)
		}
		return set, nil
	}
	p = filepath.Join(dir, "local_cpus")
	if s, err := hostfs.ReadString(p); err == nil {
		set, err := cpuset.ParseMaskNamed(s, p)
		if err != nil {
			return CPUSet{}, fmt.Errorf("numa: %w: %w", ErrParse, err)
		}
		return set, nil
	}
	return CPUSet{}, nil
}
