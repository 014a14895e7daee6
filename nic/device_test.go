package nic_test

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
)

func clientAt(t *testing.T, root string) *nic.Client {
	t.Helper()
	c, err := nic.New(&nic.Options{Root: root})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// TestDeviceCorpus32em64t reads the NICs of a captured 2-node Xeon: eth0
// and eth1 (igb) on node 0, ib0 (mlx4) on node 1, and virtual interfaces.
func TestDeviceCorpus32em64t(t *testing.T) {
	root := testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", "32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2"))
	c := clientAt(t, root)
	tests := []nic.Device{
		{Name: "eth0", Index: 2, Physical: true, Driver: "igb", PCIAddress: "0000:02:00.0", NUMANode: 0,
			DevicePath: "/sys/devices/pci0000:00/0000:00:01.1/0000:02:00.0"},
		{Name: "eth1", Index: 3, Physical: true, Driver: "igb", PCIAddress: "0000:02:00.3", NUMANode: 0,
			DevicePath: "/sys/devices/pci0000:00/0000:00:01.1/0000:02:00.3"},
		{Name: "ib0", Index: 5, Physical: true, Driver: "mlx4_core", PCIAddress: "0000:82:00.0", NUMANode: 1,
			DevicePath: "/sys/devices/pci0000:80/0000:80:02.2/0000:82:00.0"},
		{Name: "br0", NUMANode: -1},
		{Name: "lo", NUMANode: -1},
		{Name: "eth0.1015", NUMANode: -1},
	}
	for _, want := range tests {
		t.Run(want.Name, func(t *testing.T) {
			got, err := c.Device(want.Name)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	_, err := c.Device("eth9")
	require.ErrorIs(t, err, nic.ErrNoInterface)
	assert.Contains(t, err.Error(), "eth9")
}

// TestDeviceCorpusNUMAMinus1 reads a captured Ryzen whose NICs report
// numa_node -1 and whose capture has no device/ links.
func TestDeviceCorpusNUMAMinus1(t *testing.T) {
	root := testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", "ghw-linux-amd64-amd-ryzen-1600-nic-numa-minus1.tar.gz"))
	c := clientAt(t, root)
	for _, name := range []string{"enp3s0", "enp6s0f0", "enp6s0f1", "enp8s0"} {
		d, err := c.Device(name)
		require.NoError(t, err)
		assert.True(t, d.Physical, name)
		assert.Equal(t, -1, d.NUMANode, name)
		assert.NotEmpty(t, d.PCIAddress, name)
	}
	d, err := c.Device("enp6s0f1")
	require.NoError(t, err)
	assert.Equal(t, "0000:06:00.1", d.PCIAddress)
}

// TestDevicesNeoverse lists the network devices of the captured Neoverse
// V2 host the Arm guide tunes: its NIC on node 1, found through
// class/net/NAME linking into devices/, and lo.
func TestDevicesNeoverse(t *testing.T) {
	root := testutil.ExtractSysroot(t, filepath.Join(testutil.RepoRoot(t), "numa", "testdata", "neoverse-v2-192cpu-2node.tar.gz"))
	c := clientAt(t, root)
	got, err := c.Devices()
	require.NoError(t, err)
	want := []nic.Device{
		{Name: "enp1s0f0np0", Physical: true, PCIAddress: "0000:01:00.0", NUMANode: 1,
			DevicePath: "/sys/devices/pci0000:00/0000:00:00.0/0000:01:00.0"},
		{Name: "lo", NUMANode: -1},
	}
	assert.Equal(t, want, got)

	_, err = clientAt(t, t.TempDir()).Devices()
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestDeviceHost reads this machine's interfaces from /sys and checks them
// against the kernel's list.
func TestDeviceHost(t *testing.T) {
	c := clientAt(t, "/")
	ifs, err := c.Interfaces()
	require.NoError(t, err)
	require.NotEmpty(t, ifs)
	devs, err := c.Devices()
	require.NoError(t, err)
	assert.Contains(t, devs, nic.Device{Name: "lo", Index: 1, NUMANode: -1})
	for _, it := range ifs {
		d, err := c.Device(it.Name)
		if errors.Is(err, nic.ErrNoInterface) {
			continue // removed since the listing (another test's interface)
		}
		require.NoError(t, err, it.Name)
		assert.Equal(t, it.Index, d.Index, it.Name)
		assert.True(t, it.Sysfs, it.Name)
		assert.Equal(t, d.Physical, it.Physical, it.Name)
		if it.Name == "lo" {
			assert.False(t, d.Physical)
			assert.True(t, it.Holds(mustAddr("127.0.0.1")))
		}
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestNewErrors(t *testing.T) {
	_, err := nic.New(&nic.Options{Root: filepath.Join(t.TempDir(), "missing")})
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = nic.New(&nic.Options{NetNS: filepath.Join(t.TempDir(), "no-such-netns")})
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "open network namespace")
	c := clientAt(t, t.TempDir())
	_, err = c.Device("eth0")
	require.ErrorIs(t, err, nic.ErrNoInterface)
	_, err = c.QueueIRQs("eth0")
	require.ErrorIs(t, err, nic.ErrNoInterface)
	_, err = c.Interrupts()
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = c.Device("bad/name")
	require.ErrorIs(t, err, nic.ErrNoInterface)
}

func TestInterfaceHolds(t *testing.T) {
	it := nic.Interface{Addrs: []netip.Prefix{netip.MustParsePrefix("10.169.226.181/24"), netip.MustParsePrefix("fe80::bae9:24ff:fe67:d53a/64")}}
	assert.True(t, it.Holds(mustAddr("10.169.226.181")))
	assert.True(t, it.Holds(mustAddr("::ffff:10.169.226.181")), "IPv4-mapped form")
	assert.True(t, it.Holds(mustAddr("fe80::bae9:24ff:fe67:d53a%enp1s0f0np0")), "zone ignored")
	assert.False(t, it.Holds(mustAddr("10.169.226.18")))
}
