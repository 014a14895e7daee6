package numa_test

import (
	"io"
	"os/exec"
	"testing"

	"github.com/nettune/nettune/numa"
)

// BenchmarkTopologyNeoverse reads the 192-CPU, 2-node seed fixture.
func BenchmarkTopologyNeoverse(b *testing.B) {
	h, err := numa.New(neoverseB(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := h.Topology(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHostNumactlH is discovery plus rendering on this host's /sys;
// compare with BenchmarkHostNumactlExec, Debian's numactl -H run as a
// process (the way scripts call it). The report gives the ratio.
func BenchmarkHostNumactlH(b *testing.B) {
	h := numa.NewDefault()
	for b.Loop() {
		topo, err := h.Topology()
		if err != nil {
			b.Fatal(err)
		}
		if err := topo.WriteNumactl(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHostNumactlExec(b *testing.B) {
	bin, err := exec.LookPath("numactl")
	if err != nil {
		b.Skip("numactl not installed")
	}
	for b.Loop() {
		if err := exec.Command(bin, "-H").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPickCPUs(b *testing.B) {
	h, err := numa.New(neoverseB(b))
	if err != nil {
		b.Fatal(err)
	}
	topo, err := h.Topology()
	if err != nil {
		b.Fatal(err)
	}
	opts := &numa.PickOptions{IncludeOffline: true}
	for b.Loop() {
		if _, err := topo.PickCPUs(1, 8, opts); err != nil {
			b.Fatal(err)
		}
	}
}
