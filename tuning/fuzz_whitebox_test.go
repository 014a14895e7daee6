package tuning

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nettune/nettune/internal/cpuset"
)

// sysctlPath never panics; an accepted name stays under /proc/sys and is
// a fixed point.
func FuzzSysctlPath(f *testing.F) {
	for _, s := range []string{"net.ipv4.tcp_max_tw_buckets", "net/ipv4/conf/eth0.100/rp_filter", "..", "/etc/passwd", "a/../../b", "kernel", "a..b", ".a", "a/./b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p, err := sysctlPath(name)
		if err != nil {
			return
		}
		full := filepath.Join("/proc/sys", p)
		if full != filepath.Clean(full) || !strings.HasPrefix(full, "/proc/sys/") {
			t.Fatalf("%q -> %q leaves /proc/sys", name, full)
		}
		again, err := sysctlPath(p)
		if err != nil || again != p {
			t.Fatalf("not a fixed point: %q -> %q -> %q, %v", name, p, again, err)
		}
	})
}

// CPUState never panics whatever the kernel files hold; a list it
// accepts is the parsed list.
func FuzzCPUState(f *testing.F) {
	for _, s := range []string{"0-1\n", "0\n", "", "0-1\x00", "1-0", "0,,1", "0-1:1/2", "99999999999"} {
		f.Add(s, "1\n")
	}
	f.Add("0-1\n", "2")
	f.Add("0-1\n", "")
	dir := thisMachineShape().build(f)
	h, err := New(dir)
	if err != nil {
		f.Fatal(err)
	}
	onlinePath := filepath.Join(dir, "sys", "devices", "system", "cpu", "online")
	flagPath := filepath.Join(dir, "sys", "devices", "system", "cpu", "cpu1", "online")
	f.Fuzz(func(t *testing.T, online, flag string) {
		if err := os.WriteFile(onlinePath, []byte(online), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(flagPath, []byte(flag), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := h.CPUState()
		if err != nil {
			return
		}
		want, err := cpuset.Parse(online)
		if err != nil {
			t.Fatalf("CPUState accepted %q that cpuset rejects", online)
		}
		if !st.Online.Equal(want) {
			t.Fatalf("online %q read as %q", online, st.Online)
		}
		_ = st.Snapshot()
		_, _ = h.planKeep(st, want)
	})
}
