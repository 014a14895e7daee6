//go:build linux

package study

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tuning"
)

// virtioRoot is testutil.VirtioNICRoot with the CPUs' sysfs directory.
func virtioRoot(t *testing.T) string {
	t.Helper()
	root := testutil.VirtioNICRoot(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/devices/system/cpu"), 0o755))
	return root
}

// TestIRQSpreadStep: irq:spread on the virtio tree gives each queue's
// IRQs Tomcat's CPU (1), leaves the configuration IRQ, and the journal
// puts the affinities back; on a virtual NIC or with no NIC it is
// skipped, saying why; with irqbalance running its unit is stopped first.
func TestIRQSpreadStep(t *testing.T) {
	root := virtioRoot(t)
	o := DefaultOptions()
	o.Root, o.Steps, o.CPUMethod = root, []string{"irq:spread"}, MethodAffinity
	one, err := cpuset.Parse("1")
	require.NoError(t, err)
	h := Host{Root: root, NIC: NIC{Name: "eth0"}, CPUs: CPUs{N: 2, Tomcat: one}}
	steps, err := Steps(h, o, nil)
	require.NoError(t, err)
	require.Len(t, steps, 1)
	assert.True(t, hostWide(h, o, steps))

	res, revert := applySteps(t, root, steps)
	assert.Equal(t, tuning.StatusApplied, res[0].Status)
	assert.Equal(t, "eth0's queue IRQs: irq 38 cpus 0-1 -> 1, irq 39 cpus 0-1 -> 1", res[0].Describe)
	aff := func(irq string) string {
		b, err := os.ReadFile(filepath.Join(root, "proc/irq", irq, "smp_affinity_list"))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	assert.Equal(t, []string{"1", "1", "0-1"}, []string{aff("38"), aff("39"), aff("37")})
	revert()
	assert.Equal(t, []string{"0-1", "0-1", "0-1"}, []string{aff("38"), aff("39"), aff("37")}, "the journal put them back")

	for _, tt := range []struct {
		nic  NIC
		proc string
		want string
	}{
		{NIC{Name: "lo", Virtual: true}, "", "lo is virtual (no device/): its traffic raises no queue interrupts to place"},
		{NIC{}, "", "no NIC serves the target"},
	} {
		if tt.proc != "" {
			p := filepath.Join(root, "proc", "4242", "comm")
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(tt.proc+"\n"), 0o644))
		}
		h.NIC = tt.nic
		steps, err := Steps(h, o, nil)
		require.NoError(t, err)
		ch, err := steps[0].Prepare(context.Background())
		require.NoError(t, err)
		assert.Contains(t, ch.Skip, tt.want)
	}

	// irqbalance runs (a fixture's /proc): its unit is stopped first and
	// started last, after the IRQs are back. Not applied here: systemctl
	// would stop this host's irqbalance.
	p := filepath.Join(root, "proc", "4242", "comm")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("irqbalance\n"), 0o644))
	h.NIC = NIC{Name: "eth0"}
	steps, err = Steps(h, o, nil)
	require.NoError(t, err)
	ch, err := steps[0].Prepare(context.Background())
	require.NoError(t, err)
	assert.Empty(t, ch.Skip)
	assert.Equal(t, "stop irqbalance.service for the step (systemctl stop), so that it does not move the IRQs; start it again after\n"+
		"eth0's queue IRQs: irq 38 cpus 0-1 -> 1, irq 39 cpus 0-1 -> 1", ch.Describe)
	var kinds []string
	for _, u := range ch.Undo {
		kinds = append(kinds, u.Kind)
	}
	assert.Equal(t, []string{"nic-irqbalance-stop", "nic-irq-affinity"}, kinds, "reverted last first: the IRQs, then irqbalance")

	_, err = ParseSteps("irq:pack")
	assert.ErrorContains(t, err, `-steps: "irq:pack": placement "pack": the one placement is spread; want irq:spread`)
}
