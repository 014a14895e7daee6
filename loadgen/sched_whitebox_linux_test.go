package loadgen

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseThreadSched reads the run-queue wait and the involuntary
// switches from a thread's schedstat and status captured on this VM
// (Linux 6.x), and refuses what is not their form.
func TestParseThreadSched(t *testing.T) {
	st, err := os.ReadFile("testdata/thread-self/schedstat")
	require.NoError(t, err)
	wait, ok := parseSchedstatWait(string(st))
	require.True(t, ok)
	assert.Equal(t, 58261296*time.Nanosecond, wait)
	status, err := os.ReadFile("testdata/thread-self/status")
	require.NoError(t, err)
	n, ok := parseNonvoluntary(string(status))
	require.True(t, ok)
	assert.Equal(t, uint64(1), n)

	for _, bad := range []string{"", "1 2", "1 2 3 4", "1 x 3", "1 -2 3", "1 99999999999999999999 3"} {
		_, ok := parseSchedstatWait(bad)
		assert.False(t, ok, "schedstat %q", bad)
	}
	for _, bad := range []string{"", "voluntary_ctxt_switches:\t4\n", "nonvoluntary_ctxt_switches:\tmany\n"} {
		_, ok := parseNonvoluntary(bad)
		assert.False(t, ok, "status %q", bad)
	}
}

// TestThreadSchedSince: on a locked thread, a second reading is never
// below the first, and a difference with a failed reading is zero.
func TestThreadSchedSince(t *testing.T) {
	if _, err := os.Stat("/proc/thread-self/schedstat"); err != nil {
		t.Skip("skipped: this kernel keeps no schedstats")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := readThreadSched()
	require.True(t, a.ok)
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		runtime.Gosched()
	}
	b := readThreadSched()
	d := b.since(a)
	require.True(t, d.ok)
	assert.Equal(t, b.wait-a.wait, d.wait)
	assert.Equal(t, b.preempted-a.preempted, d.preempted)
	assert.Equal(t, threadSched{}, b.since(threadSched{}), "no earlier reading")
	assert.Equal(t, threadSched{}, threadSched{}.since(a), "no later reading")
	assert.Equal(t, threadSched{}, a.since(b), "a reading before the earlier one")
}

func FuzzParseThreadSched(f *testing.F) {
	for _, name := range []string{"testdata/thread-self/schedstat", "testdata/thread-self/status"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("1 2 3")
	f.Fuzz(func(t *testing.T, s string) {
		if w, ok := parseSchedstatWait(s); ok && w < 0 {
			t.Fatalf("negative wait %v from %q", w, s)
		}
		parseNonvoluntary(s)
	})
}
