//go:build linux

package nic_test

import (
	"bytes"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
)

func nsClient(t *testing.T, ns nic.VethNS) *nic.Client {
	t.Helper()
	c, err := nic.New(&nic.Options{NetNS: ns.Path})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// ethtoolL runs Debian's `ethtool -l` on the veth inside the namespace.
func ethtoolL(t *testing.T, ns nic.VethNS) string {
	t.Helper()
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("skipped: ethtool not installed")
	}
	out, errOut, err := ns.Exec(t, "ethtool", "-l", ns.Veth)
	require.NoError(t, err, errOut)
	return out
}

// TestIntegrationVethChannels reads, sets and restores the channels of a
// veth pair in a namespace the test creates, and checks each step with
// Debian's ethtool.
func TestIntegrationVethChannels(t *testing.T) {
	ns := nic.NewVethNS(t)
	c := nsClient(t, ns)

	ch, err := c.Channels(ns.Veth)
	require.NoError(t, err)
	assert.Equal(t, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}, ch)
	assert.False(t, ch.HasCombined())
	var ours bytes.Buffer
	require.NoError(t, nic.FormatChannels(&ours, ns.Veth, ch, nil))
	assert.Equal(t, ethtoolL(t, ns), ours.String(), "FormatChannels prints what ethtool -l prints")

	change, err := c.SetChannels(ns.Veth, nic.ChannelsUpdate{RX: nic.Count(2), TX: nic.Count(2)})
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = c.SetChannels(ns.Veth, change.Before.Update()) })
	assert.Equal(t, ch, change.Before)
	assert.Equal(t, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 2, TX: 2}, change.After)
	assert.Equal(t, "rx 8 -> 2, tx 8 -> 2", change.String())
	name, seen, err := nic.ParseChannels(strings.NewReader(ethtoolL(t, ns)))
	require.NoError(t, err)
	assert.Equal(t, ns.Veth, name)
	assert.Equal(t, change.After, seen, "ethtool -l sees the new counts")

	// Only tx named: rx stays 2.
	change2, err := c.SetChannels(ns.Veth, nic.ChannelsUpdate{TX: nic.Count(5)})
	require.NoError(t, err)
	assert.Equal(t, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 2, TX: 5}, change2.After)

	restored, err := c.SetChannels(ns.Veth, change.Before.Update())
	require.NoError(t, err)
	assert.Equal(t, ch, restored.After)
	_, seen, err = nic.ParseChannels(strings.NewReader(ethtoolL(t, ns)))
	require.NoError(t, err)
	assert.Equal(t, ch, seen)

	// seed 001's "queues = CPUs" on a NIC without combined channels.
	q, err := c.SetChannels(ns.Veth, ch.QueueUpdate(3))
	require.NoError(t, err)
	assert.Equal(t, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 3, TX: 3}, q.After)
}

// TestIntegrationVethErrors makes the requests the kernel refuses on the
// real device and checks nic refuses them in the kernel's words (which
// Debian's ethtool prints from the kernel's netlink reply).
func TestIntegrationVethErrors(t *testing.T) {
	ns := nic.NewVethNS(t)
	c := nsClient(t, ns)
	tests := []struct {
		name   string
		args   []string
		target error
		extra  string
	}{
		{"above maximum", []string{"rx", "9"}, nic.ErrExceedsMaximum, "rx 9, maximum 8"},
		{"combined without combined channels", []string{"combined", "2"}, nic.ErrExceedsMaximum, "no combined channels; set rx and tx instead"},
		{"no rx channel", []string{"rx", "0"}, nic.ErrNoRXOrTX, "rx 0, tx 8, combined 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := nic.ParseChannelsUpdate(tt.args)
			require.NoError(t, err)
			change, err := c.SetChannels(ns.Veth, u)
			require.ErrorIs(t, err, tt.target)
			require.ErrorIs(t, err, syscall.EINVAL)
			assert.Contains(t, err.Error(), tt.extra)
			assert.Contains(t, err.Error(), "on "+ns.Veth)
			assert.Equal(t, change.Before, change.After)

			_, kernel, kerr := ns.Exec(t, append([]string{"ethtool", "-L", ns.Veth}, tt.args...)...)
			require.Error(t, kerr, "the kernel refuses it too")
			assert.Contains(t, kernel, tt.target.Error(), "nic uses the kernel's wording")
		})
	}
	ch, err := c.Channels(ns.Veth)
	require.NoError(t, err)
	assert.Equal(t, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}, ch, "nothing changed")

	_, err = c.Channels("ntmissing0")
	require.ErrorIs(t, err, nic.ErrNoInterface)
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, "nic: get channels on ntmissing0: no such device", err.Error())
	_, err = c.SetChannels("ntmissing0", nic.ChannelsUpdate{RX: nic.Count(1)})
	require.ErrorIs(t, err, nic.ErrNoInterface)
	_, err = c.Channels("lo")
	require.ErrorIs(t, err, nic.ErrNotSupported)
	_, err = c.Channels("an-interface-name-too-long")
	require.ErrorIs(t, err, nic.ErrNoInterface)
}

// TestIntegrationVethInterfaces finds the veth by its IPv4 and IPv6
// addresses inside the namespace, as seed 001 finds its NIC with ip addr.
func TestIntegrationVethInterfaces(t *testing.T) {
	ns := nic.NewVethNS(t)
	c := nsClient(t, ns)
	for _, a := range []string{"10.213.7.1", "fd00:7::1"} {
		it, err := c.InterfaceByAddr(netip.MustParseAddr(a))
		require.NoError(t, err, a)
		assert.Equal(t, ns.Veth, it.Name)
		assert.Equal(t, "veth", it.Driver)
		assert.False(t, it.Physical)
		assert.Equal(t, -1, it.NUMANode)
		assert.Contains(t, it.Addrs, netip.MustParsePrefix("10.213.7.1/24"))
	}
	peer, err := c.InterfaceByName(ns.Peer)
	require.NoError(t, err)
	assert.Empty(t, peer.Addrs)
	_, err = c.InterfaceByAddr(netip.MustParseAddr("192.0.2.250"))
	require.ErrorIs(t, err, nic.ErrNoInterface)
	ifs, err := c.Interfaces()
	require.NoError(t, err)
	var names []string
	for _, it := range ifs {
		names = append(names, it.Name)
	}
	assert.ElementsMatch(t, []string{"lo", ns.Veth, ns.Peer}, names, "only the namespace's interfaces")
}

// TestIntegrationIRQAffinityHost moves one queue IRQ of this machine's
// first NIC that has MSI interrupts to its lowest allowed CPU, reads it
// back, and puts it back. It runs only with NETTUNE_HOST_TESTS=1.
func TestIntegrationIRQAffinityHost(t *testing.T) {
	testutil.RequireHostTests(t)
	c, err := nic.NewDefault()
	require.NoError(t, err)
	defer c.Close()
	ifs, err := c.Interfaces()
	require.NoError(t, err)
	var q *nic.QueueIRQ
	for _, it := range ifs {
		qs, err := c.QueueIRQs(it.Name)
		if err != nil {
			continue
		}
		for i := range qs {
			if qs[i].Kind != nic.QueueOther && len(qs[i].Affinity) > 1 {
				q = &qs[i]
				break
			}
		}
		if q != nil {
			break
		}
	}
	if q == nil {
		t.Skip("skipped: no NIC queue IRQ allowed on more than one CPU")
	}
	// The lowest CPU: other packages' tests may hotplug cpu1 meanwhile,
	// never cpu0.
	target := []int{q.Affinity[0]}
	prev, err := c.SetIRQAffinity(q.IRQ, target)
	if err != nil && strings.Contains(err.Error(), "not supported") {
		t.Skipf("skipped: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := c.SetIRQAffinity(q.IRQ, prev)
		require.NoError(t, err)
		got, err := c.IRQAffinity(q.IRQ)
		require.NoError(t, err)
		assert.Equal(t, prev, got, "irq %d restored", q.IRQ)
	})
	assert.Equal(t, q.Affinity, prev)
	got, err := c.IRQAffinity(q.IRQ)
	require.NoError(t, err)
	assert.Equal(t, target, got)
}

// helperEnv makes TestIntegrationVethPermission's child run the unprivileged
// half: it is set only on the child the test starts.
const helperEnv = "NETTUNE_NIC_EPERM_HELPER"

// TestIntegrationVethPermission sets channels on the veth as an
// unprivileged user inside the namespace: the real kernel refuses with
// EPERM, which nic reports as ErrPermission and os.ErrPermission.
func TestIntegrationVethPermission(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		c, err := nic.NewDefault()
		require.NoError(t, err)
		defer c.Close()
		ch, err := c.Channels("ntv0")
		require.NoError(t, err, "reading needs no privilege")
		change, err := c.SetChannels("ntv0", nic.ChannelsUpdate{RX: nic.Count(2), TX: nic.Count(2)})
		require.ErrorIs(t, err, nic.ErrPermission)
		require.ErrorIs(t, err, os.ErrPermission)
		assert.Equal(t, ch, change.After, "nothing changed")
		return
	}
	ns := nic.NewVethNS(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("skipped: setpriv (util-linux) not installed")
	}
	// The child is this test binary, copied where the unprivileged user
	// can run it.
	dir, err := os.MkdirTemp("", "nettune-nic-eperm-")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, os.RemoveAll(dir)) })
	require.NoError(t, os.Chmod(dir, 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	self, err := os.ReadFile(exe)
	require.NoError(t, err)
	bin := dir + "/nic.test"
	require.NoError(t, os.WriteFile(bin, self, 0o755))
	out, stderr, err := ns.Exec(t, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
		"env", helperEnv+"=1", bin, "-test.run", "^TestIntegrationVethPermission$", "-test.v", "-test.count=1")
	require.NoError(t, err, "unprivileged child:\n%s%s", out, stderr)
	t.Logf("unprivileged child:\n%s", out)
	require.Contains(t, out, "--- PASS: TestIntegrationVethPermission")
	ch, err := nsClient(t, ns).Channels(ns.Veth)
	require.NoError(t, err)
	assert.Equal(t, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}, ch)
}
