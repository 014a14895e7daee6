package importer

import (
	"os"
	"testing"

	"github.com/nettune/nettune/loadgen"
)

// CPU use of the host and of a process, read under a root given as a
// string ("" is this host), as a sweep samples it.
func TestLoadgenCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("skipped: no /proc")
	}
	h0, err := loadgen.HostCPU("")
	if err != nil {
		t.Fatal(err)
	}
	p0, err := loadgen.ProcessCPU("/", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if h0.CPUs < 1 || h0.Busy <= 0 || p0.At.IsZero() {
		t.Fatalf("host %+v, process %+v", h0, p0)
	}
	if _, err := loadgen.FindProcess("", "no-such-process-name"); err != nil {
		t.Fatal(err)
	}
	_ = loadgen.SweepConfig{Root: "/host"}
}
