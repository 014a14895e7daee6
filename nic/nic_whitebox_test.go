package nic

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/testutil"
)

// fakeEthtool is a device behind the one interface nic needs from
// safchain/ethtool: it returns errnos a veth cannot produce, and can
// round the counts it is given as some drivers do.
type fakeEthtool struct {
	ch     ethtoolChannels
	getErr error
	setErr error
	round  func(ethtoolChannels) ethtoolChannels
	sets   int
}

func (f *fakeEthtool) GetChannels(string) (ethtoolChannels, error) { return f.ch, f.getErr }
func (f *fakeEthtool) SetChannels(_ string, ch ethtoolChannels) error {
	f.sets++
	if f.setErr != nil {
		return f.setErr
	}
	if f.round != nil {
		ch = f.round(ch)
	}
	f.ch = ch
	return nil
}
func (f *fakeEthtool) DriverInfo(string) (string, string, error) { return "", "", syscall.EOPNOTSUPP }
func (f *fakeEthtool) Close()                                    {}

var mlx5 = ethtoolChannels{MaxCombined: 63, Combined: 63}

func TestSetChannelsErrorMapping(t *testing.T) {
	tests := []struct {
		name    string
		errno   syscall.Errno
		targets []error
	}{
		{"busy", syscall.EBUSY, []error{ErrBusy, syscall.EBUSY}},
		{"not supported", syscall.EOPNOTSUPP, []error{ErrNotSupported, os.ErrNotExist, errors.ErrUnsupported}},
		{"permission", syscall.EPERM, []error{ErrPermission, os.ErrPermission}},
		{"no device", syscall.ENODEV, []error{ErrNoInterface, os.ErrNotExist}},
		{"driver refused", syscall.EINVAL, []error{ErrRejected, syscall.EINVAL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEthtool{ch: mlx5, setErr: tt.errno}
			c := &Client{root: hostfs.Default(), eth: f}
			change, err := c.SetChannels("enp1s0f0np0", ChannelsUpdate{Combined: Count(8)})
			for _, target := range tt.targets {
				assert.ErrorIs(t, err, target)
			}
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "set channels", e.Op)
			assert.Equal(t, "enp1s0f0np0", e.Interface)
			assert.Equal(t, "combined 8", e.Request)
			assert.Equal(t, fmt.Sprintf("nic: set channels combined 8 on enp1s0f0np0: %v", tt.errno), err.Error())
			assert.Equal(t, Channels(mlx5), change.Before)
			assert.Equal(t, Channels(mlx5), change.After, "a refused change leaves the device as it was")
			for _, other := range []error{ErrBusy, ErrNotSupported, ErrPermission, ErrNoInterface, ErrRejected} {
				if !errors.Is(tt.targets[0], other) {
					assert.NotErrorIs(t, err, other)
				}
			}
		})
	}
	f := &fakeEthtool{getErr: syscall.EOPNOTSUPP}
	c := &Client{root: hostfs.Default(), eth: f}
	_, err := c.Channels("lo")
	require.ErrorIs(t, err, ErrNotSupported)
	assert.NotErrorIs(t, err, ErrBusy)
}

func TestSetChannelsValidatesBeforeIoctl(t *testing.T) {
	f := &fakeEthtool{ch: mlx5}
	c := &Client{root: hostfs.Default(), eth: f}
	_, err := c.SetChannels("enp1s0f0np0", ChannelsUpdate{Combined: Count(64)})
	require.ErrorIs(t, err, ErrExceedsMaximum)
	_, err = c.SetChannels("enp1s0f0np0", ChannelsUpdate{Combined: Count(0)})
	require.ErrorIs(t, err, ErrNoRXOrTX)
	change, err := c.SetChannels("enp1s0f0np0", ChannelsUpdate{Combined: Count(63)})
	require.NoError(t, err)
	assert.False(t, change.Changed())
	assert.Zero(t, f.sets, "no ioctl for refused or unchanged requests")
}

func TestSetChannelsVerifiesReadBack(t *testing.T) {
	// A driver that only takes powers of two.
	f := &fakeEthtool{ch: mlx5, round: func(ch ethtoolChannels) ethtoolChannels {
		n := uint32(1)
		for n*2 <= ch.Combined {
			n *= 2
		}
		ch.Combined = n
		return ch
	}}
	c := &Client{root: hostfs.Default(), eth: f}
	change, err := c.SetChannels("eth0", ChannelsUpdate{Combined: Count(6)})
	require.ErrorIs(t, err, ErrNotApplied)
	assert.Contains(t, err.Error(), "want rx 0 tx 0 other 0 combined 6, device has rx 0 tx 0 other 0 combined 4")
	assert.Equal(t, uint32(4), change.After.Combined, "After is what the device reports")
	assert.Equal(t, uint32(63), change.Before.Combined)

	f.round = nil
	change, err = c.SetChannels("eth0", change.Before.Update())
	require.NoError(t, err)
	assert.Equal(t, uint32(63), change.After.Combined)
}

// mlx5Fixture builds the guide's host as sysfs and procfs show it after
// offlining to 8 CPUs: enp1s0f0np0 on mlx5_core at 0000:01:00.0 on node 0,
// 64 MSI-X vectors (IRQ 60 mlx5_async0, 61..123 mlx5_comp0..62) allowed on
// CPUs 0-7.
func mlx5Fixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	buildMLX5(t, root)
	return root
}

func buildMLX5(t testing.TB, root string) {
	t.Helper()
	pci := filepath.Join(root, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0")
	mk := func(p, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	ln := func(target, p string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(target, p))
	}
	mk(filepath.Join(pci, "numa_node"), "0\n")
	mk(filepath.Join(pci, "net/enp1s0f0np0/ifindex"), "2\n")
	ln("../../../0000:01:00.0", filepath.Join(pci, "net/enp1s0f0np0/device"))
	ln("../../../../bus/pci/drivers/mlx5_core", filepath.Join(pci, "driver"))
	ln("../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/enp1s0f0np0", filepath.Join(root, "sys/class/net/enp1s0f0np0"))
	for irq := 60; irq <= 123; irq++ {
		mk(filepath.Join(pci, "msi_irqs", strconv.Itoa(irq)), "msix\n")
		mk(filepath.Join(root, "proc/irq", strconv.Itoa(irq), "smp_affinity_list"), "0-7\n")
		mk(filepath.Join(root, "proc/irq", strconv.Itoa(irq), "effective_affinity_list"), strconv.Itoa(irq%8)+"\n")
	}
	b, err := os.ReadFile(filepath.Join("testdata", "synthetic-interrupts-arm64-mlx5-8cpu.txt"))
	require.NoError(t, err)
	mk(filepath.Join(root, "proc/interrupts"), string(b))
}

func fixtureClient(t *testing.T, root string) *Client {
	t.Helper()
	r, err := hostfs.New(root)
	require.NoError(t, err)
	return &Client{root: r, eth: &fakeEthtool{ch: mlx5}}
}

func affinityFile(t *testing.T, root string, irq int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "proc/irq", strconv.Itoa(irq), "smp_affinity_list"))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func TestQueueIRQsFixture(t *testing.T) {
	root := mlx5Fixture(t)
	c := fixtureClient(t, root)
	d, err := c.Device("enp1s0f0np0")
	require.NoError(t, err)
	assert.Equal(t, Device{Name: "enp1s0f0np0", Index: 2, Physical: true, Driver: "mlx5_core",
		DevicePath: "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", PCIAddress: "0000:01:00.0", NUMANode: 0}, d)

	qs, err := c.QueueIRQs("enp1s0f0np0")
	require.NoError(t, err)
	require.Len(t, qs, 64)
	for i, q := range qs[:63] {
		assert.Equal(t, QueueCombined, q.Kind)
		assert.Equal(t, i, q.Queue)
		assert.Equal(t, 61+i, q.IRQ)
		assert.Equal(t, fmt.Sprintf("mlx5_comp%d@pci:0000:01:00.0", i), q.Name)
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, q.Affinity)
		assert.Equal(t, []int{q.IRQ % 8}, q.Effective)
		require.Len(t, q.Counts, 8)
		assert.NotZero(t, q.Counts[i%8].Count, "queue %d counted on CPU %d", i, i%8)
		assert.Equal(t, q.Counts[i%8].Count, q.Total())
	}
	assert.Equal(t, QueueIRQ{IRQ: 60, Name: "mlx5_async0@pci:0000:01:00.0", Kind: QueueOther, Queue: -1,
		Counts: qs[63].Counts, Affinity: []int{0, 1, 2, 3, 4, 5, 6, 7}, Effective: []int{4}}, qs[63])
}

func TestSpreadQueueIRQsFixture(t *testing.T) {
	root := mlx5Fixture(t)
	c := fixtureClient(t, root)
	prev, err := c.SpreadQueueIRQs("enp1s0f0np0", []int{0, 1, 2, 3, 4, 5, 6, 7})
	require.NoError(t, err)
	require.Len(t, prev, 63)
	for q := 0; q < 63; q++ {
		assert.Equal(t, strconv.Itoa(q%8), affinityFile(t, root, 61+q), "queue %d", q)
		assert.Equal(t, IRQAffinity{IRQ: 61 + q, CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, prev[q])
	}
	assert.Equal(t, "0-7", affinityFile(t, root, 60), "the async IRQ is left alone")

	_, err = c.ApplyIRQAffinity(prev)
	require.NoError(t, err)
	for irq := 60; irq <= 123; irq++ {
		assert.Equal(t, "0-7", affinityFile(t, root, irq))
	}
}

// TestSpreadUndoesOnFailure makes the kernel refuse the fifth write: the
// four made before are put back, and the error says which IRQ failed.
func TestSpreadUndoesOnFailure(t *testing.T) {
	root := mlx5Fixture(t)
	c := fixtureClient(t, root)
	writes := 0
	c.root = c.root.WithWriteFunc(func(path, value string) error {
		writes++
		if writes == 5 {
			return syscall.EBUSY
		}
		return nil
	})
	prev, err := c.SpreadQueueIRQs("enp1s0f0np0", []int{96, 97, 98, 99})
	require.ErrorIs(t, err, syscall.EBUSY)
	assert.Nil(t, prev)
	assert.Contains(t, err.Error(), "set irq affinity irq 65 cpus 96")
	assert.Contains(t, err.Error(), "proc/irq/65/smp_affinity_list")
	for irq := 60; irq <= 123; irq++ {
		assert.Equal(t, "0-7", affinityFile(t, root, irq), "irq %d", irq)
	}
	assert.Equal(t, 5+4, writes, "five writes, then four undone")
}

func TestSetIRQAffinityErrors(t *testing.T) {
	root := mlx5Fixture(t)
	c := fixtureClient(t, root)
	_, err := c.SetIRQAffinity(61, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "empty cpu list")
	_, err = c.SetIRQAffinity(9999, []int{0})
	require.ErrorIs(t, err, os.ErrNotExist)
	c.root = c.root.WithWriteFunc(func(string, string) error { return syscall.EIO })
	_, err = c.SetIRQAffinity(61, []int{1})
	require.ErrorIs(t, err, ErrNotSupported)
	assert.Equal(t, "0-7", affinityFile(t, root, 61))
	_, err = PlanSpread([]int{1, 2}, nil)
	require.Error(t, err)
	plan, err := PlanSpread([]int{10, 11, 12}, []int{4, 6})
	require.NoError(t, err)
	assert.Equal(t, []IRQAffinity{{10, []int{4}}, {11, []int{6}}, {12, []int{4}}}, plan)
}

// BenchmarkQueueIRQs maps the 64 vectors of the mlx5 fixture to queues:
// one /proc/interrupts parse plus two sysfs reads per IRQ.
func BenchmarkQueueIRQs(b *testing.B) {
	root := b.TempDir()
	buildMLX5(b, root)
	r, err := hostfs.New(root)
	require.NoError(b, err)
	c := &Client{root: r, eth: &fakeEthtool{ch: mlx5}}
	for b.Loop() {
		if _, err := c.QueueIRQs("enp1s0f0np0"); err != nil {
			b.Fatal(err)
		}
	}
}

// virtioFixture is this VM's eth0 (testutil.VirtioNICRoot).
func virtioFixture(t *testing.T) string { return testutil.VirtioNICRoot(t) }

// TestQueueIRQsVirtio finds the IRQs on the PCI function above virtio2,
// and spreads by queue: input.0 and output.0 share a CPU.
func TestQueueIRQsVirtio(t *testing.T) {
	root := virtioFixture(t)
	c := fixtureClient(t, root)
	d, err := c.Device("eth0")
	require.NoError(t, err)
	assert.Equal(t, Device{Name: "eth0", Index: 4, Physical: true, Driver: "virtio_net",
		DevicePath: "/sys/devices/pci0000:00/0000:00:03.0/virtio2", PCIAddress: "0000:00:03.0", NUMANode: -1}, d)
	qs, err := c.QueueIRQs("eth0")
	require.NoError(t, err)
	require.Len(t, qs, 3)
	assert.Equal(t, []int{38, 39, 37}, []int{qs[0].IRQ, qs[1].IRQ, qs[2].IRQ})
	assert.Equal(t, []QueueKind{QueueRX, QueueTX, QueueOther}, []QueueKind{qs[0].Kind, qs[1].Kind, qs[2].Kind})
	assert.Equal(t, "virtio2-input.0", qs[0].Name)
	assert.Nil(t, qs[0].Effective, "no effective_affinity_list in this tree")

	plan, err := c.PlanQueueSpread("eth0", []int{1, 0})
	require.NoError(t, err)
	assert.Equal(t, []IRQAffinity{{38, []int{1}}, {39, []int{1}}}, plan)
	_, err = c.PlanQueueSpread("eth0", nil)
	require.ErrorContains(t, err, "empty cpu list")
}
