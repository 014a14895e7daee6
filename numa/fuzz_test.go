package numa

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// addHostSeeds adds the files matching glob on this machine (real kernel
// output: /sys node files, /proc/self/status) as fuzz seeds.

func addHostSeeds(f *testing.F, glob string) {
	paths, _ := filepath.Glob(glob)
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
}

func FuzzParseDistance(f *testing.F) {
	for _, s := range []string{"10\n", "10 100\n", "100 10\n", "10 16 32 33\n\x00", "10 21\n", "", " ", "10  20", "256", "-1", "1\n2"} {
		f.Add(s)
	}
	addHostSeeds(f, "/sys/devices/system/node/node*/distance")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDistance(s, "distance")
		if err != nil {
			return
		}
		again, err := parseDistance(formatDistance(d), "distance")
		if err != nil || !reflect.DeepEqual(d, again) {
			t.Fatalf("round trip of %q: %v then %v (%v)", s, d, again, err)
		}
	})
}

func FuzzParseNodeMeminfo(f *testing.F) {
	f.Add("Node 0 MemTotal:       131732940 kB\nNode 0 MemFree:        130167340 kB\nNode 0 MemUsed:         1565600 kB\nNode 0 HugePages_Total:     0\n\x00", 0)
	f.Add("\nNode 1 MemTotal:       16777216 kB\nNode 1 MemFree:        13669108 kB\n", 1)
	f.Add("Node 0 MemTotal: 18446744073709551615 kB\nNode 0 MemFree: 0 kB\n", 0)
	f.Add("garbage", 0)
	// Captured trees with one of the two lines (numactl prints the other
	// as "<not available>"), and with neither.
	f.Add("Node 1 MemTotal:        2097152 kB\nNode 1 MemUsed:          524288 kB\n", 1)
	f.Add("Node 0 MemFree:        2097152 kB\n", 0)
	f.Add("Node 2 HugePages_Total:     0\n", 2)
	f.Add("", 0)
	addHostSeedsNode(f)
	f.Fuzz(func(t *testing.T, s string, node int) {
		if node < 0 || node > 1<<16 {
			return
		}
		m, ok, err := parseNodeMeminfo(s, node, "meminfo")
		if err != nil {
			return
		}
		if !ok && (m.Total != 0 || m.Free != 0 || !m.NoTotal || !m.NoFree) {
			t.Fatalf("%q: neither line, yet %+v", s, m)
		}
		text := formatNodeMeminfo(node, m)
		again, againOK, err := parseNodeMeminfo(text, node, "meminfo")
		if err != nil || again != m || againOK != ok {
			t.Fatalf("round trip of %q: %+v (%v) then %+v (%v, %v)", s, m, ok, again, againOK, err)
		}
		if formatNodeMeminfo(node, again) != text {
			t.Fatalf("render(parse(%q)) is not %q", text, formatNodeMeminfo(node, again))
		}
	})
}

func addHostSeedsNode(f *testing.F) {
	paths, _ := filepath.Glob("/sys/devices/system/node/node0/meminfo")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), 0)
		}
	}
}

func FuzzParseStatusCPUs(f *testing.F) {
	f.Add("Name:\tsleep\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n")
	f.Add("Cpus_allowed_list:\t\n")
	f.Add("Cpus_allowed_list:\t0-x\n")
	addHostSeeds(f, "/proc/self/status")
	f.Fuzz(func(t *testing.T, s string) {
		set, err := parseStatusCPUs(s, "status")
		if err != nil {
			return
		}
		again, err := parseStatusCPUs("Cpus_allowed_list:\t"+set.String()+"\n", "status")
		if err != nil || !again.Equal(set) {
			t.Fatalf("round trip of %q: %s then %s (%v)", s, set, again, err)
		}
	})
}
