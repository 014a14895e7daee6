//go:build linux

package main

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/nic"
)

// TestNICQueuesVirtual plans the nic-queues step on virtual devices: a
// veth with settable rx/tx channels is tuned (capped at its maximum, and
// said so); lo and a one-queue veth are skipped with the reason.
func TestNICQueuesVirtual(t *testing.T) {
	ctx := context.Background()
	veth := nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}
	tests := []struct {
		name     string
		s        *study
		describe []string
		skip     string // "" when the step changes the device
	}{
		{name: "veth with 8 queues, 2 CPUs",
			s:        &study{n: 2, iface: "ntsrv0", ifaceVirtual: true, ifaceWhy: "ntsrv0 is virtual", channels: &veth},
			describe: []string{"ethtool -L ntsrv0 rx 2 tx 2: rx 8 -> 2, tx 8 -> 2", "ntsrv0 is virtual, with channels to set (rx 8/8, tx 8/8)"}},
		{name: "more CPUs than queues: capped",
			s:        &study{n: 16, iface: "ntsrv0", ifaceVirtual: true, channels: &nic.Channels{MaxRX: 8, MaxTX: 6, RX: 2, TX: 2}},
			describe: []string{"ethtool -L ntsrv0 rx 6 tx 6: rx 2 -> 6, tx 2 -> 6", "16 CPUs capped at ntsrv0's maximum of 6 queues"}},
		{name: "one-queue veth",
			s:    &study{n: 2, iface: "veth0", ifaceVirtual: true, channels: &nic.Channels{MaxRX: 1, MaxTX: 1, RX: 1, TX: 1}},
			skip: "virtual veth0 has one queue (ethtool -l: rx 1/1, tx 1/1)"},
		{name: "loopback",
			s: &study{n: 2, iface: "lo", ifaceVirtual: true, ifaceWhy: "lo is virtual (no device/: loopback, veth, bridge)",
				channelsErr: errors.New("nic: get channels on lo: operation not supported")},
			skip: "no physical NIC: lo is virtual (no device/: loopback, veth, bridge), without channels to set (nic: get channels on lo: operation not supported)"},
		{name: "virtual without channels",
			s:    &study{n: 2, iface: "br0", ifaceVirtual: true, ifaceWhy: "br0 is virtual"},
			skip: "without channels to set (none reported)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := tt.s.prepareNICQueues(ctx)
			require.NoError(t, err)
			for _, d := range tt.describe {
				assert.Contains(t, ch.Describe, d)
			}
			if tt.skip != "" {
				assert.Contains(t, ch.Skip, tt.skip)
				assert.Nil(t, ch.Apply)
				return
			}
			if os.Geteuid() != 0 {
				assert.Contains(t, ch.Skip, "CAP_NET_ADMIN")
				return
			}
			require.Empty(t, ch.Skip)
			require.NotNil(t, ch.Apply)
			require.Len(t, ch.Undo, 1)
			assert.Equal(t, undoNICChannels, ch.Undo[0].Kind)
			assert.Contains(t, string(ch.Undo[0].Data), `"interface":"`+tt.s.iface+`"`)
		})
	}
}
