package nic_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/nic"
)

// FuzzParseInterrupts checks that the parser never panics and that what it
// parses round-trips: rendering a parsed table and parsing it again gives
// the same table, and rendering that gives the same text.
func FuzzParseInterrupts(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*interrupts-*.txt"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(string(b))
	}
	f.Add("  CPU0 CPU1\n 24: 1 2 IO-APIC 5-edge a, b\nERR: 0\n")
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := nic.ParseInterrupts(strings.NewReader(s))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := tab.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		again, err := nic.ParseInterrupts(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("parse of rendered table: %v\n%s", err, out.String())
		}
		require.Equal(t, tab, again)
		var out2 bytes.Buffer
		_, _ = again.WriteTo(&out2)
		require.Equal(t, out.String(), out2.String())
	})
}

// FuzzParseChannels checks that `ethtool -l` parsing never panics and that
// parse, render, parse gives the same values.
func FuzzParseChannels(f *testing.F) {
	for _, tt := range corpusChannels {
		var b bytes.Buffer
		require.NoError(f, nic.FormatChannels(&b, tt.name, tt.ch, &nic.FormatOptions{ZeroForNA: tt.zeroNA}))
		f.Add(b.String())
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, ch, err := nic.ParseChannels(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, zero := range []bool{false, true} {
			var b bytes.Buffer
			require.NoError(t, nic.FormatChannels(&b, name, ch, &nic.FormatOptions{ZeroForNA: zero}))
			name2, ch2, err := nic.ParseChannels(&b)
			require.NoError(t, err, b.String())
			require.Equal(t, name, name2)
			require.Equal(t, ch, ch2)
		}
	})
}

// FuzzParseChannelsUpdate checks that `ethtool -L` argument parsing never
// panics and that String gives arguments that parse to the same update.
func FuzzParseChannelsUpdate(f *testing.F) {
	f.Add("combined 8")
	f.Add("rx 2 tx 2")
	f.Add("other 1 combined 0 rx 4")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := nic.ParseChannelsUpdate(strings.Fields(s))
		if err != nil {
			return
		}
		u2, err := nic.ParseChannelsUpdate(strings.Fields(u.String()))
		require.NoError(t, err)
		require.Equal(t, u, u2)
		// With never panics and never returns counts above the maxima.
		ch := nic.Channels{MaxRX: 8, MaxTX: 8, MaxCombined: 4, RX: 1, TX: 1, Combined: 1}
		if got, err := ch.With(u); err == nil {
			require.LessOrEqual(t, got.RX, got.MaxRX)
			require.LessOrEqual(t, got.Combined, got.MaxCombined)
		}
	})
}

// FuzzClassifyIRQName checks the name classifier never panics and returns
// a queue index exactly for queue kinds.
func FuzzClassifyIRQName(f *testing.F) {
	f.Add("mlx5_comp3@pci:0000:01:00.0", "eth0")
	f.Add("eth0-TxRx-3", "eth0")
	f.Add("virtio2-input.0", "eth0")
	f.Fuzz(func(t *testing.T, name, ifname string) {
		k, q := nic.ClassifyIRQName(name, ifname)
		require.Equal(t, k == nic.QueueOther, q == -1)
	})
}
