package bootcfg_test

import (
	"os"
	"testing"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/testutil"
)

// BenchmarkPlanKicksecure parses the largest corpus file (22 kB, 50
// self-appending assignments) and plans the Arm guide's IOMMU edit.
func BenchmarkPlanKicksecure(b *testing.B) {
	data, err := os.ReadFile(testutil.CorpusFile(b, "grub", "kicksecure-40_kernel_hardening.cfg"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, err := bootcfg.ParseFile("k", data)
		if err != nil {
			b.Fatal(err)
		}
		cfg := &bootcfg.Config{Files: []*bootcfg.File{f}}
		if _, err := cfg.Plan(bootcfg.Edit{Set: guideParams}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCmdline parses this machine's /proc/cmdline.
func BenchmarkParseCmdline(b *testing.B) {
	raw, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		b.Skip(err)
	}
	s := string(raw)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := bootcfg.ParseCmdline(s); err != nil {
			b.Fatal(err)
		}
	}
}
