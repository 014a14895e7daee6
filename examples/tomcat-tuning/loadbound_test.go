//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
)

// helloWorldIn starts loadgen's HelloWorld listening inside the network
// namespace netns on addr: the listening socket is made on a thread
// switched into the namespace (a socket stays in the namespace it was
// made in), which then switches back. A thread that cannot switch back
// stays locked, so the runtime ends it.
func helloWorldIn(t *testing.T, netns, addr string) *loadgen.HelloWorld {
	t.Helper()
	target, err := os.Open(filepath.Join(netnsDir, netns))
	require.NoError(t, err)
	defer target.Close()
	var hw *loadgen.HelloWorld
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer orig.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		hw, err = loadgen.StartHelloWorld(addr)
		if serr := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); serr != nil {
			done <- fmt.Errorf("switch back: %w (thread left locked)", serr)
			return
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	require.NoError(t, <-done)
	t.Cleanup(func() { hw.Close() })
	return hw
}

// clientWorker returns an executable that runs bin as a worker inside
// the network namespace netns (nsenter --net, which keeps this host's
// /sys and so the cgroup mounts), pinned to CPU 0 (taskset) and, with
// throttle, in a cpu cgroup whose quota is 10 % of one CPU (cgroup v1
// cpu.cfs_quota_us, or v2 cpu.max) and whose weight is the highest: a
// client with far less CPU than the load it is offered needs, and all of
// that quota. t.Cleanup removes the cgroup.
func clientWorker(t *testing.T, bin, netns string, throttle bool) string {
	t.Helper()
	for _, tool := range []string{"taskset", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s (util-linux) not installed", tool)
		}
	}
	join := ""
	if throttle {
		name := fmt.Sprintf("nettune-loadbound-%d", os.Getpid())
		cg, file, quota := filepath.Join("/sys/fs/cgroup/cpu", name), "cpu.cfs_quota_us", "10000"
		weightFile, weight := "cpu.shares", "262144"
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
			cg, file, quota = filepath.Join("/sys/fs/cgroup", name), "cpu.max", "10000 100000"
			weightFile, weight = "cpu.weight", "10000"
		}
		if err := os.Mkdir(cg, 0o755); err != nil {
			t.Skipf("skipped: no cpu cgroup to throttle the worker: %v", err)
		}
		t.Cleanup(func() {
			if err := os.Remove(cg); err != nil {
				t.Errorf("remove cgroup %s: %v", cg, err)
			}
		})
		require.NoError(t, os.WriteFile(filepath.Join(cg, file), []byte(quota), 0o644))
		// The highest weight: on a CPU busy with other tests the quota,
		// not the neighbours, is what holds the worker back. At the
		// default weight a gate run gave it 84 % of its quota, under the
		// CPU verdict's 90 %.
		require.NoError(t, os.WriteFile(filepath.Join(cg, weightFile), []byte(weight), 0o644))
		join = fmt.Sprintf("echo $$ > %s/cgroup.procs || exit 1\n", cg)
	}
	script := filepath.Join(t.TempDir(), "client-worker")
	require.NoError(t, os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\n%sexec nsenter --net=%s taskset -c 0 %s \"$@\"\n",
		join, filepath.Join(netnsDir, netns), bin)), 0o755))
	return script
}

// TestIntegrationLoadBoundWorker: a worker in a client namespace pinned
// to one CPU, offered a light load, is not marked load-bound; pinned and
// held to a tenth of that CPU by its cgroup's quota, offered far more
// than it can send, it is, by its CPU use against its quota.
func TestIntegrationLoadBoundWorker(t *testing.T) {
	testutil.RequireHostTests(t)
	bin := program(t)
	n := newStudyNetNS(t)
	t.Cleanup(func() { assert.Empty(t, workerProcs(t, bin), "a load worker was left running") })
	hw := helloWorldIn(t, n.srv, n.srvAddr+":0")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	light, err := remoteload.NetNSLoad{Exe: clientWorker(t, bin, n.cli, false)}.Run(ctx, loadgen.Config{URL: hw.URL, Rate: 100, Connections: 4, Duration: 1500 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, 1, light.Generator.CPUs, "the worker runs pinned to one CPU")
	t.Logf("light: %.0f req/s of %.0f, generator CPU %.1f %%, %s", light.AchievedRate, light.OfferedRate, light.Generator.Percent(), loadgen.LoadBound(light))
	assert.Empty(t, loadgen.LoadBound(light), "100 req/s is well within the worker's means")

	// The quota is a ceiling: on a host busy with other tests the worker
	// may get less than it, and then its CPU says nothing of the quota.
	// Such a run is measured again, at most twice.
	var heavy *loadgen.Result
	for attempt := 1; ; attempt++ {
		heavy, err = remoteload.NetNSLoad{Exe: clientWorker(t, bin, n.cli, true)}.Run(ctx, loadgen.Config{URL: hw.URL, Rate: 40000, Connections: 8, Duration: 1500 * time.Millisecond})
		require.NoError(t, err)
		if heavy.Generator.Percent() >= 90 {
			break
		}
		if attempt == 3 {
			t.Skipf("skipped: the host is too busy: the worker got %.1f %% of its quota in 3 runs", heavy.Generator.Percent())
		}
		t.Logf("attempt %d: the worker got %.1f %% of its quota (the host is busy): again", attempt, heavy.Generator.Percent())
	}
	lag := time.Duration(heavy.Histograms.Lag.ValueAtQuantile(99)) * time.Microsecond
	t.Logf("heavy: %.0f req/s of %.0f, generator CPU %.1f %% of %d, lag p99 %s, missed %d: %q",
		heavy.AchievedRate, heavy.OfferedRate, heavy.Generator.Percent(), heavy.Generator.CPUs, lag, heavy.Missed, loadgen.LoadBound(heavy))
	assert.Equal(t, 1, heavy.Generator.CPUs)
	assert.InDelta(t, 0.1, heavy.Generator.Quota, 1e-9, "the worker read its cgroup's quota")
	assert.Contains(t, loadgen.LoadBound(heavy), "load-bound: client CPU")
	assert.Contains(t, loadgen.LoadBound(heavy), "of its 0.1-core quota, lag p99")
}
