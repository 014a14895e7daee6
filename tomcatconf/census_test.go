//go:build linux

package tomcatconf_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
)

func TestClassifyThread(t *testing.T) {
	tests := []struct {
		name string
		kind tomcatconf.ThreadKind
		pool string
	}{
		// top -H in the Arm guide: the kernel's 15-byte names.
		{"http-nio-8080-P", tomcatconf.KindPoller, "http-nio-8080"},
		{"http-nio-8080-A", tomcatconf.KindAcceptor, "http-nio-8080"},
		{"http-nio-8080-e", tomcatconf.KindExec, "http-nio-8080"},
		// jcmd Thread.print, full names.
		{"http-nio-8937-exec-10", tomcatconf.KindExec, "http-nio-8937"},
		{"http-nio-8937-Poller", tomcatconf.KindPoller, "http-nio-8937"},
		{"http-nio-8937-Acceptor", tomcatconf.KindAcceptor, "http-nio-8937"},
		{"https-jsse-nio-8443-exec-1", tomcatconf.KindExec, "https-jsse-nio-8443"},
		{"http-nio-127.0.0.1-8080-exec-3", tomcatconf.KindExec, "http-nio-127.0.0.1-8080"},
		{"ajp-nio-8009-Acceptor", tomcatconf.KindAcceptor, "ajp-nio-8009"},
		{"http-nio2-8443-exec-2", tomcatconf.KindExec, "http-nio2-8443"},
		// A 5-digit port leaves no room for the kind in 15 bytes.
		{"http-nio-18080-", tomcatconf.KindOther, "other"},
		{"tomcat-exec-12", tomcatconf.KindExecutor, "tomcat-exec-"},
		{"catalina-exec-1", tomcatconf.KindExecutor, "catalina-exec-"},
		{"GC Thread#0", tomcatconf.KindGC, "gc"},
		{"G1 Conc#0", tomcatconf.KindGC, "gc"},
		{"C2 CompilerThre", tomcatconf.KindCompiler, "compiler"},
		{"VM Thread", tomcatconf.KindVM, "vm"},
		{"Catalina-utilit", tomcatconf.KindOther, "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, pool := tomcatconf.ClassifyThread(tt.name, []string{"tomcat-exec-", "catalina-exec-"})
			assert.Equal(t, tt.kind, kind)
			assert.Equal(t, tt.pool, pool)
		})
	}
}

// The thread stats and jcmd dump of a real Debian tomcat10 JVM (PID 6083,
// Connector on 8937, after ab -k -n 3000 -c 8), captured on a 2-CPU VM.
func tomcatRoot(_ *testing.T) string {
	return filepath.Join("testdata", "tomcat10-root")
}

func TestTakeCensusCaptured(t *testing.T) {
	dump, err := os.Open(filepath.Join("testdata", "jcmd-thread-print-openjdk17-tomcat10.txt"))
	require.NoError(t, err)
	defer dump.Close()
	names, err := tomcatconf.ParseThreadDump(dump)
	require.NoError(t, err)
	assert.Len(t, names, 36)
	assert.Equal(t, "http-nio-8937-Poller", names[6629])

	for _, withNames := range []bool{false, true} {
		opts := &tomcatconf.CensusOptions{Root: tomcatRoot(t)}
		if withNames {
			opts.Names = names
		}
		c, err := tomcatconf.TakeCensus(context.Background(), 6083, time.Millisecond, opts)
		require.NoError(t, err)
		assert.Len(t, c.Threads, 37)
		assert.Equal(t, "0-1", cpuset.Of(c.CPUs...).String())
		assert.Equal(t, 10, c.Count("http-nio-8937", tomcatconf.KindExec))
		assert.Equal(t, 1, c.Count("http-nio-8937", tomcatconf.KindPoller))
		assert.Equal(t, 1, c.Count("http-nio-8937", tomcatconf.KindAcceptor))
		assert.Equal(t, 2, c.Count("", tomcatconf.KindCompiler))
		// The same file read twice: no CPU used in between.
		for _, th := range c.Threads {
			assert.Zero(t, th.CPU, th.Name)
		}
		if withNames {
			for _, th := range c.Threads {
				if th.TID == 6629 {
					assert.Equal(t, "http-nio-8937-Poller", th.Name)
				}
			}
		}
	}
}

func TestRecommendArmGuide(t *testing.T) {
	// The guide's top -H under wrk2: 8 CPUs online, the Poller at 89% of
	// a CPU, the Acceptor at 4.7%, workers at 3%.
	c := tomcatconf.Census{CPUs: cpuset.Range(0, 7).IDs(), Threads: []tomcatconf.Thread{
		{TID: 4677, Name: "http-nio-8080-P", Kind: tomcatconf.KindPoller, Load: 0.89},
		{TID: 4685, Name: "http-nio-8080-A", Kind: tomcatconf.KindAcceptor, Load: 0.047},
		{TID: 4893, Name: "http-nio-8080-e", Kind: tomcatconf.KindExec, Load: 0.033},
		{TID: 4963, Name: "http-nio-8080-e", Kind: tomcatconf.KindExec, Load: 0.033},
		{TID: 4924, Name: "http-nio-8080-e", Kind: tomcatconf.KindExec, Load: 0.03},
	}}
	r := c.Recommend(0)
	assert.Equal(t, 7, r.MaxThreads)
	assert.Equal(t, 8, r.CPUs)
	require.Len(t, r.Busy, 1)
	assert.Equal(t, 4677, r.Busy[0].TID)
	assert.Equal(t, "8 CPUs available to the JVM (0-7) - 1 busy non-worker thread(s) (http-nio-8080-P 89%) = maxThreads 7", r.Reason)

	// One CPU and a busy Poller still leaves one worker.
	c.CPUs = []int{0}
	assert.Equal(t, 1, c.Recommend(0).MaxThreads)
}

func TestTakeCensusSelf(t *testing.T) {
	testutil.StableCPUs(t)
	// This process on this host: a goroutine spins on its own thread.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for ctx.Err() == nil {
		}
	}()
	c, err := tomcatconf.TakeCensus(context.Background(), os.Getpid(), 300*time.Millisecond, nil)
	cancel()
	<-done
	require.NoError(t, err)
	var mask unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &mask))
	assert.Equal(t, mask.Count(), len(c.CPUs), "this process's affinity, all of it online")
	assert.GreaterOrEqual(t, len(c.Threads), 2)
	var total time.Duration
	for _, p := range c.Pools {
		total += p.CPU
	}
	assert.Positive(t, total, "the spinning thread used CPU")
	assert.GreaterOrEqual(t, c.Interval, 300*time.Millisecond)
}

// TestCensusSinceSelf: two readings around a wait give the threads'
// context switches: a thread that sleeps and wakes 20 times gave up its
// CPU at least 20 times; the pools sum their threads.
func TestCensusSinceSelf(t *testing.T) {
	ready, sleeper := make(chan struct{}), make(chan int, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		sleeper <- unix.Gettid()
		<-ready
		for range 20 {
			time.Sleep(2 * time.Millisecond)
		}
		sleeper <- 0
	}()
	tid := <-sleeper
	before, err := tomcatconf.ReadThreads(os.Getpid(), nil)
	require.NoError(t, err)
	close(ready)
	<-sleeper
	after, err := tomcatconf.ReadThreads(os.Getpid(), nil)
	require.NoError(t, err)
	c, err := after.CensusSince(before, nil)
	require.NoError(t, err)
	assert.Equal(t, after.At.Sub(before.At), c.Interval)
	var th tomcatconf.Thread
	var vol, invol int64
	for _, x := range c.Threads {
		if x.TID == tid {
			th = x
		}
		vol += x.VoluntarySwitches
		invol += x.InvoluntarySwitches
	}
	require.Equal(t, tid, th.TID, "the sleeping thread is in the census")
	assert.GreaterOrEqual(t, th.VoluntarySwitches, int64(20), "20 sleeps, 20 waits at least")
	var pvol, pinvol int64
	for _, p := range c.Pools {
		pvol += p.VoluntarySwitches
		pinvol += p.InvoluntarySwitches
	}
	assert.Equal(t, vol, pvol)
	assert.Equal(t, invol, pinvol)

	other := before
	other.PID++
	_, err = after.CensusSince(other, nil)
	assert.ErrorContains(t, err, "want one process, in order")
	_, err = before.CensusSince(after, nil)
	assert.ErrorContains(t, err, "want one process, in order")
}

func TestTakeCensusNoProcess(t *testing.T) {
	_, err := tomcatconf.TakeCensus(context.Background(), 6083, time.Millisecond, &tomcatconf.CensusOptions{Root: "/"})
	if err == nil {
		t.Skip("PID 6083 exists on this host")
	}
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "/proc/6083/")
}
