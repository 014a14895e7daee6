//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/nspawn"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// The user's tuned profile before the study, in the container. The
// profile tuned picks by itself there (virtual-guest, on
// throughput-performance) sets [disk] readahead and vm.* sysctls, which a
// container cannot write (/sys and /proc/sys outside net.* are
// read-only): `tuned-adm verify` of it, or of any profile that includes
// it, fails whatever the study does. This one sets only a net.* sysctl,
// which a container can, so verify passes before the study and must pass
// again after it.
const (
	prevProfile = "container-net"
	prevConf    = "[main]\nsummary=what the container's user had: a net.* sysctl a container can set\n\n[sysctl]\nnet.core.somaxconn=2222\n"
)

// persistJournal is the -persist run's journal inside the container, and
// persistExport the folder its -export writes there.
const (
	persistJournal = "/var/lib/nettune/persist.journal"
	persistExport  = "/root/nettune-export"
)

// persistStudyArgs is a short -apply -persist run of the steps that touch
// the unit, server.xml and the NIC, keeping all of them, with the guide's
// rules (-search=false): what is persisted is then known beforehand
// (maxThreads = CPUs - 1, queues = CPUs), not what one-run searches in a
// shared container happened to pick.
func persistStudyArgs(ifname string) []string {
	steps := "cpus,open-files,access-log,threads,nic-queues"
	return []string{"-apply", "-persist", "-persist-steps", steps, "-steps", steps, "-iface", ifname, "-search=false",
		"-cpu-method", "affinity", "-repeat", "1", "-duration", "1s", "-warmup", "0s", "-latency-rate", "200",
		"-connections", "8", "-journal", persistJournal, "-export", persistExport}
}

// jvmState is what the container's tomcat10 JVM got, from its /proc.
type jvmState struct {
	PID     int
	NoFile  string // the "Max open files" line of /proc/PID/limits
	CPUs    string // Cpus_allowed_list of /proc/PID/status
	Answers bool
}

func (s jvmState) String() string {
	return fmt.Sprintf("JVM %d: %s; Cpus_allowed_list %s", s.PID, s.NoFile, s.CPUs)
}

// unitJVM waits for tomcat10's main process to be the JVM and answer,
// and reads its limits and CPUs. The unit is active (Type=simple) from
// its start script's first exec: its MainPID is /bin/sh until
// catalina.sh execs java, which on a busy host takes seconds.
func unitJVM(t *testing.T, ctx context.Context, c *nspawn.Container) jvmState {
	t.Helper()
	const jvmArg = "-Dcatalina.base=/var/lib/tomcat10\x00"
	var pid int
	for deadline := time.Now().Add(time.Minute); ; {
		st := waitUnit(t, ctx, c)
		require.Equal(t, "active", st["ActiveState"], "%v", st)
		var err error
		pid, err = strconv.Atoi(st["MainPID"])
		require.NoError(t, err)
		cmdline, err := os.ReadFile(filepath.Join(c.Root(), "proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), jvmArg) {
			break
		}
		require.True(t, time.Now().Before(deadline), "MainPID %d is not the JVM after a minute: %q %v", pid, cmdline, err)
		time.Sleep(100 * time.Millisecond)
	}
	js := jvmState{PID: pid, Answers: strings.Contains(waitAnswers(t, ctx, c), "Hello World!")}
	js.NoFile = procField(t, c, pid, "limits", "Max open files")
	js.CPUs = strings.TrimPrefix(procField(t, c, pid, "status", "Cpus_allowed_list:"), "Cpus_allowed_list: ")
	return js
}

func procField(t *testing.T, c *nspawn.Container, pid int, file, prefix string) string {
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

// tunedState runs `tuned-adm active` and `tuned-adm verify` inside.
func tunedState(t *testing.T, ctx context.Context, c *nspawn.Container) (active string, verify error) {
	t.Helper()
	out, err := c.Run(ctx, nil, "tuned-adm", "active")
	require.NoError(t, err)
	names, running, err := persist.ParseTunedAdmActive(out)
	require.NoError(t, err)
	require.True(t, running, "tuned runs in the container: %s", out)
	_, verify = c.Run(ctx, nil, "tuned-adm", "verify")
	if verify != nil {
		log, _ := c.Run(ctx, nil, "tail", "-n", "30", "/var/log/tuned/tuned.log")
		verify = fmt.Errorf("%w\n--- tuned.log ---\n%s", verify, log)
	}
	return strings.Join(names, " "), verify
}

// ethtoolNow returns the "Current hardware settings" of `ethtool -l IF`
// inside the container, as "RX 8 TX 8 Other n/a Combined n/a".
func ethtoolNow(t *testing.T, ctx context.Context, c *nspawn.Container, ifname string) string {
	t.Helper()
	out, err := c.Run(ctx, nil, "ethtool", "-l", ifname)
	require.NoError(t, err)
	_, cur, ok := strings.Cut(string(out), "Current hardware settings:")
	require.True(t, ok, "%s", out)
	return strings.Join(strings.Fields(strings.ReplaceAll(cur, ":", "")), " ")
}

// persistedFiles returns the files the journal's persist-* records
// wrote, as paths inside the container, by step.
func persistedFiles(t *testing.T, entries []tuning.JournalEntry) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Step, "persist-") {
			continue
		}
		for _, u := range e.Undo {
			var rec struct {
				Path string `json:"path"`
			}
			require.NoError(t, json.Unmarshal(u.Data, &rec), "%s: %s", e.Step, u.Kind)
			if rec.Path != "" {
				files[e.Step] = rec.Path
			}
		}
	}
	return files
}

// nettuneUnderEtc lists the files under the container's /etc whose name
// or first line names nettune (what nettune writes says so in a comment).
func nettuneUnderEtc(t *testing.T, c *nspawn.Container) []string {
	t.Helper()
	etc := filepath.Join(c.Root(), "etc")
	var found []string
	err := filepath.WalkDir(etc, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a dangling symlink's target, a file root cannot read
		}
		rel := "/etc" + strings.TrimPrefix(p, etc)
		if strings.Contains(d.Name(), "nettune") {
			found = append(found, rel)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		head := make([]byte, 200)
		n, _ := f.Read(head)
		first, _, _ := strings.Cut(string(head[:n]), "\n")
		if strings.Contains(first, "nettune") {
			found = append(found, rel)
		}
		return nil
	})
	require.NoError(t, err)
	return found
}

// testPersistSurvivesReboot is issue 22's "done when": in
// a container where systemd runs Debian's tomcat10.service and tuned runs,
// the study's -apply -persist keeps its steps, the container reboots (the
// same overlay booted again) and they are in force from /proc and the
// files; -revert removes them, the container reboots again, and all is as
// before the study. Three boots, one study run.
//
// The channels of a veth made with 8 queues and moved into the container
// (-iface, so nic-queues is in the study) are persisted as a .link file,
// not in the tuned profile: tuned 2.20's net plugin skips devices under
// /devices/virtual/ (plugin_net.py _init_devices), and the study says so.
// Neither engine applies it inside this container: systemd-udevd, which
// applies .link files (its net_setup_link builtin), is not in the image
// and would not start in a container (its unit wants a writable /sys);
// systemd-networkd reads .network files, not a .link file's channels. So
// the test checks the file written and correct, in force nowhere (the
// veth keeps its 8 queues after the reboot), and gone after -revert. No
// boot unit (ethtool -L at boot) stands in for them: on a real host udev
// applies the .link file to a physical NIC at boot and to a veth when it
// is made, which for a veth is after boot, by whoever makes it, where a
// oneshot unit would find nothing to set.
//
// The same run's -export is compared with what -persist wrote (see
// assertExportMatches).
//
// With -cpu-method affinity the CPUs go to the unit's drop-in, and no
// step of this run has anything tuned applies (no [sysfs] CPUs, no
// physical NIC, no boot parameters): the study writes no tuned profile
// and leaves the user's profile active and verifying, which the test
// checks before and after each reboot.
func testPersistSurvivesReboot(t *testing.T) {
	testutil.RequireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("skipped: ip (iproute2) not installed: %v", err)
	}
	// The drop-in pins tomcat10 to the study's CPUs: none may go offline.
	testutil.StableCPUs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()

	// The veth's peer lives in a namespace of this test; systemd-nspawn
	// moves the veth into the container at boot and back when it stops.
	ns := fmt.Sprintf("nettune-p22-%d", os.Getpid())
	out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput()
	require.NoError(t, err, "ip netns add: %s", out)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("cleanup: ip netns del %s: %v: %s", ns, err, out)
		}
	})
	ifname := fmt.Sprintf("ntp%d", os.Getpid()%100000)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", ifname).Run() })
	require.NoError(t, veth8(ifname, ns))

	bin := buildStatic(t)
	c := nspawn.ForTestContainer(t, func(c *nspawn.Container) error {
		c.Interfaces = []string{ifname}
		return placeStudy(c, bin)
	})
	reboot := func(n int) {
		t.Helper()
		took, err := c.Reboot(ctx, 0, func() error { return veth8(ifname, ns) })
		require.NoError(t, err)
		t.Logf("reboot %d took %s", n, took.Round(time.Millisecond))
	}

	// --- boot 1: the user's state, then the study ---
	profDir := filepath.Join(c.Root(), "etc", "tuned", prevProfile)
	require.NoError(t, os.MkdirAll(profDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(profDir, "tuned.conf"), []byte(prevConf), 0o644))
	out, err = c.Run(ctx, nil, "tuned-adm", "profile", prevProfile)
	require.NoError(t, err, "%s", out)
	active, verr := tunedState(t, ctx, c)
	require.Equal(t, prevProfile, active)
	require.NoError(t, verr, "the user's profile verifies in the container")
	origXML, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)
	before := unitJVM(t, ctx, c)
	t.Logf("boot 1, before the study: %s", before)
	require.Equal(t, "RX 8 TX 8 Other n/a Combined n/a", ethtoolNow(t, ctx, c, ifname))
	etcBefore := nettuneUnderEtc(t, c)

	t0 := time.Now()
	out, err = c.Run(ctx, nil, append([]string{"/usr/local/bin/tomcat-tuning"}, persistStudyArgs(ifname)...)...)
	t.Logf("the study inside (%s):\n%s", time.Since(t0).Round(time.Millisecond), out)
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "== keep: cpus, open-files, access-log, threads, nic-queues ==")
	assert.Contains(t, s, "note: "+ifname+" is virtual: tuned's net plugin skips it, so a .link file carries its channels")
	assert.Contains(t, s, "made persistent: persist-server-xml, persist-drop-in, persist-link-file (undo them with -revert -journal "+persistJournal+")")

	entries := journalOf2(t, c)
	files := persistedFiles(t, entries)
	var pending []string
	for _, e := range entries {
		if !e.Reverted {
			pending = append(pending, e.Step)
		}
	}
	assert.Equal(t, []string{"persist-server-xml", "persist-drop-in", "persist-link-file"}, pending,
		"only the persistent writes are pending; every measured step and the tomcat record reverted")
	dropIn := "/etc/systemd/system/tomcat10.service.d/nettune.conf"
	link := "/etc/systemd/network/"
	assert.Equal(t, "server.xml", filepath.Base(files["persist-server-xml"]), "%v", files)
	assert.Equal(t, dropIn, files["persist-drop-in"])
	assert.True(t, strings.HasPrefix(files["persist-link-file"], link), "%v", files)
	var list []string
	for _, step := range pending {
		list = append(list, step+" "+files[step])
	}
	t.Logf("files the -persist run wrote (from its journal):\n  %s", strings.Join(list, "\n  "))

	dropInData, err := os.ReadFile(filepath.Join(c.Root(), dropIn))
	require.NoError(t, err)
	t.Logf("%s:\n%s", dropIn, dropInData)
	wantNoFile, wantCPUs := dropInValue(t, string(dropInData), "LimitNOFILE"), dropInValue(t, string(dropInData), "CPUAffinity")
	linkData, err := os.ReadFile(filepath.Join(c.Root(), files["persist-link-file"]))
	require.NoError(t, err)
	t.Logf("%s:\n%s", files["persist-link-file"], linkData)
	assert.Contains(t, string(linkData), "[Match]\nOriginalName="+ifname+"\n")
	assert.Regexp(t, `(?m)^RxChannels=1$`, string(linkData))
	assert.Regexp(t, `(?m)^TxChannels=1$`, string(linkData))
	keptXML, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)
	assert.NotEqual(t, string(origXML), string(keptXML))
	assertTunedXML(t, keptXML)
	assertExportMatches(t, c, files, origXML, keptXML)

	// The journal's records of a -persist run stay pending until -revert:
	// another -apply with that journal is refused and says why.
	out, err = c.Run(ctx, nil, append([]string{"/usr/local/bin/tomcat-tuning"}, persistStudyArgs(ifname)...)...)
	require.Error(t, err)
	assert.Contains(t, string(out), "the files of an earlier -persist run are in force (persist-server-xml, persist-drop-in, persist-link-file)")
	assert.Contains(t, string(out), "-revert -journal "+persistJournal)

	// --- boot 2: the kept steps in force ---
	reboot(1)
	after := unitJVM(t, ctx, c)
	t.Logf("boot 2, after -persist: %s", after)
	assert.True(t, after.Answers)
	assert.Equal(t, fmt.Sprintf("Max open files %s %s files", wantNoFile, wantNoFile), after.NoFile, "the drop-in's LimitNOFILE")
	assert.NotEqual(t, before.NoFile, after.NoFile)
	assert.Equal(t, wantCPUs, after.CPUs, "the drop-in's CPUAffinity")
	assert.NotEqual(t, before.CPUs, after.CPUs)
	got, err := os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)
	assert.Equal(t, string(keptXML), string(got), "server.xml as the study left it")
	assertTunedXML(t, got)
	active, verr = tunedState(t, ctx, c)
	assert.Equal(t, prevProfile, active, "no profile for tuned to keep: the user's stays")
	assert.NoError(t, verr, "tuned-adm verify")
	assert.NoDirExists(t, filepath.Join(c.Root(), "etc", "tuned", "nettune-tomcat"))
	assert.FileExists(t, filepath.Join(c.Root(), files["persist-link-file"]))
	eth := ethtoolNow(t, ctx, c, ifname)
	assert.Equal(t, "RX 8 TX 8 Other n/a Combined n/a", eth, "no udev in the container: the .link file is not applied")
	t.Logf("boot 2 checks: tomcat10 %s; server.xml as persisted; tuned-adm active %s, verify ok: %t; ethtool -l %s: %s",
		after, active, verr == nil, ifname, eth)

	// --- revert, then boot 3: as before the study ---
	out, err = c.Run(ctx, nil, "/usr/local/bin/tomcat-tuning", "-revert", "-journal", persistJournal)
	t.Logf("-revert:\n%s", out)
	require.NoError(t, err)
	assert.Regexp(t, `(?s)reverted persist-link-file\nreverted persist-drop-in\nreverted persist-server-xml\n`, string(out))
	assert.Regexp(t, `Tomcat of /var/lib/tomcat10 still runs \(JVM \d+\) with the configuration the journal reverted loaded: restart it: systemctl restart tomcat10\.service\n`, string(out),
		"-revert of kept files restarts nothing, and says how")
	for _, e := range journalOf2(t, c) {
		assert.True(t, e.Reverted, "%s reverted", e.Step)
	}
	reboot(2)
	again := unitJVM(t, ctx, c)
	t.Logf("boot 3, after -revert: %s", again)
	assert.True(t, again.Answers)
	assert.Equal(t, before.NoFile, again.NoFile, "the unit's default open-files limit")
	assert.Equal(t, before.CPUs, again.CPUs, "the unit's default CPUs")
	got, err = os.ReadFile(filepath.Join(c.Root(), unitServerXML))
	require.NoError(t, err)
	assert.Equal(t, string(origXML), string(got), "server.xml byte-identical")
	for step, p := range files {
		_, err := os.Lstat(filepath.Join(c.Root(), p))
		if step == "persist-server-xml" {
			assert.NoError(t, err, "server.xml stays, as it was")
			continue
		}
		assert.ErrorIs(t, err, os.ErrNotExist, "%s (%s) is gone", p, step)
	}
	assert.NoDirExists(t, filepath.Join(c.Root(), "etc", "systemd", "system", "tomcat10.service.d"), "the drop-in's directory, made by the study, is gone")
	assert.Equal(t, etcBefore, nettuneUnderEtc(t, c), "no nettune file left under /etc")
	active, verr = tunedState(t, ctx, c)
	assert.Equal(t, prevProfile, active)
	assert.NoError(t, verr)
	assert.Equal(t, "RX 8 TX 8 Other n/a Combined n/a", ethtoolNow(t, ctx, c, ifname))
	var gone []string
	for step, p := range files {
		if step != "persist-server-xml" {
			gone = append(gone, p)
		}
	}
	slices.Sort(gone)
	t.Logf("boot 3 checks: tomcat10 %s; server.xml byte-identical; tuned-adm active %s, verify ok: %t; gone: %s",
		again, active, verr == nil, strings.Join(gone, ", "))
}

// veth8 makes a veth pair with 8 rx and 8 tx queues, name here and its
// peer in ns, deleting a pair of that name the last boot left: a new
// device has the counts a device has at boot.
func veth8(name, ns string) error {
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

func journalOf2(t *testing.T, c *nspawn.Container) []tuning.JournalEntry {
	t.Helper()
	entries, err := tuning.ReadJournal(filepath.Join(c.Root(), persistJournal))
	require.NoError(t, err)
	return entries
}

// dropInValue returns KEY's value in a drop-in's text.
func dropInValue(t *testing.T, text, key string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v
		}
	}
	t.Fatalf("drop-in has no %s=:\n%s", key, text)
	return ""
}

// assertTunedXML checks server.xml as -persist keeps it: the connector of
// port 8080 with the guide's attributes (maxThreads among them) and no
// AccessLogValve active.
func assertTunedXML(t *testing.T, data []byte) {
	t.Helper()
	cfg, err := tomcatconf.Parse("server.xml", data)
	require.NoError(t, err)
	assert.Empty(t, cfg.AccessLogValves(), "no AccessLogValve active")
	cn, err := cfg.FindConnector(tomcatconf.ConnectorQuery{Port: "8080"})
	require.NoError(t, err)
	for _, a := range tomcatconf.ArmGuideConnectorAttrs(1) {
		if a.Name == "maxThreads" || a.Name == "minSpareThreads" {
			v, ok := cn.Attr(a.Name)
			assert.True(t, ok && v != "", "connector has %s", a.Name)
			continue
		}
		v, _ := cn.Attr(a.Name)
		assert.Equal(t, a.Value, v, "connector %s", a.Name)
	}
}

// assertExportMatches checks the -export folder of the same run against
// what its -persist wrote (files, from the journal): each persisted file
// at its path under the folder, byte for byte; server.xml as a patch that,
// applied the way the folder's README says, turns the original into the
// persisted one; a README; nothing else.
func assertExportMatches(t *testing.T, c *nspawn.Container, files map[string]string, origXML, keptXML []byte) {
	t.Helper()
	dir := filepath.Join(c.Root(), persistExport)
	var got []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			got = append(got, strings.TrimPrefix(p, dir+"/"))
		}
		return err
	}))
	want := []string{"README.md", "server.xml.patch"}
	for step, p := range files {
		if step == "persist-server-xml" {
			continue
		}
		rel := strings.TrimPrefix(p, "/")
		want = append(want, rel)
		exported, err := os.ReadFile(filepath.Join(dir, rel))
		if !assert.NoError(t, err, "%s exports %s", step, rel) {
			continue
		}
		persisted, err := os.ReadFile(filepath.Join(c.Root(), p))
		require.NoError(t, err)
		assert.Equal(t, string(persisted), string(exported), "exported %s is what -persist wrote", rel)
	}
	slices.Sort(got)
	slices.Sort(want)
	assert.Equal(t, want, got, "the export folder holds the persisted files, the patch and the README")

	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	for _, f := range want {
		if f != "README.md" {
			assert.Contains(t, string(readme), "`"+f+"`", "the README says what %s does", f)
		}
	}
	// The README's command, on a copy of the original at the patch's path.
	patchPath := filepath.Join(dir, "server.xml.patch")
	const cmdText = "`patch -p1 -d / < server.xml.patch`"
	require.Contains(t, string(readme), cmdText)
	if _, err := exec.LookPath("patch"); err != nil {
		t.Logf("patch(1) not installed: server.xml.patch not applied (Debian: patch)")
		return
	}
	tmp := t.TempDir()
	xml := filepath.Join(tmp, "var", "lib", "tomcat10", "conf", "server.xml")
	require.NoError(t, os.MkdirAll(filepath.Dir(xml), 0o755))
	require.NoError(t, os.WriteFile(xml, origXML, 0o644))
	patch, err := os.Open(patchPath)
	require.NoError(t, err)
	defer patch.Close()
	cmd := exec.Command("patch", "-p1", "-d", tmp)
	cmd.Stdin = patch
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "patch -p1 -d ROOT < server.xml.patch: %s", out)
	patched, err := os.ReadFile(xml)
	require.NoError(t, err)
	assert.Equal(t, string(keptXML), string(patched), "the patch applied gives the persisted server.xml")
}

// treeState maps every entry under dir to its type, mode and, for a
// regular file, its bytes: a snapshot to compare.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		st[p] = v
		return nil
	}))
	return st
}

// TestExportWritesOnlyItsFolder: -export on the Arm guide's host (a
// fixture root, with and without tuned) changes nothing under the root
// and, beside its folder, nothing in the folder's parent: every file and
// mode is as before, and the folder holds only what it lists.
func TestExportWritesOnlyItsFolder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, withTuned := range []bool{false, true} {
		t.Run(map[bool]string{false: "without tuned", true: "with tuned"}[withTuned], func(t *testing.T) {
			root := seedsFixture(t, true)
			if withTuned {
				require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "tuned"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "tuned", "active_profile"), []byte("throughput-performance\n"), 0o644))
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "export")
			beforeRoot, beforeParent := treeState(t, root), treeState(t, parent)
			out, err := runProgram(t, ctx, "-root", root, "-export", dir)
			require.NoError(t, err, "%s", out)
			assert.Equal(t, beforeRoot, treeState(t, root), "nothing under the root changed")
			afterParent := treeState(t, parent)
			var listed []string
			for p := range afterParent {
				if p == dir || strings.HasPrefix(p, dir+"/") {
					if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
						listed = append(listed, strings.TrimPrefix(p, dir+"/"))
					}
					delete(afterParent, p)
				}
			}
			assert.Equal(t, beforeParent, afterParent, "nothing beside the folder")
			_, line, ok := strings.Cut(out, "exported the plan's persistent files to "+dir+": ")
			require.True(t, ok, "%s", out)
			want := strings.Split(strings.TrimSpace(line), ", ")
			slices.Sort(want)
			slices.Sort(listed)
			assert.Equal(t, want, listed, "the folder holds what the run lists")
		})
	}
}
