//go:build linux

package integration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/nspawn"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning/persist"
)

// tunedRunner runs tuned-adm (and anything else) inside the container.
type tunedRunner struct{ c *nspawn.Container }

func (r tunedRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return r.c.Run(ctx, nil, append([]string{name}, args...)...)
}

// unitRunner runs systemctl inside the container for tomcatconf.
type unitRunner struct{ c *nspawn.Container }

func (r unitRunner) Run(ctx context.Context, cmd tomcatconf.Command) ([]byte, error) {
	return r.c.Run(ctx, nil, append([]string{cmd.Path}, cmd.Args...)...)
}

// veth makes a veth pair with 8 rx and 8 tx queues: name in this host's
// namespace (systemd-nspawn moves it into the container at boot, and back
// out when the container stops), its peer in the namespace ns that the
// test owns, so nothing of it is in the host's namespace while a
// container runs. A pair of that name left by the last boot is deleted
// first: the new one has the counts a device has at boot, before anyone
// set them.
func veth(name, ns string) error {
	if exec.Command("ip", "link", "show", name).Run() == nil {
		if out, err := exec.Command("ip", "link", "del", name).CombinedOutput(); err != nil {
			return fmt.Errorf("ip link del %s: %w: %s", name, err, out)
		}
	}
	out, err := exec.Command("ip", "link", "add", "name", name, "numtxqueues", "8", "numrxqueues", "8",
		"type", "veth", "peer", "name", name+"p", "numtxqueues", "8", "numrxqueues", "8", "netns", ns).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip link add %s: %w: %s", name, err, out)
	}
	return nil
}

// jvm returns the container PID of tomcat10's main process once it is
// the JVM (Debian's tomcat-start.sh execs it), bounded.
func jvm(t *testing.T, ctx context.Context, c *nspawn.Container) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := c.Run(ctx, nil, "systemctl", "show", "-p", "MainPID", "--value", "tomcat10.service")
		require.NoError(t, err)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		if pid > 0 {
			b, err := os.ReadFile(filepath.Join(c.Root(), "proc", strconv.Itoa(pid), "cmdline"))
			if err == nil && strings.Contains(string(b), "-Dcatalina.base=/var/lib/tomcat10\x00") {
				return pid
			}
		}
		require.True(t, time.Now().Before(deadline), "tomcat10's main process is not a JVM after 2 minutes (MainPID %d)", pid)
		time.Sleep(200 * time.Millisecond)
	}
}

// procLine returns the line of the container's /proc/PID/FILE that
// starts with prefix.
func procLine(t *testing.T, c *nspawn.Container, pid int, file, prefix string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Root(), "proc", strconv.Itoa(pid), file))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	t.Fatalf("/proc/%d/%s has no %q line", pid, file, prefix)
	return ""
}

// ethtoolCurrent returns the "Current hardware settings" lines of
// `ethtool -l IF` run inside the container, as "RX 4 TX 4 ...".
func ethtoolCurrent(t *testing.T, ctx context.Context, c *nspawn.Container, ifname string) string {
	t.Helper()
	out, err := c.Run(ctx, nil, "ethtool", "-l", ifname)
	require.NoError(t, err)
	_, cur, ok := strings.Cut(string(out), "Current hardware settings:")
	require.True(t, ok, "%s", out)
	return strings.Join(strings.Fields(strings.ReplaceAll(cur, ":", "")), " ")
}

// TestIntegrationPersistSurvivesReboot persists a tuning in a systemd
// container with the library's writers, reboots it (the same overlay
// booted again), checks that what was persisted is in force, reverts with
// the values' Undo (as a journal would, newest first), reboots again and
// checks that all is as before:
//
//   - tuning: a tuned profile nettune-tomcat with a [sysctl] line,
//     activated with tuned-adm (the previous profile recorded); after the
//     reboot `tuned-adm active` names it, `tuned-adm verify` passes and the
//     sysctl holds; after the revert the previous profile is active and
//     the profile's directory is gone;
//   - tomcatconf: a persistent drop-in LimitNOFILE=12345 CPUAffinity=1
//     reaches tomcat10's JVM (/proc/PID/limits, Cpus_allowed_list) after
//     the reboot, and is gone after the revert (a runtime drop-in, the
//     code before, fails here: 20000 and 0-1 after the reboot);
//   - tuning, without tuned: /etc/sysctl.d/90-nettune.conf with
//     net.ipv4.tcp_max_tw_buckets = 4321 holds after the reboot
//     (systemd-sysctl), and the default after the revert;
//   - nic: the profile carries the [net] instance for a veth made with 8
//     rx and 8 tx queues and moved into the container at each boot; tuned
//     2.20 skips virtual devices, which the test checks in tuned's log
//     (see there).
//
// Three boots in all, about 25 s here once the image is built.
func TestIntegrationPersistSurvivesReboot(t *testing.T) {
	testutil.RequireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("skipped: ip (iproute2) not installed: %v", err)
	}
	// The drop-in pins the JVM to cpu1: no test may take it offline meanwhile.
	testutil.StableCPUs(t)
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err != nil || strings.TrimSpace(string(b)) == "0" {
		t.Skipf("skipped: the drop-in pins tomcat10 to cpu1, and this host has only cpu0 online (%q, %v)", b, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// The veth's peer lives in a namespace of this test.
	ns := fmt.Sprintf("nettune-i22-%d", os.Getpid())
	out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput()
	require.NoError(t, err, "ip netns add: %s", out)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("cleanup: ip netns del %s: %v: %s", ns, err, out)
		}
	})
	ifname := fmt.Sprintf("ntv%d", os.Getpid()%100000)
	// systemd-nspawn moves the veth back here when the container stops.
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", ifname).Run() })
	require.NoError(t, veth(ifname, ns))

	c := nspawn.ForTestContainer(t, func(c *nspawn.Container) error {
		c.Interfaces = []string{ifname}
		return nil
	})
	// The container's root is /proc/PID1/root, and PID1 changes with
	// every boot: the writers get a symlink to it, pointed at the new
	// PID 1 after each reboot, so the values planned at boot 1 (which
	// hold their paths, as a journal does) still undo after boot 2.
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Symlink(c.Root(), root))
	repoint := func() {
		require.NoError(t, os.Remove(root))
		require.NoError(t, os.Symlink(c.Root(), root))
	}
	td := &persist.Tuned{Runner: tunedRunner{c}}
	host, err := persist.New(root)
	require.NoError(t, err)

	// --- boot 1: persist ---
	active, running, err := td.Active(ctx)
	require.NoError(t, err, "tuned-adm active in the container\n%s", c.Console())
	require.True(t, running, "tuned.service runs in the container")
	t.Logf("boot 1: tuned-adm active: %v", active)
	assert.Equal(t, "RX 8 TX 8 Other n/a Combined n/a", ethtoolCurrent(t, ctx, c, ifname))

	nc, err := nic.New(&nic.Options{Root: root, NetNS: fmt.Sprintf("/proc/%d/ns/net", c.Leader())})
	require.NoError(t, err)
	ch, err := nc.Channels(ifname)
	require.NoError(t, err)
	require.NoError(t, nc.Close())
	netINI, err := ch.TunedNet(ifname, 4).Render()
	require.NoError(t, err)
	netConf, err := persist.ParseTunedConf(netINI, "nic")
	require.NoError(t, err)

	// No include= here: the profile tuned picks in this container
	// (virtual-guest, on throughput-performance) sets [disk] readahead and
	// vm.* sysctls, which a container cannot write (/sys and /proc/sys
	// outside net.* are read-only), so `tuned-adm verify` of anything
	// that includes it fails here whatever nettune writes. include= is
	// covered by the unit tests; the previous profile comes back below.
	profile := persist.TunedProfile{
		Name:    "nettune-tomcat",
		Summary: "Tomcat, tuned by nettune (integration test)",
		Sysctl:  []persist.Setting{{Key: "net.core.somaxconn", Value: "3333"}},
		Extra:   netConf,
	}
	pf, err := host.PlanTunedProfile(profile)
	require.NoError(t, err)
	require.NoError(t, pf.Apply(ctx))
	act, err := td.PlanActivate(host, "nettune-tomcat")
	require.NoError(t, err)
	t.Log(act.Describe())
	require.NoError(t, act.Apply(ctx))
	require.NoError(t, act.Verify(ctx))

	unit := &tomcatconf.Unit{Root: root, Runner: unitRunner{c}, Persistent: true}
	di, err := unit.PlanDropIn(func(d *tomcatconf.DropIn) { d.LimitNOFILE, d.CPUAffinity = 12345, []int{1} })
	require.NoError(t, err)
	t.Log(di.Describe())
	require.NoError(t, di.Apply(ctx))
	require.NoError(t, di.Verify(ctx))

	// Where tuned is absent: a file of /etc/sysctl.d, which
	// systemd-sysctl applies at boot (in a container it runs, since
	// /proc/sys/net is writable there, and only net.* can be set).
	twDefault, err := c.Run(ctx, nil, "cat", "/proc/sys/net/ipv4/tcp_max_tw_buckets")
	require.NoError(t, err)
	sc, err := host.PlanSysctlConf(persist.SysctlConf{File: "90-nettune.conf",
		Settings: []persist.Setting{{Key: "net.ipv4.tcp_max_tw_buckets", Value: "4321"}}})
	require.NoError(t, err)
	require.NoError(t, sc.Apply(ctx))

	var written []string
	for _, p := range []string{pf.Path, di.Path, sc.Path} {
		written = append(written, strings.TrimPrefix(p, root))
	}
	t.Logf("boot 1: wrote %v", written)
	pfData, err := os.ReadFile(pf.Path)
	require.NoError(t, err)
	t.Logf("%s:\n%s", written[0], pfData)

	// --- boot 2: all of it in force ---
	took, err := c.Reboot(ctx, 0, func() error { return veth(ifname, ns) })
	require.NoError(t, err)
	repoint()
	t.Logf("reboot 1 took %s", took.Round(time.Millisecond))

	got, running, err := td.Active(ctx)
	require.NoError(t, err)
	assert.True(t, running)
	assert.Equal(t, []string{"nettune-tomcat"}, got, "tuned-adm active after the reboot")
	if err := td.Verify(ctx); err != nil {
		log, _ := c.Run(ctx, nil, "tail", "-n", "40", "/var/log/tuned/tuned.log")
		t.Errorf("tuned-adm verify after the reboot: %v\n--- tuned.log ---\n%s", err, log)
	}
	// tuned 2.20's net plugin takes only devices whose sysfs path is not
	// under /devices/virtual/ (plugin_net.py _init_devices): a veth never
	// gets its [net] instance, so its channels stay as made. udev, which
	// would apply a .link file, is not in the image and does not run in a
	// container (systemd-udevd.service: ConditionPathIsReadWrite=/sys).
	// What is checked is tuned's own account of that, and that the
	// profile's other settings still verify.
	tlog, err := c.Run(ctx, nil, "cat", "/var/log/tuned/tuned.log")
	require.NoError(t, err)
	assert.Contains(t, string(tlog), "instance net_nettune_"+ifname+": no matching devices available")
	t.Logf("boot 2: ethtool -l %s inside: %s (tuned's [net] skips virtual devices)", ifname, ethtoolCurrent(t, ctx, c, ifname))
	somax, err := c.Run(ctx, nil, "cat", "/proc/sys/net/core/somaxconn")
	require.NoError(t, err)
	assert.Equal(t, "3333", strings.TrimSpace(string(somax)), "tuned's [sysctl]")
	tw, err := c.Run(ctx, nil, "cat", "/proc/sys/net/ipv4/tcp_max_tw_buckets")
	require.NoError(t, err)
	assert.Equal(t, "4321", strings.TrimSpace(string(tw)), "systemd-sysctl applied /etc/sysctl.d/90-nettune.conf")
	pid := jvm(t, ctx, c)
	assert.Equal(t, "Max open files 12345 12345 files", procLine(t, c, pid, "limits", "Max open files"))
	assert.Equal(t, "Cpus_allowed_list: 1", procLine(t, c, pid, "status", "Cpus_allowed_list:"))
	t.Logf("boot 2: tomcat10 JVM %d: %s; %s", pid, procLine(t, c, pid, "limits", "Max open files"), procLine(t, c, pid, "status", "Cpus_allowed_list:"))

	// --- revert, as the journal would: newest first ---
	require.NoError(t, sc.Undo(ctx))
	require.NoError(t, di.Undo(ctx))
	require.NoError(t, act.Undo(ctx))
	require.NoError(t, pf.Undo(ctx))

	// --- boot 3: as before ---
	took, err = c.Reboot(ctx, 0, func() error { return veth(ifname, ns) })
	require.NoError(t, err)
	repoint()
	t.Logf("reboot 2 took %s", took.Round(time.Millisecond))
	got, _, err = td.Active(ctx)
	require.NoError(t, err)
	assert.Equal(t, active, got, "the previous profile is active again")
	for _, p := range written {
		_, err := os.Stat(filepath.Join(c.Root(), p))
		assert.True(t, errors.Is(err, os.ErrNotExist), "%s is gone: %v", p, err)
	}
	assert.NoDirExists(t, filepath.Join(c.Root(), "etc", "tuned", "nettune-tomcat"))
	tw, err = c.Run(ctx, nil, "cat", "/proc/sys/net/ipv4/tcp_max_tw_buckets")
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(twDefault)), strings.TrimSpace(string(tw)))
	assert.Equal(t, "RX 8 TX 8 Other n/a Combined n/a", ethtoolCurrent(t, ctx, c, ifname))
	pid = jvm(t, ctx, c)
	assert.NotEqual(t, "Max open files 12345 12345 files", procLine(t, c, pid, "limits", "Max open files"))
	assert.NotEqual(t, "Cpus_allowed_list: 1", procLine(t, c, pid, "status", "Cpus_allowed_list:"))
	t.Logf("boot 3: tomcat10 JVM %d: %s; %s", pid, procLine(t, c, pid, "limits", "Max open files"), procLine(t, c, pid, "status", "Cpus_allowed_list:"))
}
