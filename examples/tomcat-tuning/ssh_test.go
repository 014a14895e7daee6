//go:build linux

package main

import (
	"context"
	"encoding/json"
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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/tuning"
)

// sshClientHost is an OpenSSH server (Debian's sshd -D) the test runs in
// the client namespace of n: the guide's client machine, reached from
// the server namespace over the 8-queue veth.
type sshClientHost struct {
	dir        string // keys, known_hosts, ssh_config, sshd_config
	config     string // the ssh_config the study gets (-ssh-config)
	loadHost   string // -load-host
	sshdPID    int
	workerDirs func() []string // the worker directories now in the client's /tmp
}

// startSSHD makes a host key and a client key with ssh-keygen, writes an
// sshd_config that takes only that client key, a known_hosts holding the
// host key (unless unknownHostKey) and an ssh_config, and starts sshd in
// n's client namespace. t.Cleanup stops it by PID. With wrongKey the
// ssh_config names a key sshd does not accept.
func startSSHD(t *testing.T, n studyNetNS, unknownHostKey, wrongKey bool) sshClientHost {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		if sshd, err = exec.LookPath("/usr/sbin/sshd"); err != nil {
			t.Skip("skipped: sshd (openssh-server) not installed")
		}
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("skipped: ssh (openssh-client) not installed")
	}
	dir := t.TempDir()
	keygen := func(name string) {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "nettune-test", "-f", filepath.Join(dir, name)).CombinedOutput()
		require.NoError(t, err, "ssh-keygen: %s", out)
	}
	keygen("host_key")
	keygen("id")
	keygen("other_id")
	pub, err := os.ReadFile(filepath.Join(dir, "id.pub"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600))
	hostPub, err := os.ReadFile(filepath.Join(dir, "host_key.pub"))
	require.NoError(t, err)
	known := n.cliAddr + " " + string(hostPub)
	if unknownHostKey {
		known = ""
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(known), 0o600))
	identity := "id"
	if wrongKey {
		identity = "other_id"
	}
	h := sshClientHost{dir: dir, config: filepath.Join(dir, "ssh_config"), loadHost: "root@" + n.cliAddr}
	require.NoError(t, os.WriteFile(h.config, []byte(fmt.Sprintf(
		"Host *\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n",
		filepath.Join(dir, identity), filepath.Join(dir, "known_hosts"))), 0o600))
	sshdConfig := filepath.Join(dir, "sshd_config")
	require.NoError(t, os.WriteFile(sshdConfig, []byte(fmt.Sprintf(
		"ListenAddress %s\nPort 22\nHostKey %s\nAuthorizedKeysFile %s\nPermitRootLogin prohibit-password\n"+
			"PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\nUsePAM no\nStrictModes no\n"+
			"PidFile %s\n",
		n.cliAddr, filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"))), 0o600))
	// Debian's sshd wants its privilege separation directory, which its
	// unit makes at start.
	if _, err := os.Stat("/run/sshd"); os.IsNotExist(err) {
		require.NoError(t, os.Mkdir("/run/sshd", 0o755))
		t.Cleanup(func() { os.Remove("/run/sshd") })
	}
	var log syncBuffer
	cmd := exec.Command("ip", "netns", "exec", n.cli, sshd, "-D", "-e", "-f", sshdConfig)
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	h.sshdPID = cmd.Process.Pid // ip netns exec execs sshd in place
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(h.sshdPID, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(h.sshdPID, syscall.SIGKILL)
			<-exited
		}
		t.Logf("sshd:\n%s", log.String())
	})
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), "Server listening on") {
		select {
		case <-exited:
			t.Fatalf("sshd exited:\n%s", log.String())
		case <-time.After(20 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "sshd not listening after 20s:\n%s", log.String())
	}
	before := workerDirs(t)
	h.workerDirs = func() []string {
		var added []string
		for d := range workerDirs(t) {
			if !before[d] {
				added = append(added, d)
			}
		}
		return added
	}
	return h
}

// copiedWorker returns the PID of a worker the study copied to the
// client in the namespace bound at path, running in worker mode; 0 when
// none runs. A worker is known by its executable, the binary in a worker
// directory, not by its command line: the shell sshd starts shows that
// command line too, and so do its forks (Debian's bash sources ~/.bashrc
// for ssh, forking for its command substitutions) until it execs the
// worker. Killing one of those leaves the worker running.
func copiedWorker(t *testing.T, path string) int {
	t.Helper()
	for _, pid := range procsInNetNS(t, path) {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if err != nil || !strings.Contains(exe, "/tomcat-tuning-worker.") {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if strings.HasSuffix(string(cmdline), remoteload.WorkerArg+"\x00") {
			return pid
		}
	}
	return 0
}

// workerDirs are the study's worker directories in /tmp (the client
// namespace shares this host's file system).
func workerDirs(t *testing.T) map[string]bool {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "tomcat-tuning-worker.*"))
	require.NoError(t, err)
	out := map[string]bool{}
	for _, d := range m {
		out[d] = true
	}
	return out
}

// testStudyLoadHostSSH runs the guide's two-machine procedure
// as one command: Tomcat in the server namespace, the load from an sshd
// in the client namespace over the 8-queue veth (-load-host, with the
// test's own keys, known_hosts and ssh_config). Every step has a capacity
// figure, the load crossed the veth (its rx counter grew by at least the
// requests the latency runs counted), nic-queues set and restored the
// server side's channels, and nothing is left on the client: no worker
// process in its namespace, no worker directory.
func testStudyLoadHostSSH(t *testing.T) {
	testutil.RequireHostTests(t)
	testutil.StableCPUs(t)
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("skipped: ethtool not installed")
	}
	bin := program(t)
	in, port, orig := tomcatBase(t)
	n := newStudyNetNS(t)
	cli := startSSHD(t, n, false, false)
	t.Cleanup(func() {
		assert.Empty(t, jvmPIDsOf(t, in.Base), "a JVM of %s was left running", in.Base)
		assert.Empty(t, workerProcs(t, bin), "a load worker was left running")
	})
	before, err := nsChannels(t, n.srv, n.srvIf)
	require.NoError(t, err)
	require.Equal(t, nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}, before)
	rxBefore := rxPackets(t, n.srv, n.srvIf)

	url := fmt.Sprintf("http://%s:%d%s", n.srvAddr, port, loadgen.HelloWorldPath)
	dir := t.TempDir()
	journal, jsonFile := filepath.Join(dir, "ssh.journal"), filepath.Join(dir, "steps.json")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-apply",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port), "-url", url,
		"-load-host", cli.loadHost, "-ssh-config", cli.config, "-steps", "cpus,nic-queues", "-search=false",
		"-duration", "1500ms", "-warmup", "1s", "-repeat", "2", "-latency-rate", "300", "-connections", "8",
		"-journal", journal, "-json", jsonFile)
	cmd.Env = cleanEnv()
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	seen := map[nic.Channels]bool{}
	workerSeen := false
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
			if len(procsInNetNS(t, n.path(n.cli))) > 1 {
				workerSeen = true
			}
		}
	}
	text := out.String()
	t.Logf("ip netns exec %s tomcat-tuning … -load-host %s\n%s", n.srv, cli.loadHost, text)
	require.NoError(t, runErr)
	assert.True(t, workerSeen, "no session ran in the client namespace")

	m := regexp.MustCompile(`Tomcat CPUs: \S+ \((\d+), by`).FindStringSubmatch(text)
	require.NotNil(t, m, "no CPU count in the output")
	cpus, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	want := uint32(min(cpus, 8))
	assert.Contains(t, text, "load generator: client "+cli.loadHost+" over ssh")
	assert.Contains(t, text, "(SHA-256 verified)")
	assert.Regexp(t, `removed /\S+/tomcat-tuning-worker\.\S+ from `+regexp.QuoteMeta(cli.loadHost), text)
	assert.True(t, seen[nic.Channels{MaxRX: 8, MaxTX: 8, RX: want, TX: want}],
		"the study never set %s to rx %d tx %d; seen: %v", n.srvIf, want, want, seen)
	after, err := nsChannels(t, n.srv, n.srvIf)
	require.NoError(t, err)
	assert.Equal(t, before, after, "channels put back")

	// Every step has a capacity figure; the latency runs' requests all
	// crossed the veth.
	data, err := os.ReadFile(jsonFile)
	require.NoError(t, err)
	assertConformsToSchema(t, data)
	var doc study.Document
	require.NoError(t, json.Unmarshal(data, &doc))
	var requests int64
	measured := map[string]bool{}
	for _, s := range doc.Steps {
		if s.Status != study.StatusMeasured || s.MeasuredIn != "" {
			continue
		}
		measured[s.Step] = true
		require.NotNil(t, s.Capacity, "step %s has no capacity", s.Step)
		assert.Greater(t, s.Capacity.Median, 50.0, "step %s capacity", s.Step)
		require.NotNil(t, s.Latency, "step %s has no latency", s.Step)
		requests += s.Latency.Requests
	}
	assert.True(t, measured["baseline"] && measured[study.StepNICQueues], "measured: %v", measured)
	rx := rxPackets(t, n.srv, n.srvIf) - rxBefore
	t.Logf("%s received %d packets; the latency runs counted %d requests", n.srvIf, rx, requests)
	assert.Greater(t, requests, int64(0))
	assert.GreaterOrEqual(t, rx, uint64(requests), "every request crossed the veth")

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
	assert.True(t, kinds[remoteload.StepLoadHost], "the client's directory is journalled: %v", kinds)

	// Nothing left on the client: sshd alone in its namespace, no
	// worker directory.
	onlyLeft(t, n.path(n.cli), cli.sshdPID)
	assert.Empty(t, cli.workerDirs(), "worker directories left on the client")
}

// testLoadHostFailures: a client the study cannot use stops
// -apply before any step, with an error naming the host, what failed and
// the fix, and leaves server.xml byte-identical, no JVM, a journal with
// nothing pending and nothing on the client.
func testLoadHostFailures(t *testing.T) {
	testutil.RequireHostTests(t)
	bin := program(t)
	for _, tt := range []struct {
		name                     string
		unknownHostKey, wrongKey bool
		port                     string
		want                     []string
	}{
		{name: "unknown host key", unknownHostKey: true, want: []string{"host key not verified", "ssh-keyscan -p 22 10.213.13.2", "ssh-keygen -R 10.213.13.2"}},
		{name: "wrong key", wrongKey: true, want: []string{"authentication failed", "BatchMode=yes"}},
		{name: "host down", port: ":2222", want: []string{"host unreachable", "Connection refused"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, port, orig := tomcatBase(t)
			n := newStudyNetNS(t)
			cli := startSSHD(t, n, tt.unknownHostKey, tt.wrongKey)
			journal := filepath.Join(t.TempDir(), "j")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			host := cli.loadHost + tt.port
			cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-apply",
				"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
				"-url", fmt.Sprintf("http://%s:%d%s", n.srvAddr, port, loadgen.HelloWorldPath),
				"-load-host", host, "-ssh-config", cli.config, "-steps", "nic-queues", "-journal", journal)
			cmd.Env = cleanEnv()
			out, err := cmd.CombinedOutput()
			t.Logf("tomcat-tuning -load-host %s:\n%s", host, out)
			require.Error(t, err)
			assert.Contains(t, string(out), "client "+host+" (ssh): read its architecture (uname -m)")
			for _, w := range tt.want {
				assert.Contains(t, string(out), w)
			}
			got, err := os.ReadFile(in.ServerXML())
			require.NoError(t, err)
			assert.Equal(t, orig, got, "server.xml byte-identical")
			assert.Empty(t, jvmPIDsOf(t, in.Base), "no JVM")
			entries, err := tuning.ReadJournal(journal)
			require.NoError(t, err)
			for _, e := range entries {
				assert.True(t, e.Reverted, "journal entry %s pending", e.Step)
			}
			onlyLeft(t, n.path(n.cli), cli.sshdPID)
			assert.Empty(t, cli.workerDirs(), "nothing on the client")
		})
	}
}

// testLoadHostKillThenRevert kills the study (SIGKILL) while
// its baseline load runs on the client: the ssh session dies with it and
// the worker, watching its stdin, exits; the worker's directory stays
// until -revert, which removes it over ssh (the journal holds the host,
// the ssh config and the directory) and stops the JVM, leaving server.xml
// byte-identical and nothing on the client.
func testLoadHostKillThenRevert(t *testing.T) {
	testutil.RequireHostTests(t)
	bin := program(t)
	in, port, orig := tomcatBase(t)
	n := newStudyNetNS(t)
	cli := startSSHD(t, n, false, false)
	t.Cleanup(func() { assert.Empty(t, jvmPIDsOf(t, in.Base), "a JVM of %s was left running", in.Base) })
	journal := filepath.Join(t.TempDir(), "j")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-apply",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
		"-url", fmt.Sprintf("http://%s:%d%s", n.srvAddr, port, loadgen.HelloWorldPath),
		"-load-host", cli.loadHost, "-ssh-config", cli.config, "-steps", "nic-queues",
		"-warmup", "0s", "-duration", "60s", "-latency-rate", "50", "-connections", "2", "-journal", journal)
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
	// Bounded: wait for the baseline's load on the client (a worker
	// process, named by its directory, in the client namespace).
	deadline := time.Now().Add(90 * time.Second)
	workerRuns := func() bool { return copiedWorker(t, n.path(n.cli)) != 0 }
	for !workerRuns() {
		require.True(t, time.Now().Before(deadline), "no worker on the client after 90s:\n%s", out.String())
		select {
		case err := <-exited:
			t.Fatalf("the study exited (%v) before its load ran:\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.Len(t, cli.workerDirs(), 1, "the worker's directory")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := <-exited
	exited <- err
	t.Logf("tomcat-tuning (killed: %v):\n%s", err, out.String())
	for time.Now().Before(deadline) && len(procsInNetNS(t, n.path(n.cli))) > 1 {
		time.Sleep(50 * time.Millisecond)
	}
	onlyLeft(t, n.path(n.cli), cli.sshdPID)
	assert.Len(t, cli.workerDirs(), 1, "the directory waits for -revert")

	rev := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-revert", "-journal", journal)
	rev.Env = cleanEnv()
	rout, err := rev.CombinedOutput()
	t.Logf("tomcat-tuning -revert:\n%s", rout)
	require.NoError(t, err)
	assert.Contains(t, string(rout), "reverted "+remoteload.StepLoadHost)
	assert.Empty(t, cli.workerDirs(), "-revert removed the worker's directory")
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got, "server.xml byte-identical")
	assert.Empty(t, jvmPIDsOf(t, in.Base), "no JVM of the run")
	onlyLeft(t, n.path(n.cli), cli.sshdPID)
}

// testLoadHostWorkerKilled kills the worker on the client
// (SIGKILL, by PID) mid-load: the study's step fails with the host and
// what failed, everything is reverted and the worker's directory is
// removed; server.xml byte-identical, no JVM, nothing on the client.
func testLoadHostWorkerKilled(t *testing.T) {
	testutil.RequireHostTests(t)
	bin := program(t)
	in, port, orig := tomcatBase(t)
	n := newStudyNetNS(t)
	cli := startSSHD(t, n, false, false)
	t.Cleanup(func() { assert.Empty(t, jvmPIDsOf(t, in.Base), "a JVM of %s was left running", in.Base) })
	journal := filepath.Join(t.TempDir(), "j")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-apply",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
		"-url", fmt.Sprintf("http://%s:%d%s", n.srvAddr, port, loadgen.HelloWorldPath),
		"-load-host", cli.loadHost, "-ssh-config", cli.config, "-steps", "nic-queues",
		"-warmup", "0s", "-duration", "60s", "-latency-rate", "50", "-connections", "2", "-journal", journal)
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
	deadline := time.Now().Add(90 * time.Second)
	worker := 0
	for worker == 0 {
		worker = copiedWorker(t, n.path(n.cli))
		require.True(t, time.Now().Before(deadline), "no worker on the client after 90s:\n%s", out.String())
		select {
		case err := <-exited:
			t.Fatalf("the study exited (%v) before its load ran:\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.NoError(t, syscall.Kill(worker, syscall.SIGKILL)) // the worker this test's study started
	var err error
	select {
	case err = <-exited:
		exited <- err
	case <-time.After(90 * time.Second):
		t.Fatalf("the study ran on 90s after its worker was killed:\n%s", out.String())
	}
	text := out.String()
	t.Logf("tomcat-tuning (worker %d killed):\n%s", worker, text)
	require.Error(t, err)
	assert.Contains(t, text, "client "+cli.loadHost+" (ssh)")
	assert.Contains(t, text, "removed /")
	got, rerr := os.ReadFile(in.ServerXML())
	require.NoError(t, rerr)
	assert.Equal(t, orig, got, "server.xml byte-identical")
	assert.Empty(t, jvmPIDsOf(t, in.Base), "no JVM of the run")
	entries, jerr := tuning.ReadJournal(journal)
	require.NoError(t, jerr)
	for _, e := range entries {
		assert.True(t, e.Reverted, "journal entry %s pending", e.Step)
	}
	onlyLeft(t, n.path(n.cli), cli.sshdPID)
	assert.Empty(t, cli.workerDirs(), "nothing on the client")
}
