//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/tuning"
)

// studyNetNS is a server and a client network namespace the test created,
// joined by a veth pair with 8 rx and 8 tx queues on each side: the
// guide's two machines and their NIC, on one host.
type studyNetNS struct {
	srv, cli         string // namespace names (ip netns)
	srvIf, cliIf     string
	srvAddr, cliAddr string
}

// netnsDir is where `ip netns add` keeps its named network namespaces.
const netnsDir = "/run/netns"

func (n studyNetNS) path(name string) string { return filepath.Join(netnsDir, name) }

// ip runs ip(8) with args and fails the test on an error.
func ip(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newStudyNetNS creates the namespaces and the veth pair, addresses in
// 10.213.13.0/24, everything up. t.Cleanup deletes the namespaces (the
// veth goes with them), also when the test fails, after checking that
// no process is left inside them.
func newStudyNetNS(t *testing.T) studyNetNS {
	t.Helper()
	testutil.RequireHostTests(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: ip (iproute2) not installed")
	}
	n := studyNetNS{
		srv: fmt.Sprintf("nettune-srv-%d", os.Getpid()), cli: fmt.Sprintf("nettune-cli-%d", os.Getpid()),
		srvIf: "ntsrv0", cliIf: "ntcli0", srvAddr: "10.213.13.1", cliAddr: "10.213.13.2",
	}
	for _, name := range []string{n.srv, n.cli} {
		ip(t, "netns", "add", name)
		t.Cleanup(func() {
			assert.Empty(t, procsInNetNS(t, n.path(name)), "processes left in network namespace %s", name)
			if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
				t.Errorf("ip netns del %s: %v\n%s", name, err, out)
			}
			_, err := os.Stat(n.path(name))
			assert.True(t, os.IsNotExist(err), "%s still exists", n.path(name))
		})
	}
	ip(t, "-n", n.srv, "link", "add", n.srvIf, "numtxqueues", "8", "numrxqueues", "8",
		"type", "veth", "peer", "name", n.cliIf, "numtxqueues", "8", "numrxqueues", "8")
	ip(t, "-n", n.srv, "link", "set", n.cliIf, "netns", n.cli)
	ip(t, "-n", n.srv, "addr", "add", n.srvAddr+"/24", "dev", n.srvIf)
	ip(t, "-n", n.cli, "addr", "add", n.cliAddr+"/24", "dev", n.cliIf)
	for _, ns := range [][2]string{{n.srv, n.srvIf}, {n.cli, n.cliIf}} {
		ip(t, "-n", ns[0], "link", "set", "lo", "up")
		ip(t, "-n", ns[0], "link", "set", ns[1], "up")
	}
	return n
}

// procsInNetNS returns the PIDs whose network namespace is the one bound
// at path (by the nsfs inode /proc/PID/ns/net points to).
func procsInNetNS(t *testing.T, path string) []int {
	t.Helper()
	var want syscall.Stat_t
	if err := syscall.Stat(path, &want); err != nil {
		t.Errorf("stat %s: %v", path, err)
		return nil
	}
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st) == nil && st.Ino == want.Ino && st.Dev == want.Dev {
			pids = append(pids, pid)
		}
	}
	return pids
}

// onlyLeft waits up to 10 s for the processes in the network namespace
// bound at path to be only pids (a session's sshd child ends just after
// the client closed its connection), and asserts they are.
func onlyLeft(t *testing.T, path string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	got := procsInNetNS(t, path)
	for !slices.Equal(got, pids) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		got = procsInNetNS(t, path)
	}
	assert.Equal(t, pids, got, "processes left in the namespace at %s", path)
}

// rxPackets reads /sys/class/net/IF/statistics/rx_packets inside the
// namespace (ip netns exec mounts the namespace's sysfs).
func rxPackets(t *testing.T, netns, ifname string) uint64 {
	t.Helper()
	out := ip(t, "netns", "exec", netns, "cat", filepath.Join("/sys/class/net", ifname, "statistics", "rx_packets"))
	v, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	require.NoError(t, err, out)
	return v
}

// nsChannels reads ifname's channels inside the namespace with Debian's
// ethtool -l, an observer independent of the study. (A nic.Client with
// Options.NetNS would enter the namespace on a thread of this process;
// should that be the main thread, the runtime keeps it, and the process
// would stay in the namespace.)
func nsChannels(t *testing.T, netns, ifname string) (nic.Channels, error) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", netns, "ethtool", "-l", ifname).CombinedOutput()
	if err != nil {
		return nic.Channels{}, fmt.Errorf("ethtool -l %s in %s: %w: %s", ifname, netns, err, out)
	}
	name, ch, err := nic.ParseChannels(bytes.NewReader(out))
	if err == nil && name != ifname {
		err = fmt.Errorf("ethtool -l %s printed channels of %q", ifname, name)
	}
	return ch, err
}

// jvmPIDsOf returns the PIDs of JVMs started with catalina.base = base.
func jvmPIDsOf(t *testing.T, base string) []int {
	t.Helper()
	return pidsWhere(t, func(dir string) bool {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		return err == nil && bytes.Contains(cmdline, []byte("-Dcatalina.base="+base+"\x00"))
	})
}

// syncBuffer is a bytes.Buffer safe for a command's output while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testStudyNICQueuesNetNS runs the study as the guide's
// nic-queues step meant it: Tomcat in a server namespace, the load from a
// client namespace across a veth pair with 8 queues. The study must find
// the server's veth from the URL's address, set its rx/tx channels to the
// CPUs Tomcat gets while it measures, measure over the veth (its rx
// counters grow by more than the requests offered), put the channels back
// and leave no JVM and no load worker behind. The search measures the
// user's queue counts (-queues-candidates 1,2). irq:spread, beside it, is
// skipped: the veth has queues but raises no queue interrupts.
func testStudyNICQueuesNetNS(t *testing.T) {
	testutil.RequireHostTests(t)
	testutil.StableCPUs(t)
	bin := program(t)
	in, port, orig := tomcatBase(t)
	n := newStudyNetNS(t)
	t.Cleanup(func() {
		assert.Empty(t, jvmPIDsOf(t, in.Base), "a JVM of %s was left running", in.Base)
		assert.Empty(t, workerProcs(t, bin), "a load worker was left running")
	})
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("skipped: ethtool not installed")
	}
	before, err := nsChannels(t, n.srv, n.srvIf)
	require.NoError(t, err)
	require.Equal(t, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}, before)
	rxBefore := rxPackets(t, n.srv, n.srvIf)

	const rate, duration = 300, 1500 * time.Millisecond
	url := fmt.Sprintf("http://%s:%d%s", n.srvAddr, port, loadgen.HelloWorldPath)
	journal := filepath.Join(t.TempDir(), "netns.journal")
	jsonOut := filepath.Join(t.TempDir(), "steps.json")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-apply",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port), "-url", url,
		"-load-netns", n.cli, "-steps", "cpus,open-files,nic-queues,irq:spread", "-queues-candidates", "1,2",
		"-repeat", "2", "-duration", duration.String(), "-warmup", "1s", "-latency-rate", strconv.Itoa(rate), "-connections", "8",
		"-journal", journal, "-json", jsonOut)
	cmd.Env = cleanEnv()
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// The channels as the study leaves them while it runs, polled until
	// it exits (bounded by ctx).
	seen := map[nic.Channels]bool{}
	var runErr error
poll:
	for {
		select {
		case runErr = <-exited:
			break poll
		case <-time.After(100 * time.Millisecond):
			if ch, err := nsChannels(t, n.srv, n.srvIf); err == nil {
				seen[ch] = true
			}
		}
	}
	text := out.String()
	t.Logf("ip netns exec %s tomcat-tuning …\n%s", n.srv, text)
	require.NoError(t, runErr)

	m := regexp.MustCompile(`Tomcat CPUs: \S+ \((\d+), by`).FindStringSubmatch(text)
	require.NotNil(t, m, "no CPU count in the output")
	cpus, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	want := uint32(min(cpus, 8))

	assert.Contains(t, text, fmt.Sprintf("%s holds %s (from %s)", n.srvIf, n.srvAddr, url))
	assert.Contains(t, text, "load generator: network namespace "+n.cli)
	// The client namespace is on this host: -cpu-method auto splits the
	// CPUs, and the load runs on none of Tomcat's.
	assert.Contains(t, text, "CPU method: affinity (-cpu-method auto: the load runs on this host")
	assert.NotContains(t, text, "the load generator ran on Tomcat's CPUs")
	assert.Contains(t, text, fmt.Sprintf("ethtool -L %s rx %d tx %d: rx 8 -> %d, tx 8 -> %d", n.srvIf, want, want, want, want))
	assert.True(t, seen[nic.Channels{MaxRX: 8, MaxTX: 8, RX: want, TX: want}],
		"the study never set %s to rx %d tx %d; seen: %v", n.srvIf, want, want, seen)
	doc, steps := readDocument(t, jsonOut)
	assert.Equal(t, string(tuning.StatusReverted), steps["nic-queues"].Runner, "nic-queues")
	// The search over the queue counts (-search, the default): one queue is among
	// the candidates, set for real, and one count is kept.
	assert.Contains(t, text, "nic-queues: queues searched over")
	assert.True(t, seen[nic.Channels{MaxRX: 8, MaxTX: 8, RX: 1, TX: 1}], "the search never set %s to one queue; seen: %v", n.srvIf, seen)
	assert.Regexp(t, `kept queues=\d+: `, text)
	assert.Contains(t, text, "2 (-queues-candidates)", "the user's queue count is searched")
	assert.True(t, seen[nic.Channels{MaxRX: 8, MaxTX: 8, RX: 2, TX: 2}], "the search never set %s to the user's 2 queues; seen: %v", n.srvIf, seen)
	assert.Contains(t, text, "every change reverted")
	// A veth raises no queue interrupts: irq:spread is skipped, saying
	// so, before anything is measured for it.
	assert.Contains(t, text, n.srvIf+" is virtual (no device/): its traffic raises no queue interrupts to place")
	assert.Equal(t, study.StatusSkipped, steps["irq:spread"].Status, "irq:spread on a veth")

	// Both measurements ran over the veth: a request is at least one
	// packet received by the server's side, and over a second and a half
	// each at 300/s the load offered 900 (plus the warm-ups).
	assertMeasured(t, steps, 50, "baseline", "nic-queues")
	require.Len(t, doc.Searches, 1)
	assert.Equal(t, "nic-queues", doc.Searches[0].Step)
	rxAfter := rxPackets(t, n.srv, n.srvIf)
	t.Logf("%s received %d packets during the study", n.srvIf, rxAfter-rxBefore)
	assert.Greater(t, rxAfter-rxBefore, uint64(2*rate*duration.Seconds()),
		"%s received %d packets during the study", n.srvIf, rxAfter-rxBefore)

	after, err := nsChannels(t, n.srv, n.srvIf)
	require.NoError(t, err)
	assert.Equal(t, before, after, "channels put back")
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got, "server.xml as found")
	entries, err := tuning.ReadJournal(journal)
	require.NoError(t, err)
	kinds := map[string]bool{}
	for _, e := range entries {
		assert.True(t, e.Reverted, "journal entry %s not reverted", e.Step)
		kinds[e.Step] = true
	}
	assert.True(t, kinds[study.StepNICQueues], "the nic-queues change is journalled: %v", kinds)
	assert.Empty(t, jvmPIDsOf(t, in.Base), "no JVM left")
	assert.Empty(t, workerProcs(t, bin), "no load worker left")
}

// testLoadNetNSCancel runs a load worker in the client
// namespace against an address nobody answers on, and cancels it: the
// worker ran inside the namespace as the very process the study started
// (ip netns exec execs in place, so stopping that PID stops the load),
// and once run returns nothing is left in the namespace.
func testLoadNetNSCancel(t *testing.T) {
	testutil.RequireHostTests(t)
	bin := program(t)
	n := newStudyNetNS(t)
	t.Cleanup(func() { assert.Empty(t, workerProcs(t, bin), "a load worker was left running") })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := remoteload.NetNSLoad{NetNS: n.cli, Exe: bin}

	// Refused connections for a minute, unless cancelled.
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		_, runErr = l.Run(lctx, loadgen.Config{URL: "http://" + n.srvAddr + ":9/", Rate: 20, Connections: 2, Duration: time.Minute})
	}()
	pid := waitWorker(t, bin, done)
	assert.Equal(t, []int{pid}, procsInNetNS(t, n.path(n.cli)), "the worker runs in %s, alone", n.cli)
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	require.NoError(t, err)
	assert.Regexp(t, fmt.Sprintf(`(?m)^PPid:\s+%d$`, os.Getpid()), string(status), "the worker is the process the study started")
	lcancel()
	<-done
	require.ErrorIs(t, runErr, context.Canceled)
	assert.ErrorContains(t, runErr, "network namespace "+n.cli)
	assert.Empty(t, procsInNetNS(t, n.path(n.cli)), "nothing left in %s", n.cli)

	// A worker that cannot start in the namespace says which and why.
	_, err = remoteload.NetNSLoad{NetNS: n.cli + "-missing", Exe: bin}.Run(ctx, loadgen.Config{URL: "http://" + n.srvAddr + ":9/", Duration: time.Second})
	assert.ErrorContains(t, err, "network namespace "+n.cli+"-missing")
	assert.ErrorContains(t, err, "exit status")
}

// testLoadNetNSStudyKilled kills the study (SIGKILL, no chance
// to clean up) while its baseline load runs in the client namespace: the
// kernel ends the worker with it (PR_SET_PDEATHSIG, kept across ip netns
// exec's exec), so /proc shows no worker and the namespace is empty.
func testLoadNetNSStudyKilled(t *testing.T) {
	testutil.RequireHostTests(t)
	bin := program(t)
	n := newStudyNetNS(t)
	t.Cleanup(func() {
		// A worker that outlived the study is the test's to end, by PID
		// (the binary is this test's own build).
		for _, pid := range workerProcs(t, bin) {
			t.Errorf("load worker %d was left running: killing it", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Plan mode measures -url as the baseline; nobody answers on port 9,
	// so the load would run its whole minute.
	cmd := exec.CommandContext(ctx, bin, "-catalina-home", t.TempDir(), "-catalina-base", t.TempDir(),
		"-url", "http://"+n.srvAddr+":9/", "-load-netns", n.cli, "-warmup", "0s", "-duration", "60s",
		"-latency-rate", "20", "-connections", "2", "-steps", "nic-queues")
	cmd.Env = cleanEnv()
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	workers := make(chan struct{})
	pid := waitWorker(t, bin, workers)
	require.NotEqual(t, cmd.Process.Pid, pid)
	assert.Equal(t, []int{pid}, procsInNetNS(t, n.path(n.cli)))
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := <-exited
	exited <- err // for the cleanup
	t.Logf("tomcat-tuning (killed: %v)\n%s", err, out.String())
	assert.Contains(t, out.String(), "load generator: network namespace "+n.cli)

	// Bounded polling: the kernel signals the worker when the study dies
	// (then init reaps it).
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && (alive(pid) || len(procsInNetNS(t, n.path(n.cli))) > 0) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.False(t, alive(pid), "worker %d outlived the study", pid)
	assert.Empty(t, procsInNetNS(t, n.path(n.cli)), "processes left in %s", n.cli)
}

// alive reports whether pid is a process that runs: in /proc and not a
// zombie waiting for its new parent to reap it.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
