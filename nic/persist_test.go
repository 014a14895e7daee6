package nic_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
)

func TestTunedNetRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		ch   nic.Channels
		want string
	}{
		{"combined (the guide's mlx5)", nic.Channels{MaxCombined: 63, Combined: 63},
			"[net_nettune_eth0]\ntype=net\npriority=-1\ndevices=eth0\nchannels=combined 8\n"},
		{"rx and tx only (veth)", nic.Channels{MaxRX: 8, MaxTX: 8, RX: 1, TX: 1},
			"[net_nettune_eth0]\ntype=net\npriority=-1\ndevices=eth0\nchannels=rx 8 tx 8\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.ch.TunedNet("eth0", 8).Render()
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(out))
		})
	}
	_, err := nic.TunedNet{Device: "eth0"}.Render()
	assert.ErrorContains(t, err, "no channel count")
	_, err = nic.TunedNet{Device: "a/b", Channels: nic.ChannelsUpdate{Combined: nic.Count(1)}}.Render()
	assert.Error(t, err)
	_, err = nic.TunedNet{Instance: "net x", Device: "eth0", Channels: nic.ChannelsUpdate{Combined: nic.Count(1)}}.Render()
	assert.Error(t, err)
}

// eth0 of a captured Xeon (igb, its own MAC): matched by MACAddress= and
// Driver=; [Link] carries over the file the udev database says applied,
// and the file is undone by RestoreLinkFile.
func TestLinkFileCarriesOverUdev(t *testing.T) {
	root := testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", "32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2"))
	mk := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(s), 0o644))
	}
	mk("run/udev/data/n2", "I:123\nE:ID_NET_LINK_FILE=/usr/lib/systemd/network/80-admin.link\nE:ID_NET_NAME=eth0\n")
	mk("usr/lib/systemd/network/80-admin.link", "# admin's\n[Match]\nOriginalName=*\n\n[Link]\nNamePolicy=keep path\nMACAddressPolicy=none\nCombinedChannels=2\n")
	c := clientAt(t, root)
	lf, err := c.LinkFile("eth0", nic.ChannelsUpdate{Combined: nic.Count(8)})
	require.NoError(t, err)
	out, err := lf.Render()
	require.NoError(t, err)
	assert.Equal(t, `# Written by nettune (nic.LinkFile); remove it to undo it.
# [Link] carries over /usr/lib/systemd/network/80-admin.link, which applied before.
[Match]
MACAddress=84:8f:69:fe:cc:40
Driver=igb

[Link]
NamePolicy=keep path
MACAddressPolicy=none
CombinedChannels=8
`, string(out))

	w, err := c.WriteLinkFile(lf)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "etc", "systemd", "network", "10-nettune-eth0.link"), w.Path)
	assert.False(t, w.Existed)
	got, err := os.ReadFile(w.Path)
	require.NoError(t, err)
	assert.Equal(t, out, got)
	require.NoError(t, w.Verify(context.Background()))
	assert.Contains(t, w.Describe(), "write "+w.Path)
	// Edited by hand: Verify names the line.
	require.NoError(t, os.WriteFile(w.Path, []byte(strings.Replace(string(out), "CombinedChannels=8", "CombinedChannels=2", 1)), 0o644))
	line := slices.Index(strings.Split(string(out), "\n"), "CombinedChannels=8") + 1
	require.Positive(t, line, "the rendered file sets CombinedChannels=8:\n%s", out)
	assert.ErrorContains(t, w.Verify(context.Background()), fmt.Sprintf(`line %d is "CombinedChannels=2", want "CombinedChannels=8"`, line))
	require.NoError(t, w.Undo(context.Background()))
	assert.NoDirExists(t, filepath.Join(root, "etc", "systemd"))
	require.NoError(t, w.Undo(context.Background()))
}

// Without a udev database or an installed 99-default.link, systemd's own
// defaults are carried over; a virtual device is matched by its name.
func TestLinkFileDefaults(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys", "class", "net", "veth0")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for f, v := range map[string]string{"ifindex": "7\n", "address": "6a:1b:00:00:00:01\n", "addr_assign_type": "1\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644))
	}
	c := clientAt(t, root)
	lf, err := c.LinkFile("veth0", nic.ChannelsUpdate{RX: nic.Count(4), TX: nic.Count(4)})
	require.NoError(t, err)
	out, err := lf.Render()
	require.NoError(t, err)
	assert.Equal(t, `# Written by nettune (nic.LinkFile); remove it to undo it.
[Match]
OriginalName=veth0

[Link]
NamePolicy=keep kernel database onboard slot path
AlternativeNamesPolicy=database onboard slot path
MACAddressPolicy=persistent
RxChannels=4
TxChannels=4
`, string(out))

	// A file applying now that sorts first would keep ours from applying.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run", "udev", "data"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "run", "udev", "data", "n7"), []byte("E:ID_NET_LINK_FILE=/etc/systemd/network/05-x.link\n"), 0o644))
	_, err = c.LinkFile("veth0", nic.ChannelsUpdate{RX: nic.Count(4)})
	assert.ErrorContains(t, err, "05-x.link, which sorts before 10-nettune-veth0.link")

	_, err = nic.LinkFile{File: "x.link", Channels: nic.ChannelsUpdate{RX: nic.Count(1)}}.Render()
	assert.ErrorContains(t, err, "empty [Match]")
}
