package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nettune/nettune/nic"
)

// The Arm guide's `ethtool -L IF combined 8`, planned from `ethtool -l`
// text, and the sysfs view of a captured host's network devices.
func TestNIC(t *testing.T) {
	before := `Channel parameters for enp1s0f0np0:
Pre-set maximums:
RX:		n/a
TX:		n/a
Other:		n/a
Combined:	63
Current hardware settings:
RX:		n/a
TX:		n/a
Other:		n/a
Combined:	63
`
	name, ch, err := nic.ParseChannels(strings.NewReader(before))
	if err != nil || name != "enp1s0f0np0" {
		t.Fatal(name, err)
	}
	upd := nic.ChannelsUpdate{Combined: nic.Count(8)}
	after, err := ch.With(upd)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := nic.FormatChannels(&out, "enp1s0f0np0", after, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Combined:\t8") {
		t.Fatalf("after -L combined 8:\n%s", out.String())
	}
	cpus, err := nic.ParseCPUList("96-103")
	if err != nil || nic.CPUList(cpus) != "96-103" || len(cpus) != 8 {
		t.Fatalf("cpu list: %v %v", cpus, err)
	}

	// A sysfs tree with one PCI NIC and lo, as captured hosts keep it:
	// class/net/NAME links into devices/.
	root := writeTree(t, map[string]string{
		"sys/devices/pci0000:00/0000:01:00.0/net/enp1s0f0np0/ifindex": "2\n",
		"sys/devices/pci0000:00/0000:01:00.0/numa_node":               "1\n",
		"sys/devices/virtual/net/lo/ifindex":                          "1\n",
	})
	for name, dev := range map[string]string{"enp1s0f0np0": "../../devices/pci0000:00/0000:01:00.0/net/enp1s0f0np0", "lo": "../../devices/virtual/net/lo"} {
		if err := os.MkdirAll(filepath.Join(root, "sys/class/net"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dev, filepath.Join(root, "sys/class/net", name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../../0000:01:00.0", filepath.Join(root, "sys/devices/pci0000:00/0000:01:00.0/net/enp1s0f0np0/device")); err != nil {
		t.Fatal(err)
	}
	c, err := nic.New(&nic.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	var phys []string
	for _, d := range devs {
		if d.Physical {
			phys = append(phys, d.Name)
		}
	}
	if len(devs) != 2 || strings.Join(phys, ",") != "enp1s0f0np0" || devs[0].NUMANode != 1 || devs[0].PCIAddress != "0000:01:00.0" {
		t.Fatalf("devices %+v, physical %v", devs, phys)
	}
}
