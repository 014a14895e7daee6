package nic_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
)

// corpusChannels are the real `ethtool -l` outputs in the shared corpus
// and what they say.
var corpusChannels = []struct {
	file   string
	name   string
	ch     nic.Channels
	tabs   bool // the text kept ethtool's tabs (others were copied from web pages)
	zeroNA bool // printed by ethtool over the ioctl (0 for absent values)
}{
	{"ethtool-l_arm-lp_grace-mlx5_enp1s0f0np0_before.txt", "enp1s0f0np0",
		nic.Channels{MaxCombined: 63, Combined: 63}, true, false},
	{"ethtool-l_arm-lp_grace-mlx5_enp1s0f0np0_after-L-combined-8.txt", "enp1s0f0np0",
		nic.Channels{MaxCombined: 63, Combined: 8}, true, false},
	{"ethtool-l_ifupdown2-pr268_ens10f0_rx-tx-and-combined-64.txt", "ens10f0",
		nic.Channels{MaxRX: 64, MaxTX: 64, MaxCombined: 64, Combined: 64}, true, false},
	{"ethtool-l_amzn-drivers-issue123_ena_eth0_after-L-combined-1.txt", "eth0",
		nic.Channels{MaxCombined: 2, Combined: 1}, true, true},
	{"ethtool-l_firedancer-issue1427_eno1_rx-tx-separate_no-combined.txt", "eno1",
		nic.Channels{MaxRX: 4, MaxTX: 4, RX: 4, TX: 1}, false, false},
	{"ethtool-l_firedancer-issue1427_ens3f0_combined64-other1.txt", "ens3f0",
		nic.Channels{MaxOther: 1, MaxCombined: 64, Other: 1, Combined: 1}, false, false},
	{"ethtool-l_pbench-issue264_p2p1_spaces_other1_combined63.txt", "p2p1",
		nic.Channels{MaxOther: 1, MaxCombined: 63, Other: 1, Combined: 1}, false, true},
}

var spaces = regexp.MustCompile(`[ \t]+`)

// TestGoldenFormatChannelsCorpus renders each corpus output's values and
// compares with the real text: byte for byte where the text kept ethtool's
// tabs, with runs of blanks folded where a web page turned them to spaces.
func TestGoldenFormatChannelsCorpus(t *testing.T) {
	for _, tt := range corpusChannels {
		t.Run(tt.file, func(t *testing.T) {
			want, err := os.ReadFile(testutil.CorpusFile(t, "cmd-outputs", tt.file))
			require.NoError(t, err)
			var got bytes.Buffer
			require.NoError(t, nic.FormatChannels(&got, tt.name, tt.ch, &nic.FormatOptions{ZeroForNA: tt.zeroNA}))
			if tt.tabs {
				assert.Equal(t, string(want), got.String())
			} else {
				assert.Equal(t, spaces.ReplaceAllString(string(want), " "), spaces.ReplaceAllString(got.String(), " "))
			}
		})
	}
}

// TestParseChannelsCorpus parses every real output, and the parse of our
// rendering equals the parse of the original.
func TestParseChannelsCorpus(t *testing.T) {
	for _, tt := range corpusChannels {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(testutil.CorpusFile(t, "cmd-outputs", tt.file))
			require.NoError(t, err)
			defer f.Close()
			name, ch, err := nic.ParseChannels(f)
			require.NoError(t, err)
			assert.Equal(t, tt.name, name)
			assert.Equal(t, tt.ch, ch)
			var b bytes.Buffer
			require.NoError(t, nic.FormatChannels(&b, name, ch, nil))
			name2, ch2, err := nic.ParseChannels(&b)
			require.NoError(t, err)
			assert.Equal(t, name, name2)
			assert.Equal(t, ch, ch2)
		})
	}
}

// TestParseChannelsSeed parses the `ethtool -l` blocks quoted in seed 001.
func TestParseChannelsSeed(t *testing.T) {
	seeds := filepath.Join(filepath.Dir(testutil.CorpusDir(t)), "seeds")
	matches, err := filepath.Glob(filepath.Join(seeds, "001_*.txt"))
	require.NoError(t, err)
	if len(matches) == 0 {
		t.Skip("seed 001 not present beside the corpus")
	}
	text, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	blocks := regexp.MustCompile(`(?s)Channel parameters for [^\n]*:\n.*?Current hardware settings:\n(?:[A-Za-z]+:\t+[^\n]*\n){4}`).FindAllString(string(text), -1)
	require.Len(t, blocks, 2)
	var got []nic.Channels
	for _, b := range blocks {
		name, ch, err := nic.ParseChannels(strings.NewReader(b))
		require.NoError(t, err)
		assert.Equal(t, "enP11p4s0", name)
		got = append(got, ch)
		var out bytes.Buffer
		require.NoError(t, nic.FormatChannels(&out, name, ch, nil))
		assert.Equal(t, b, out.String())
	}
	assert.Equal(t, []nic.Channels{{MaxCombined: 32, Combined: 32}, {MaxCombined: 32, Combined: 8}}, got)
}

func TestParseChannelsErrors(t *testing.T) {
	good := "Channel parameters for eth0:\nPre-set maximums:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\tn/a\nCombined:\t4\n" +
		"Current hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\tn/a\nCombined:\t2\n"
	_, _, err := nic.ParseChannels(strings.NewReader(good))
	require.NoError(t, err)
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "want the title"},
		{"bad count", strings.Replace(good, "Combined:\t2", "Combined:\tlots", 1), `line 11 "Combined:\tlots": want a decimal count or n/a`},
		{"current without maximum", strings.Replace(good, "Current hardware settings:\nRX:\t\tn/a", "Current hardware settings:\nRX:\t\t3", 1), "maximum is n/a"},
		{"repeated", strings.Replace(good, "TX:\t\tn/a\nOther", "TX:\t\tn/a\nTX:\t\tn/a\nOther", 1), "TX given twice"},
		{"unknown key", strings.Replace(good, "Other:", "Others:", 1), "want RX:, TX:, Other: or Combined:"},
		{"missing line", strings.Replace(good, "Other:\t\tn/a\nCombined:\t2\n", "", 1), "want the title and RX"},
		{"sections swapped", strings.Replace(good, "Pre-set maximums:", "Current hardware settings:", 1), "out of order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := nic.ParseChannels(strings.NewReader(tt.text))
			require.ErrorIs(t, err, nic.ErrSyntax)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestChannelsWith(t *testing.T) {
	mlx5 := nic.Channels{MaxCombined: 63, Combined: 63}
	veth := nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}
	e810 := nic.Channels{MaxRX: 64, MaxTX: 64, MaxOther: 1, MaxCombined: 64, Other: 1, Combined: 64}
	tests := []struct {
		name    string
		ch      nic.Channels
		u       nic.ChannelsUpdate
		want    nic.Channels
		err     error
		message string
	}{
		{"seed 001 combined 8", mlx5, nic.ChannelsUpdate{Combined: nic.Count(8)}, nic.Channels{MaxCombined: 63, Combined: 8}, nil, ""},
		{"veth rx tx 2", veth, nic.ChannelsUpdate{RX: nic.Count(2), TX: nic.Count(2)}, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 2, TX: 2}, nil, ""},
		{"keeps other counts", e810, nic.ChannelsUpdate{Combined: nic.Count(8)}, nic.Channels{MaxRX: 64, MaxTX: 64, MaxOther: 1, MaxCombined: 64, Other: 1, Combined: 8}, nil, ""},
		{"rx only, combined kept", e810, nic.ChannelsUpdate{RX: nic.Count(4)}, nic.Channels{MaxRX: 64, MaxTX: 64, MaxOther: 1, MaxCombined: 64, RX: 4, Other: 1, Combined: 64}, nil, ""},
		{"above maximum", mlx5, nic.ChannelsUpdate{Combined: nic.Count(64)}, mlx5, nic.ErrExceedsMaximum, "requested channel count exceeds maximum: combined 64, maximum 63"},
		{"combined on veth", veth, nic.ChannelsUpdate{Combined: nic.Count(2)}, veth, nic.ErrExceedsMaximum, "combined 2, maximum 0 (the device has no combined channels; set rx and tx instead)"},
		{"combined 0", mlx5, nic.ChannelsUpdate{Combined: nic.Count(0)}, mlx5, nic.ErrNoRXOrTX, "would result in no RX or TX channel being configured: rx 0, tx 0, combined 0"},
		{"veth tx 0", veth, nic.ChannelsUpdate{TX: nic.Count(0)}, veth, nic.ErrNoRXOrTX, "rx 8, tx 0, combined 0"},
		{"rx 0 with combined", e810, nic.ChannelsUpdate{RX: nic.Count(0)}, e810, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ch.With(tt.u)
			assert.Equal(t, tt.want, got)
			if tt.err == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.err)
			require.ErrorIs(t, err, syscall.EINVAL)
			assert.Contains(t, err.Error(), tt.message)
		})
	}
}

func TestQueueUpdate(t *testing.T) {
	assert.Equal(t, "combined 8", nic.Channels{MaxCombined: 63}.QueueUpdate(8).String())
	assert.Equal(t, "rx 8 tx 8", nic.Channels{MaxRX: 8, MaxTX: 8}.QueueUpdate(8).String())
}

func TestMaxQueues(t *testing.T) {
	tests := []struct {
		name string
		ch   nic.Channels
		want uint32
	}{
		{"mlx5 combined", nic.Channels{MaxCombined: 63, MaxOther: 1}, 63},
		{"combined and rx/tx: combined wins, as in QueueUpdate", nic.Channels{MaxCombined: 4, MaxRX: 16, MaxTX: 16}, 4},
		{"veth rx/tx", nic.Channels{MaxRX: 8, MaxTX: 8}, 8},
		{"rx/tx uneven: the smaller", nic.Channels{MaxRX: 8, MaxTX: 3}, 3},
		{"single-queue veth", nic.Channels{MaxRX: 1, MaxTX: 1}, 1},
		{"rx only", nic.Channels{MaxRX: 4}, 0},
		{"other only", nic.Channels{MaxOther: 1}, 0},
		{"none (lo)", nic.Channels{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.ch.MaxQueues())
			if tt.want > 0 {
				_, err := tt.ch.With(tt.ch.QueueUpdate(tt.want))
				require.NoError(t, err, "MaxQueues is reachable with QueueUpdate")
				_, err = tt.ch.With(tt.ch.QueueUpdate(tt.want + 1))
				require.ErrorIs(t, err, nic.ErrExceedsMaximum, "and nothing above it is")
			}
		})
	}
}

func TestParseChannelsUpdate(t *testing.T) {
	tests := []struct {
		args []string
		want string
		err  string
	}{
		{[]string{"combined", "8"}, "combined 8", ""},
		{[]string{"tx", "2", "rx", "2"}, "rx 2 tx 2", ""},
		{[]string{"other", "1", "combined", "0"}, "other 1 combined 0", ""},
		{nil, "", "no counts given"},
		{[]string{"combined"}, "", "combined without a count"},
		{[]string{"queues", "8"}, "", `"queues" is not a channel kind`},
		{[]string{"rx", "-1"}, "", `rx "-1": want a decimal count`},
		{[]string{"rx", "1", "rx", "2"}, "", "rx given twice"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			u, err := nic.ParseChannelsUpdate(tt.args)
			if tt.err != "" {
				require.ErrorIs(t, err, nic.ErrSyntax)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, u.String())
		})
	}
}

func TestChannelsChangeString(t *testing.T) {
	c := nic.ChannelsChange{Before: nic.Channels{MaxCombined: 63, Combined: 63}, After: nic.Channels{MaxCombined: 63, Combined: 8}}
	assert.Equal(t, "combined 63 -> 8", c.String())
	assert.True(t, c.Changed())
	assert.Equal(t, "no change", nic.ChannelsChange{}.String())
	assert.Equal(t, "rx 0 tx 0 other 0 combined 63", c.Before.Update().String())
}

func TestQueues(t *testing.T) {
	tests := []struct {
		name string
		ch   nic.Channels
		want uint32
	}{
		{"mlx5 combined 8 of 63", nic.Channels{MaxCombined: 63, Combined: 8, MaxOther: 1, Other: 1}, 8},
		{"veth rx 8 tx 8", nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}, 8},
		{"rx/tx uneven: the smaller", nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 2}, 2},
		{"none (lo)", nic.Channels{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.ch.Queues())
			if tt.want > 0 {
				got, err := tt.ch.With(tt.ch.QueueUpdate(tt.want))
				require.NoError(t, err)
				assert.Equal(t, tt.want, got.Queues(), "QueueUpdate(Queues()) keeps the count")
			}
		})
	}
}
