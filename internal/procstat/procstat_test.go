package procstat

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nettune/nettune/internal/testutil"
)

// A real line from this machine's /proc/self/stat (bash), and a JVM
// thread's from /proc/PID/task/TID/stat, whose name holds a space.
const (
	bashLine  = "3421 (bash) S 3420 3421 3421 34816 3530 4194304 1456 5230 0 0 3 2 5 1 20 0 1 0 13245 9093120 1325 18446744073709551615 94617207046144 94617207963101 140722958468688 0 0 0 65536 3686404 1266761467 1 0 0 17 1 0 0 0 0 0 94617208204912 94617208252228 94617214005248 140722958472045 140722958472051 140722958472051 140722958475246 0\n"
	jvmThread = "74213 (http-nio-8080-e) S 1 74133 74133 0 -1 1077936192 41 0 0 0 1503 271 0 0 20 0 45 0 912345 3997335552 48212 18446744073709551615 1 1 0 0 0 0 4 0 16800975 0 0 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       Stat
	}{
		{"bash", bashLine, Stat{PID: 3421, Comm: "bash", State: 'S', PPID: 3420, UTime: 3, STime: 2, StartTime: 13245}},
		{"jvm thread", jvmThread, Stat{PID: 74213, Comm: "http-nio-8080-e", State: 'S', PPID: 1, UTime: 1503, STime: 271, StartTime: 912345}},
		{"name with ') ' and spaces", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 11 22 0 0 20 0 1 0 99 0 0\n", Stat{PID: 7, Comm: "a) b (c", State: 'R', PPID: 1, UTime: 11, STime: 22, StartTime: 99}},
		{"short: no start time", "9 (x) S 1 9 9 0 -1 0 0 0 0 0 5 6", Stat{PID: 9, Comm: "x", State: 'S', PPID: 1, UTime: 5, STime: 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"", `want "pid (comm) state ..."`},
		{"12 bash S 1", `want "pid (comm) state ..."`},
		{"x (bash) S 1 2 3 4 5 6 7 8 9 10 11 12 13", `pid "x" is not a number`},
		{"1 (bash) S 1 2 3", "4 fields after the name, want at least 13"},
		{"1 (bash) S 1 2 3 4 5 6 7 8 9 10 -1 12", `utime "-1" stime "12"`},
		{"1 (bash) SS 1 2 3 4 5 6 7 8 9 10 11 12", `state "SS"`},
		{"1 (bash) \xe9 1 2 3 4 5 6 7 8 9 10 11 12", `state "\xe9"`},
		{"1 (bash) S x 2 3 4 5 6 7 8 9 10 11 12", `ppid "x"`},
		{"1 (bash) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x", `starttime "x"`},
	} {
		_, err := Parse([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tc.line, err, tc.want)
		}
	}
}

func TestReadSelf(t *testing.T) {
	testutil.SkipUnderUserEmulation(t, "qemu-user makes up /proc/self/stat, with the state 0 that Parse refuses")
	s, err := Read("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	// /proc/self/stat shows the thread-group leader, which may sleep
	// while this goroutine runs on another thread: any live state will do.
	if s.PID != os.Getpid() || s.PPID != os.Getppid() || s.StartTime == 0 || !strings.ContainsRune("RSD", rune(s.State)) {
		t.Fatalf("/proc/self/stat: %+v, want this process (pid %d, ppid %d), alive, with a start time", s, os.Getpid(), os.Getppid())
	}
	// The thread reading its own stat is the one certainly running.
	runtime.LockOSThread()
	th, err := Read("/proc/thread-self/stat")
	tid := syscall.Gettid()
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	if th.PID != tid || th.PPID != os.Getppid() || th.State != 'R' {
		t.Fatalf("/proc/thread-self/stat: %+v, want this thread (tid %d, ppid %d), running", th, tid, os.Getppid())
	}
	if _, err := Read("/proc/self/nonexistent"); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	dir := t.TempDir()
	bad := dir + "/stat"
	if err := os.WriteFile(bad, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Fatalf("bad file: %v, want an error naming %s", err, bad)
	}
}

func TestCPU(t *testing.T) {
	if n, ok := (Stat{UTime: 3, STime: 2}).CPU(); n != 5 || !ok {
		t.Fatalf("3+2 = %d %v", n, ok)
	}
	if _, ok := (Stat{UTime: math.MaxUint64, STime: 1}).CPU(); ok {
		t.Fatal("a sum past 2^64 reported ok")
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want time.Duration
	}{
		{0, 0},
		{1, 10 * time.Millisecond},
		{100, time.Second},
		// 9.3e9 ticks overflowed n×1s/100 in int64 before (a 192-CPU host's
		// summed counters reach it after 5.6 days).
		{9_300_000_000, 93_000_000 * time.Second},
		{math.MaxInt64/uint64(10*time.Millisecond) + 1, math.MaxInt64},
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := Ticks(tc.n); got != tc.want {
			t.Errorf("Ticks(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{bashLine, jvmThread, "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 11 22", "", "1 ()"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		// What parsed must print back to a line that parses the same.
		line := strconv.Itoa(s.PID) + " (" + s.Comm + ") " + string([]byte{s.State}) + " " + strconv.Itoa(s.PPID) +
			" 0 0 0 0 0 0 0 0 0 " + strconv.FormatUint(s.UTime, 10) + " " + strconv.FormatUint(s.STime, 10) +
			" 0 0 0 0 0 0 " + strconv.FormatUint(s.StartTime, 10)
		again, err := Parse([]byte(line))
		if err != nil || again != s {
			t.Fatalf("%+v printed as %q parses as %+v, %v", s, line, again, err)
		}
	})
}
