package nic_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/nic"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func parseFile(t *testing.T, name string) *nic.Interrupts {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	tab, err := nic.ParseInterrupts(f)
	require.NoError(t, err)
	return tab
}

func TestParseInterruptsARM64MLX5(t *testing.T) {
	tab := parseFile(t, "interrupts-arm64-mlx5-8cpu.txt")
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, tab.CPUs)
	l, ok := tab.Line(64)
	require.True(t, ok)
	assert.Equal(t, "ITS-PCI-MSIX-0000:01:00.0", l.Chip)
	assert.Equal(t, "4 Edge", l.HWIRQ)
	assert.Equal(t, "mlx5_comp3@pci:0000:01:00.0", l.Name)
	assert.Len(t, l.Counts, 8)
	assert.NotZero(t, l.Counts[3])
	assert.Equal(t, l.Counts[3], l.Total())
	timer, ok := tab.Line(11)
	require.True(t, ok)
	assert.Equal(t, "GICv3", timer.Chip)
	assert.Equal(t, "27 Level", timer.HWIRQ)
	assert.Equal(t, "arch_timer", timer.Name)
	var comp, ipi int
	for _, l := range tab.Lines {
		if strings.HasPrefix(l.Name, "mlx5_comp") {
			comp++
		}
		if strings.HasPrefix(l.IRQ, "IPI") {
			ipi++
			assert.Equal(t, -1, l.Number)
			assert.Empty(t, l.Chip)
		}
	}
	assert.Equal(t, 63, comp)
	assert.Equal(t, 8, ipi)
	last := tab.Lines[len(tab.Lines)-1]
	assert.Equal(t, nic.InterruptLine{IRQ: "Err", Number: -1, Counts: []uint64{0}}, last)
}

func TestParseInterruptsX86OfflineCPU(t *testing.T) {
	tab := parseFile(t, "interrupts-x86-ixgbe-3cpu-cpu2-offline.txt")
	assert.Equal(t, []int{0, 1, 3}, tab.CPUs)
	l, ok := tab.Line(42)
	require.True(t, ok)
	assert.Equal(t, nic.InterruptLine{IRQ: "42", Number: 42, Counts: []uint64{0, 0, 76640},
		Chip: "IR-PCI-MSI", HWIRQ: "1048578-edge", Name: "eth0-TxRx-2"}, l)
	old, ok := tab.Line(47)
	require.True(t, ok)
	assert.Equal(t, "PCI-MSI-edge", old.Chip)
	assert.Empty(t, old.HWIRQ)
	assert.Equal(t, "eth2-TxRx-0", old.Name)
	shared, _ := tab.Line(24)
	assert.Equal(t, []string{"PCIe PME", "pciehp"}, shared.Actions())
	usb, _ := tab.Line(16)
	assert.Equal(t, "16-fasteoi", usb.HWIRQ)
	assert.Equal(t, []string{"ehci_hcd:usb1", "i801_smbus"}, usb.Actions())
	for _, l := range tab.Lines {
		if l.IRQ == "ERR" || l.IRQ == "MIS" {
			assert.Equal(t, []uint64{0}, l.Counts)
		}
		if l.IRQ == "LOC" {
			assert.Equal(t, "Local timer interrupts", l.Name)
			assert.Equal(t, uint64(912873+871234+901112), l.Total())
		}
	}
}

func TestParseInterruptsVirtio(t *testing.T) {
	tab := parseFile(t, "interrupts-x86-virtio-2cpu.txt")
	assert.Equal(t, []int{0, 1}, tab.CPUs)
	var in *nic.InterruptLine
	for i, l := range tab.Lines {
		if l.Name == "virtio2-input.0" {
			in = &tab.Lines[i]
		}
	}
	require.NotNil(t, in)
	assert.Equal(t, "PCI-MSIX-0000:00:03.0", in.Chip)
	assert.Equal(t, "1-edge", in.HWIRQ)
	k, q := nic.ClassifyIRQName(in.Name, "eth0")
	assert.Equal(t, nic.QueueRX, k)
	assert.Equal(t, 0, q)
}

// TestParseInterruptsHost parses this machine's /proc/interrupts: its
// header has one column per online CPU and every numbered line has a count
// for each.
func TestParseInterruptsHost(t *testing.T) {
	b, err := hostfs.ReadFile(hostfs.Default().Proc("interrupts"))
	if err != nil {
		t.Skipf("no /proc/interrupts: %v", err)
	}
	tab, err := nic.ParseInterrupts(bytes.NewReader(b))
	require.NoError(t, err)
	online, err := hostfs.ReadString(hostfs.Default().Sys("devices", "system", "cpu", "online"))
	require.NoError(t, err)
	assert.NotEmpty(t, tab.CPUs, "online CPUs %s", online)
	numbered := 0
	for _, l := range tab.Lines {
		if l.Number >= 0 {
			numbered++
			assert.Len(t, l.Counts, len(tab.CPUs), "line %s", l.IRQ)
			assert.NotEmpty(t, l.Chip, "line %s", l.IRQ)
		}
	}
	assert.Positive(t, numbered)
	var out bytes.Buffer
	_, err = tab.WriteTo(&out)
	require.NoError(t, err)
	again, err := nic.ParseInterrupts(&out)
	require.NoError(t, err)
	assert.Equal(t, tab, again)
}

// TestGoldenInterrupts renders each sample; the golden files pin the
// layout and parsing them back gives the same table.
func TestGoldenInterrupts(t *testing.T) {
	for _, name := range []string{"interrupts-arm64-mlx5-8cpu.txt", "interrupts-x86-ixgbe-3cpu-cpu2-offline.txt", "interrupts-x86-virtio-2cpu.txt"} {
		t.Run(name, func(t *testing.T) {
			tab := parseFile(t, name)
			var out bytes.Buffer
			_, err := tab.WriteTo(&out)
			require.NoError(t, err)
			golden := filepath.Join("testdata", "TestGoldenInterrupts-"+strings.TrimSuffix(name, ".txt")+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), out.String())
			again, err := nic.ParseInterrupts(bytes.NewReader(out.Bytes()))
			require.NoError(t, err)
			assert.Equal(t, tab, again)
		})
	}
}

func TestParseInterruptsErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"empty", "", "empty"},
		{"no header", " 24:   1   2   IO-APIC 5-edge x\n", "header"},
		{"short counts", "  CPU0 CPU1\n 24:   1   IO-APIC 5-edge x\n", "want 2 per-CPU counts, one per header column, found 1"},
		{"no colon", "  CPU0\n 24   1   IO-APIC 5-edge x\n", "want IRQ:"},
		{"descending cpus", "  CPU1 CPU0\n", "must increase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := nic.ParseInterrupts(strings.NewReader(tt.text))
			require.ErrorIs(t, err, nic.ErrSyntax)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestClassifyIRQName(t *testing.T) {
	tests := []struct {
		name, ifname string
		kind         nic.QueueKind
		queue        int
	}{
		{"mlx5_comp3@pci:0000:01:00.0", "enp1s0f0np0", nic.QueueCombined, 3},
		{"mlx5_comp62@pci:0000:01:00.0", "", nic.QueueCombined, 62},
		{"mlx5_async0@pci:0000:01:00.0", "enp1s0f0np0", nic.QueueOther, -1},
		{"eth0-TxRx-3", "eth0", nic.QueueCombined, 3},
		{"i40e-eth0-TxRx-12", "eth0", nic.QueueCombined, 12},
		{"ice-ens1f0-TxRx-0", "ens1f0", nic.QueueCombined, 0},
		{"eth0-Tx-Rx-7", "eth0", nic.QueueCombined, 7},
		{"eth1-rx-0", "eth1", nic.QueueRX, 0},
		{"eth1-tx-1", "eth1", nic.QueueTX, 1},
		{"virtio0-input.0", "eth0", nic.QueueRX, 0},
		{"virtio2-output.5", "eth0", nic.QueueTX, 5},
		{"virtio2-config", "eth0", nic.QueueOther, -1},
		{"eth0", "eth0", nic.QueueOther, -1},
		{"ena-mgmnt@pci:0000:00:05.0", "eth0", nic.QueueOther, -1},
		{"eth2-4", "eth2", nic.QueueCombined, 4},
		{"nvme0q3", "eth0", nic.QueueOther, -1},
		{"virtio1-req.0", "eth0", nic.QueueOther, -1},
		{"mana_q3@pci:7870:00:00.0", "eth0", nic.QueueCombined, 3},
		{"mana_hwc@pci:7870:00:00.0", "eth0", nic.QueueOther, -1},
		{"gve-ntfy-blk5@pci:0000:00:04.0", "ens4", nic.QueueCombined, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, q := nic.ClassifyIRQName(tt.name, tt.ifname)
			assert.Equal(t, tt.kind, k)
			assert.Equal(t, tt.queue, q)
		})
	}
}
