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

// fuzzJournal is a whole journal of two steps, the second reverted.
const fuzzJournal = `{"seq":0,"op":"open","time":"2026-12-03T00:00:00Z","pid":7}
{"seq":1,"op":"begin","step":"access-log","undo":[{"kind":"file","data":{"path":"/a","content":"QUJD","mode":420}},{"kind":"n","data":3}],"time":"2026-12-03T00:00:01Z"}
{"seq":1,"op":"applied","time":"2026-12-03T00:00:02Z"}
{"seq":2,"op":"begin","step":"threads","undo":[{"kind":"n","data":12}],"time":"2026-12-03T00:00:03Z"}
{"seq":2,"op":"reverted","time":"2026-12-03T00:00:04Z"}
`

// parseJournal never panics; a whole journal cut anywhere after its first
// record (a crash mid-write) always reads, and a step it returns torn
// holds only undo records that are in the whole journal.
func FuzzParseJournal(f *testing.F) {
	f.Add([]byte(fuzzJournal), uint16(0))
	f.Add([]byte(fuzzJournal), uint16(140))
	f.Add([]byte(`{"seq":1,"op":"begin","undo":[{"kind":"x","data":1}{"seq":`), uint16(9))
	f.Add([]byte("{\"seq\":0,\"op\":\"open\"}\n{\"seq\":12"), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		parseJournal("fuzz", data) // must not panic

		first := strings.IndexByte(fuzzJournal, '\n') + 1
		at := first + int(cut)%(len(fuzzJournal)-first+1)
		entries, err := parseJournal("fuzz", []byte(fuzzJournal[:at]))
		if err != nil {
			t.Fatalf("cut at %d: %v", at, err)
		}
		for _, e := range entries {
			if e.Seq != 0 && e.Seq != 1 && e.Seq != 2 {
				t.Fatalf("cut at %d: change %d was never written (a cut number read as whole)", at, e.Seq)
			}
			for _, u := range e.Undo {
				if !strings.Contains(fuzzJournal, string(u.Data)) {
					t.Fatalf("cut at %d: undo data %s is not whole", at, u.Data)
				}
			}
		}
	})
}
