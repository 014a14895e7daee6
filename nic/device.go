package nic

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nettune/nettune/internal/hostfs"
)

// Device is what sysfs tells about a network interface
// (/sys/class/net/IF), as seen under the Client's root.
type Device struct {
	Name  string
	Index int // ifindex; 0 when sysfs does not show it (captured trees)
	// Physical reports whether the interface has a device/ link: a PCI,
	// virtio or platform NIC, not a bridge, veth, bond or lo.
	Physical bool
	// Driver is the basename of device/driver ("mlx5_core", "virtio_net");
	// empty for virtual interfaces.
	Driver string
	// DevicePath is the resolved device directory
	// ("/sys/devices/pci0000:00/0000:00:03.0/virtio2"), relative to the
	// root; empty for virtual interfaces.
	DevicePath string
	// PCIAddress is the PCI function the device is, or sits on
	// ("0000:01:00.0"); empty when none.
	PCIAddress string
	// NUMANode is the device's NUMA node (numa_node of the device or its
	// nearest ancestor that has one); -1 when unknown or virtual.
	NUMANode int
}

// Device reads /sys/class/net/IF and its device/ link under the root (or,
// in a captured tree without that link, the directory above net/IF): the
// ifindex, whether the interface is physical, its driver, PCI address and
// NUMA node (device/numa_node, or the nearest ancestor's, as for a virtio
// NIC whose PCI function holds it). It needs no privilege and works on a
// captured sysfs tree. The error matches ErrNoInterface when sysfs has no
// such interface.
func (c *Client) Device(ifname string) (Device, error) {
	if err := checkName(ifname); err != nil {
		return Device{}, opError("read device", ifname, "", err)
	}
	link := c.root.Sys("class", "net", ifname)
	if _, err := os.Lstat(link); err != nil {
		return Device{}, opError("read device", ifname, "", fmt.Errorf("%s: %w", link, ErrNoInterface))
	}
	d := Device{Name: ifname, NUMANode: -1}
	idx, err := hostfs.ReadInt(filepath.Join(link, "ifindex"))
	switch {
	case err == nil:
		d.Index = int(idx)
	case !errors.Is(err, os.ErrNotExist):
		return Device{}, opError("read device", ifname, "", err)
	}
	devDir, err := c.deviceDir(ifname)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return d, nil
		}
		return Device{}, opError("read device", ifname, "", err)
	}
	d.Physical = true
	d.DevicePath = strings.TrimPrefix(devDir, strings.TrimSuffix(c.root.Dir(), "/"))
	// The link's last element names the driver; a captured tree may not
	// hold its target.
	if drv, err := os.Readlink(filepath.Join(devDir, "driver")); err == nil {
		d.Driver = filepath.Base(drv)
	}
	for p := devDir; c.underSysDevices(p); p = filepath.Dir(p) {
		if d.PCIAddress == "" && isPCIAddress(filepath.Base(p)) {
			d.PCIAddress = filepath.Base(p)
		}
		if n, err := hostfs.ReadInt(filepath.Join(p, "numa_node")); err == nil {
			d.NUMANode = int(n)
			if n < 0 {
				d.NUMANode = -1
			}
			break
		}
	}
	return d, nil
}

// Devices lists the network interfaces sysfs shows under the root
// (/sys/class/net), ordered by name, each as Device reads it; Physical
// tells a NIC from a virtual interface. An interface removed while they are
// read is left out. It needs no privilege and works on a captured sysfs
// tree. The error matches os.ErrNotExist when the root has no
// /sys/class/net.
func (c *Client) Devices() ([]Device, error) {
	dir := c.root.Sys("class", "net")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, opError("list devices", "", "", err)
	}
	var out []Device
	for _, e := range ents {
		d, err := c.Device(e.Name())
		if errors.Is(err, ErrNoInterface) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// deviceDir returns the real directory of ifname's device: where
// /sys/class/net/IF/device points, or, in a captured tree that dropped
// that link, the parent of the net/ directory holding IF when it is not
// under devices/virtual. The error matches os.ErrNotExist for a virtual
// interface or one whose sysfs entry leads nowhere.
func (c *Client) deviceDir(ifname string) (string, error) {
	link := c.root.Sys("class", "net", ifname)
	if dev, err := c.resolve(filepath.Join(link, "device")); err == nil {
		return dev, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	ifdir, err := c.resolve(link)
	if err != nil {
		return "", err
	}
	parent := filepath.Dir(filepath.Dir(ifdir))
	if filepath.Base(filepath.Dir(ifdir)) == "net" && c.underSysDevices(parent) &&
		!strings.HasPrefix(parent+string(filepath.Separator), c.root.Sys("devices", "virtual")+string(filepath.Separator)) {
		return parent, nil
	}
	return "", fmt.Errorf("%s: no device/: %w", link, os.ErrNotExist)
}

// resolve returns the real path of p, a path under the root, following
// every symbolic link on the way the kernel would but keeping the walk
// inside the root: ".." stops at the root and absolute link targets are
// taken relative to it (a captured tree holds links made on a live host).
func (c *Client) resolve(p string) (string, error) {
	base := filepath.Clean(c.root.Dir())
	rel, err := filepath.Rel(base, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is outside the root %s", p, base)
	}
	todo := strings.Split(filepath.ToSlash(rel), "/")
	cur := base
	for links := 0; len(todo) > 0; {
		comp := todo[0]
		todo = todo[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if cur != base {
				cur = filepath.Dir(cur)
			}
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 255 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = base
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return cur, nil
}

// underSysDevices reports whether p is strictly inside root/sys/devices.
func (c *Client) underSysDevices(p string) bool {
	base := c.root.Sys("devices") + string(filepath.Separator)
	return strings.HasPrefix(p, base)
}

// isPCIAddress reports whether s looks like "0000:01:00.0".
func isPCIAddress(s string) bool {
	if len(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.' {
		return false
	}
	for i, r := range s {
		if i == 4 || i == 7 || i == 10 {
			continue
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// msiIRQs returns the IRQ numbers in device/msi_irqs of the interface's
// device, or of its nearest ancestor that has them (a virtio NIC's IRQs
// belong to the PCI function above it), and the directory they came from.
func (c *Client) msiIRQs(ifname string) ([]int, string, error) {
	devDir, err := c.deviceDir(ifname)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, lerr := os.Lstat(c.root.Sys("class", "net", ifname)); lerr != nil {
				return nil, "", fmt.Errorf("%s: %w", c.root.Sys("class", "net", ifname), ErrNoInterface)
			}
			return nil, "", fmt.Errorf("%s has no device/: a virtual interface has no IRQs: %w", c.root.Sys("class", "net", ifname), ErrNotSupported)
		}
		return nil, "", err
	}
	for p := devDir; c.underSysDevices(p); p = filepath.Dir(p) {
		dir := filepath.Join(p, "msi_irqs")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		var irqs []int
		for _, e := range ents {
			n, err := strconv.Atoi(e.Name())
			if err != nil || n < 0 {
				return nil, "", fmt.Errorf("%s: entry %q is not an IRQ number: %w", dir, e.Name(), ErrSyntax)
			}
			irqs = append(irqs, n)
		}
		sort.Ints(irqs)
		return irqs, dir, nil
	}
	return nil, "", fmt.Errorf("no msi_irqs under %s or its parents: the device uses no MSI/MSI-X interrupts: %w", devDir, ErrNotSupported)
}
