//go:build linux

package numa_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/numa"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freeLine matches the numactl lines that move between two reads.
var freeLine = regexp.MustCompile(`(?m)^node \d+ free: .*$`)

// TestIntegrationHostMatchesNumactl compares discovery of this machine's
// /sys with Debian's numactl, line for line except free memory. Node size
// can move too on a VM whose balloon driver is active, so a mismatch only
// in size lines is retried a few times.
func TestIntegrationHostMatchesNumactl(t *testing.T) {
	testutil.StableCPUs(t)
	bin, err := exec.LookPath("numactl")
	if err != nil {
		t.Skip("skipped: numactl not installed (apt-get install numactl)")
	}
	h := numa.NewDefault()
	var want, got string
	for attempt := 0; attempt < 5; attempt++ {
		out, err := exec.Command(bin, "-H").Output()
		require.NoError(t, err)
		topo, err := h.Topology()
		require.NoError(t, err)
		want = freeLine.ReplaceAllString(string(out), "node N free: (varies)")
		got = freeLine.ReplaceAllString(topo.Numactl(), "node N free: (varies)")
		if want == got {
			break
		}
	}
	assert.Equal(t, want, got)
	t.Logf("numactl -H and numa agree:\n%s", got)
}

// TestIntegrationHostMatchesLscpu compares the lscpu NUMA lines of this
// machine with util-linux's lscpu (piped, so flat).
func TestIntegrationHostMatchesLscpu(t *testing.T) {
	testutil.StableCPUs(t)
	bin, err := exec.LookPath("lscpu")
	if err != nil {
		t.Skip("skipped: lscpu not installed (util-linux)")
	}
	out, err := exec.Command(bin).Output()
	require.NoError(t, err)
	want := numaSection(string(out))
	_, topo := topologyAt(t, "/")
	var b strings.Builder
	require.NoError(t, topo.WriteLscpu(&b, &numa.LscpuOptions{Width: valueColumn(t, want)}))
	assert.Equal(t, want, b.String())
}

// TestIntegrationHostDevices resolves every interface of this machine and
// checks the result against the files it came from.
func TestIntegrationHostDevices(t *testing.T) {
	h := numa.NewDefault()
	topo, err := h.Topology()
	require.NoError(t, err)
	ents, err := os.ReadDir("/sys/class/net")
	require.NoError(t, err)
	for _, e := range ents {
		d, err := h.NetDevice(e.Name())
		require.NoError(t, err, e.Name())
		_, statErr := os.Stat(filepath.Join("/sys/class/net", e.Name(), "device"))
		assert.Equal(t, statErr != nil, d.Virtual, "%s: virtual iff no device link", e.Name())
		if d.Virtual {
			continue
		}
		if hostfs.Exists(filepath.Join(d.Path, "numa_node")) {
			n, err := hostfs.ReadInt(filepath.Join(d.Path, "numa_node"))
			require.NoError(t, err)
			assert.Equal(t, int(n), d.Node, e.Name())
		}
		node, err := topo.DeviceNode(d)
		if len(topo.Nodes) == 1 {
			require.NoError(t, err)
			assert.Equal(t, topo.Nodes[0].ID, node)
		}
		t.Logf("%s: node %d via %s, local cpus %q", e.Name(), d.Node, d.Path, d.LocalCPUs.String())
	}
	lo, err := h.NetDevice("lo")
	require.NoError(t, err)
	assert.True(t, lo.Virtual)
}

// startChild starts a long sleep that the test owns and kills by PID.
func startChild(t *testing.T, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return pid
}

// statusCPUs reads Cpus_allowed_list of one thread from procfs.
func statusCPUs(t *testing.T, pid, tid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^Cpus_allowed_list:\s*(\S*)$`).FindSubmatch(b)
	require.NotNil(t, m)
	return string(m[1])
}

// TestIntegrationPinChild pins a child process to cpu0 and reads the
// affinity back from /proc/PID/status, then restores it. Pinning one's own
// child needs no privilege.
func TestIntegrationPinChild(t *testing.T) {
	testutil.StableCPUs(t)
	pid := startChild(t, "sleep", "30")
	h := numa.NewDefault()
	before, err := h.AllowedCPUs(pid)
	require.NoError(t, err)

	prev, err := h.Pin(pid, numa.CPUs(0))
	require.NoError(t, err)
	require.Len(t, prev.Threads, 1)
	assert.Equal(t, pid, prev.Threads[0].TID)
	assert.Equal(t, before, prev.Threads[0].CPUs, "Pin returns the affinity from before")
	now, err := h.AllowedCPUs(pid)
	require.NoError(t, err)
	assert.Equal(t, "0", now.String())
	assert.Equal(t, "0", statusCPUs(t, pid, pid))
	got, err := numa.ThreadCPUs(pid)
	require.NoError(t, err)
	assert.Equal(t, "0", got.String())

	require.NoError(t, h.RestoreAffinity(prev))
	after, err := h.AllowedCPUs(pid)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	// A mask wider than unix.CPUSet's 1024 bits goes through: the kernel
	// keeps the CPUs it has (cpu0) and ignores ids beyond nr_cpu_ids.
	prev, err = h.Pin(pid, numa.CPUs(0, 2000))
	require.NoError(t, err)
	assert.Equal(t, "0", statusCPUs(t, pid, pid))
	require.NoError(t, h.RestoreAffinity(prev))
}

// TestIntegrationPinAllThreads pins a multi-threaded child (this test
// binary re-run as a helper: the Go runtime keeps several OS threads) and
// checks every /proc/PID/task/TID.
func TestIntegrationPinAllThreads(t *testing.T) {
	testutil.StableCPUs(t)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^TestHelperThreads$")
	cmd.Env = append(os.Environ(), "NUMA_HELPER_THREADS=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	buf := make([]byte, 6)
	_, err = stdout.Read(buf) // the helper writes "ready\n" once its threads run
	require.NoError(t, err)

	h := numa.NewDefault()
	topo, err := h.Topology()
	require.NoError(t, err)
	target := topo.Online.First(1)
	if topo.Online.Len() > 1 {
		target = numa.CPUs(topo.Online.IDs()[1]) // not cpu0: prove it is our doing
	}
	prev, err := h.Pin(pid, target)
	require.NoError(t, err)
	require.Greater(t, len(prev.Threads), 1, "the helper runs several threads")
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	require.NoError(t, err)
	for _, task := range tasks {
		var tid int
		_, err := fmt.Sscan(task.Name(), &tid)
		require.NoError(t, err)
		assert.Equal(t, target.String(), statusCPUs(t, pid, tid), "thread %d", tid)
	}
	aff, err := h.Affinity(pid)
	require.NoError(t, err)
	for _, th := range aff.Threads {
		assert.Equal(t, target, th.CPUs, "thread %d", th.TID)
	}
	require.NoError(t, h.RestoreAffinity(prev))
	aff, err = h.Affinity(pid)
	require.NoError(t, err)
	was := map[int]numa.CPUSet{}
	for _, th := range prev.Threads {
		was[th.TID] = th.CPUs
	}
	for _, th := range aff.Threads {
		if w, ok := was[th.TID]; ok {
			assert.Equal(t, w, th.CPUs, "thread %d restored", th.TID)
		}
	}
}

// TestHelperThreads is not a test: TestIntegrationPinAllThreads runs the
// test binary with NUMA_HELPER_THREADS=1 to get a multi-threaded child.
func TestHelperThreads(t *testing.T) {
	if os.Getenv("NUMA_HELPER_THREADS") != "1" {
		t.Skip("helper process for TestIntegrationPinAllThreads")
	}
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			// Blocking syscalls make the runtime start more OS threads.
			for {
				select {
				case <-stop:
					return
				default:
					time.Sleep(time.Millisecond)
					syscall.Getpid()
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let the runtime spawn its threads
	fmt.Println("ready")
	time.Sleep(30 * time.Second) // bounded: the parent kills us long before
	close(stop)
}

// TestIntegrationPinErrors: an offline or absent CPU is refused with
// EINVAL and the process keeps its affinity; a gone process is
// os.ErrNotExist.
func TestIntegrationPinErrors(t *testing.T) {
	testutil.StableCPUs(t)
	pid := startChild(t, "sleep", "30")
	h := numa.NewDefault()
	before, err := h.AllowedCPUs(pid)
	require.NoError(t, err)
	_, err = h.Pin(pid, numa.CPUs(4000))
	require.ErrorIs(t, err, syscall.EINVAL)
	var ae *numa.AffinityError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, pid, ae.PID)
	assert.Contains(t, err.Error(), `"4000"`)
	after, err := h.AllowedCPUs(pid)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a refused pin changes nothing")

	_, err = h.Pin(pid, numa.CPUSet{})
	assert.ErrorIs(t, err, syscall.EINVAL)

	_, err = h.Pin(1<<22+12345, numa.CPUs(0))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = numa.ThreadCPUs(1<<22 + 12345)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// pinPermHelperEnv, set only on the child TestIntegrationPinPermission
// starts, holds the PID that child must fail to pin.
const pinPermHelperEnv = "NETTUNE_NUMA_EPERM_PID"

// TestIntegrationPinPermission: without CAP_SYS_NICE, pinning another
// user's process fails with os.ErrPermission and changes nothing. As root
// (CI), the test starts a sleep it owns and runs its own body in a copy of
// this test binary lowered to nobody with setpriv(1) (util-linux): no
// capabilities, other uid, so the kernel refuses for real. As another
// user it pins init directly.
func TestIntegrationPinPermission(t *testing.T) {
	if v := os.Getenv(pinPermHelperEnv); v != "" {
		// The unprivileged child: the parent holds the CPU lock.
		pid, err := strconv.Atoi(v)
		require.NoError(t, err)
		require.NotZero(t, os.Geteuid(), "the helper runs unprivileged")
		assertPinRefused(t, pid)
		return
	}
	testutil.StableCPUs(t)
	if os.Geteuid() != 0 {
		assertPinRefused(t, 1)
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("setpriv (util-linux) not found; CI installs it: %v", err)
		}
		t.Skip("skipped: setpriv (util-linux) not installed, so root cannot run the test unprivileged")
	}
	pid := startChild(t, "sleep", "30")
	before, err := numa.ThreadCPUs(pid)
	require.NoError(t, err)
	// The child is this test binary, copied where nobody can run it.
	dir, err := os.MkdirTemp("", "nettune-numa-eperm-")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, os.RemoveAll(dir)) })
	require.NoError(t, os.Chmod(dir, 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	self, err := os.ReadFile(exe)
	require.NoError(t, err)
	bin := filepath.Join(dir, "numa.test")
	require.NoError(t, os.WriteFile(bin, self, 0o755))
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
		"env", pinPermHelperEnv+"="+strconv.Itoa(pid), bin,
		"-test.run", "^TestIntegrationPinPermission$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "unprivileged child:\n%s", out)
	t.Logf("unprivileged child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestIntegrationPinPermission", "the child ran the check, not a skip")
	after, err := numa.ThreadCPUs(pid)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the refused pin changed nothing")
}

// assertPinRefused pins pid to cpu0 and expects the kernel's EPERM, as
// os.ErrPermission in an *AffinityError naming the process.
func assertPinRefused(t *testing.T, pid int) {
	t.Helper()
	_, err := numa.NewDefault().Pin(pid, numa.CPUs(0))
	require.ErrorIs(t, err, os.ErrPermission)
	require.ErrorIs(t, err, syscall.EPERM)
	var ae *numa.AffinityError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, pid, ae.PID)
}

// TestIntegrationNumactlOnKernelTrees runs Debian's numactl -H on each tree
// of abiTrees, bind-mounted over /sys/devices/system/{node,cpu} in a
// private mount namespace (unshare -m: the host's mounts are untouched),
// and checks that it prints what TestKernelABITrees expects of it, so the
// fixtures' expected output is numactl's own, and where numactl is wrong
// (the distance row) that we differ from it.
func TestIntegrationNumactlOnKernelTrees(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tt := range abiTrees() {
		t.Run(tt.name, func(t *testing.T) {
			out, warn := testutil.RealNumactl(t, tt.write(t), "-H")
			assert.Equal(t, tt.numactl, out, "numactl -H on the tree")
			assert.Equal(t, tt.warning, warn, "numactl's stderr")
			if tt.ours != "" {
				assert.NotEqual(t, tt.numactl, tt.ours, "we differ from numactl only where it is wrong")
			}
		})
	}
}
