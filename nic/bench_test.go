package nic_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nettune/nettune/nic"
)

// BenchmarkParseInterrupts parses the 8-CPU arm64 sample (90 lines, 63
// mlx5 queue vectors).
func BenchmarkParseInterrupts(b *testing.B) {
	text, err := os.ReadFile(filepath.Join("testdata", "synthetic-interrupts-arm64-mlx5-8cpu.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := nic.ParseInterrupts(bytes.NewReader(text)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFormatChannels renders one `ethtool -l` block.
func BenchmarkFormatChannels(b *testing.B) {
	var buf bytes.Buffer
	ch := nic.Channels{MaxCombined: 63, Combined: 8}
	for b.Loop() {
		buf.Reset()
		if err := nic.FormatChannels(&buf, "enp1s0f0np0", ch, nil); err != nil {
			b.Fatal(err)
		}
	}
}
