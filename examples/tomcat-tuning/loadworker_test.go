//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// assertSameResult checks what the study takes from a Result (its
// figures, the errors, Missed, Elapsed) and the corrected latency
// histogram survived the worker's JSON.
func assertSameResult(t *testing.T, want, got *loadgen.Result) {
	t.Helper()
	assert.Equal(t, loadgen.FiguresOf("x", want), loadgen.FiguresOf("x", got))
	assert.Equal(t, want.AchievedRate, got.AchievedRate)
	assert.Equal(t, want.OfferedRate, got.OfferedRate)
	assert.Equal(t, want.Requests, got.Requests)
	assert.Equal(t, want.Sent, got.Sent)
	assert.Equal(t, want.Missed, got.Missed)
	assert.Equal(t, want.Incomplete, got.Incomplete)
	assert.Equal(t, want.Dropped, got.Dropped)
	assert.Equal(t, want.Elapsed, got.Elapsed)
	assert.Equal(t, want.Connections, got.Connections)
	assert.Equal(t, want.Pacer, got.Pacer)
	assert.Equal(t, want.Errors.Socket(), got.Errors.Socket())
	assert.Equal(t, want.Errors.Status, got.Errors.Status)
	assert.ElementsMatch(t, want.Errors.Errnos, got.Errors.Errnos)
	assert.True(t, want.Start.Equal(got.Start), "start %s, want %s", got.Start, want.Start)
	for name, pair := range map[string][2]interface {
		TotalCount() int64
		ValueAtQuantile(float64) int64
		Max() int64
		Mean() float64
	}{
		"latency": {want.Histograms.Latency, got.Histograms.Latency},
		"service": {want.Histograms.Service, got.Histograms.Service},
	} {
		w, g := pair[0], pair[1]
		assert.Equal(t, w.TotalCount(), g.TotalCount(), name)
		for _, q := range []float64{50, 90, 99, 99.9, 100} {
			assert.Equal(t, w.ValueAtQuantile(q), g.ValueAtQuantile(q), "%s p%g", name, q)
		}
		assert.Equal(t, w.Max(), g.Max(), name)
		assert.Equal(t, w.Mean(), g.Mean(), name)
	}
}

// TestWorkerResultJSONFaithful: a Result written as the worker writes it
// (report.WriteJSON) and read as the study reads it back
// (report.ReadResultJSON) keeps throughput, corrected percentiles,
// errors, Missed and Elapsed: for a real open-model run and for one with
// every error count and Missed set.
func TestWorkerResultJSONFaithful(t *testing.T) {
	hw, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Config{URL: hw.URL, Rate: 400, Connections: 4, Duration: 500 * time.Millisecond})
	require.NoError(t, err)
	require.NotZero(t, res.Requests)

	synthetic := &loadgen.Result{URL: "http://10.213.13.1:8013/", Method: "GET", Connections: 64, Threads: 2,
		KeepAlive: true, Pacer: "constant 2000/s", OfferedRate: 2000, AchievedRate: 1234.567891234,
		Start: time.Date(2026, 12, 3, 8, 1, 2, 987654321, time.UTC), Elapsed: 5*time.Second + 123456789,
		Requests: 6172, Sent: 6200, Missed: 3828, Incomplete: 28, Dropped: 2,
		Errors: loadgen.Errors{Connect: 5, Read: 4, Write: 3, Timeout: 2, Status: 1,
			Errnos: []loadgen.ErrnoCount{{Class: "connect", Errno: "ECONNREFUSED", Count: 5}, {Class: "read", Errno: "ECONNRESET", Count: 4}}},
		Histograms: loadgen.Histograms{Latency: loadgen.NewHistogram(), Service: loadgen.NewHistogram()},
	}
	for i := int64(1); i <= 6172; i++ {
		require.NoError(t, synthetic.Histograms.Latency.RecordValue(i*37%250000+120))
		require.NoError(t, synthetic.Histograms.Service.RecordValue(i%900+80))
	}

	for name, want := range map[string]*loadgen.Result{"run": res, "synthetic": synthetic} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, report.WriteJSON(&buf, want))
			got, err := report.ReadResultJSON(&buf)
			require.NoError(t, err)
			assertSameResult(t, want, got)
		})
	}
}

// TestLoadWorkerRejectsBadRequest: the worker refuses a request that is
// not the study's JSON, and says where it looked.
func TestLoadWorkerRejectsBadRequest(t *testing.T) {
	var out bytes.Buffer
	err := remoteload.RunWorker(context.Background(), strings.NewReader(`{"url":"http://127.0.0.1:1/","rate_per_s":5}`), &out)
	assert.ErrorContains(t, err, "standard input: loadgen: read a load Config (JSON)")
	assert.ErrorContains(t, err, "rate_per_s")
	assert.Zero(t, out.Len())
}

// workerProcs returns the PIDs of processes running bin (by
// /proc/PID/exe) as a load worker (its last argument remoteload.WorkerArg).
// The package's lanes run studies of the same binary beside each other
// (lanes_test.go): a study is not a worker, and a test ends only the
// workers its own lane started.
func workerProcs(t *testing.T, bin string) []int {
	t.Helper()
	return pidsWhere(t, func(dir string) bool {
		exe, err := os.Readlink(filepath.Join(dir, "exe"))
		if err != nil || strings.TrimSuffix(exe, " (deleted)") != bin {
			return false
		}
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		return err == nil && strings.HasSuffix(string(cmdline), "\x00"+remoteload.WorkerArg+"\x00")
	})
}

// pidsWhere returns the PIDs in /proc whose directory satisfies match.
func pidsWhere(t *testing.T, match func(dir string) bool) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && match(filepath.Join("/proc", e.Name())) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitWorker polls /proc (bounded) until a process runs bin as a load
// worker, and returns its PID.
func waitWorker(t *testing.T, bin string, done <-chan struct{}) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if pids := workerProcs(t, bin); len(pids) > 0 {
			return pids[0]
		}
		select {
		case <-done:
			t.Fatal("the load ended before its worker was seen")
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("no load worker appeared in /proc within 30s")
	return 0
}

// TestLoadWorkerProcess runs loads through the study's binary in worker
// mode, in this network namespace: the Result comes back, a failing
// worker's message reaches the error, and cancelling the context stops
// the worker, which /proc then no longer shows.
func TestLoadWorkerProcess(t *testing.T) {
	bin := program(t)
	require.Empty(t, workerProcs(t, bin), "no worker before the test")
	t.Cleanup(func() { assert.Empty(t, workerProcs(t, bin), "a worker was left running") })
	hw, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	l := remoteload.NetNSLoad{Exe: bin}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	res, err := l.Run(ctx, loadgen.Config{URL: hw.URL, Rate: 300, Connections: 4, Duration: 700 * time.Millisecond})
	require.NoError(t, err)
	assert.NotZero(t, res.Requests)
	assert.Zero(t, res.Errors.Socket()+res.Errors.Status)
	assert.Equal(t, "constant 300/s", res.Pacer)
	assert.Equal(t, hw.URL, res.URL)
	assert.Equal(t, 4, res.Connections)
	assert.NotZero(t, res.Histograms.Latency.TotalCount())

	_, err = l.Run(ctx, loadgen.Config{URL: "ftp://127.0.0.1:1/", Duration: time.Second})
	assert.ErrorContains(t, err, "want an http:// or https:// URL", "the worker's own message")
	assert.ErrorContains(t, err, "exit status 1")

	_, err = remoteload.NetNSLoad{Exe: filepath.Join(t.TempDir(), "missing")}.Run(ctx, loadgen.Config{URL: hw.URL, Duration: time.Second})
	assert.ErrorContains(t, err, "no such file")

	// Cancelled while it runs a long load: stopped, waited for, gone.
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		_, runErr = l.Run(lctx, loadgen.Config{URL: hw.URL, Rate: 50, Connections: 2, Duration: time.Minute})
	}()
	pid := waitWorker(t, bin, done)
	lcancel()
	<-done
	require.ErrorIs(t, runErr, context.Canceled)
	assert.ErrorContains(t, runErr, "in this network namespace")
	_, err = os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	assert.True(t, os.IsNotExist(err), "worker %d still in /proc after run returned", pid)
}

// TestLoadWorkerSessionEnd: a worker exits when its standard input ends
// after the Config (the study's pipe or ssh session closed), without a
// signal, and says why; a worker whose input stays open reports its own
// CPU use with the Result.
func TestLoadWorkerSessionEnd(t *testing.T) {
	bin := program(t)
	t.Cleanup(func() { assert.Empty(t, workerProcs(t, bin), "a worker was left running") })
	hw, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })

	res, err := remoteload.NetNSLoad{Exe: bin}.Run(context.Background(), loadgen.Config{URL: hw.URL, Rate: 200, Connections: 2, Duration: 500 * time.Millisecond})
	require.NoError(t, err, "the pipe stays open until the Result")
	assert.Greater(t, res.Generator.CPUs, 0, "the worker's CPUs")
	// The open loop's last send is due one interval (5 ms at 200/s)
	// before the window's end, and the run may end with its response.
	assert.GreaterOrEqual(t, res.Generator.Wall, 500*time.Millisecond-time.Second/200)
	assert.Greater(t, res.Generator.CPU, time.Duration(0))

	cmd := exec.Command(bin, remoteload.WorkerArg)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // by PID; a no-op once it exited
	})
	require.NoError(t, loadgen.WriteConfigJSON(stdin, loadgen.Config{URL: hw.URL, Rate: 20, Connections: 2, Duration: time.Minute}))
	pid := waitWorker(t, bin, nil)
	require.Equal(t, cmd.Process.Pid, pid)
	require.NoError(t, stdin.Close())
	select {
	case err := <-exited:
		require.Error(t, err)
		assert.Contains(t, stderr.String(), "session ended")
	case <-time.After(20 * time.Second):
		t.Fatalf("the worker ran on 20s after its standard input closed")
	}
}
