//go:build linux

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// addClientNetNS adds a second client namespace to n, joined to n's
// server namespace by its own 8-queue veth in 10.213.14.0/24, with a
// route to the server's address on n's first veth (the one the URL
// names). t.Cleanup deletes it after checking no process is left in it.
// It returns n with the new client as its cli.
func addClientNetNS(t *testing.T, n studyNetNS) studyNetNS {
	t.Helper()
	c := n
	c.cli, c.srvIf, c.cliIf, c.cliAddr = fmt.Sprintf("nettune-cli2-%d", os.Getpid()), "ntsrv1", "ntcli1", "10.213.14.2"
	ip(t, "netns", "add", c.cli)
	t.Cleanup(func() {
		assert.Empty(t, procsInNetNS(t, c.path(c.cli)), "processes left in network namespace %s", c.cli)
		if out, err := exec.Command("ip", "netns", "del", c.cli).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", c.cli, err, out)
		}
	})
	ip(t, "-n", n.srv, "link", "add", c.srvIf, "numtxqueues", "8", "numrxqueues", "8",
		"type", "veth", "peer", "name", c.cliIf, "numtxqueues", "8", "numrxqueues", "8")
	ip(t, "-n", n.srv, "link", "set", c.cliIf, "netns", c.cli)
	ip(t, "-n", n.srv, "addr", "add", "10.213.14.1/24", "dev", c.srvIf)
	ip(t, "-n", c.cli, "addr", "add", c.cliAddr+"/24", "dev", c.cliIf)
	ip(t, "-n", n.srv, "link", "set", c.srvIf, "up")
	ip(t, "-n", c.cli, "link", "set", "lo", "up")
	ip(t, "-n", c.cli, "link", "set", c.cliIf, "up")
	ip(t, "-n", c.cli, "route", "add", n.srvAddr+"/32", "via", "10.213.14.1")
	return c
}

// twoClientsConfig writes one ssh_config for both clients: each one's
// key and known_hosts.
func twoClientsConfig(t *testing.T, cli, cli2 sshClientHost) string {
	t.Helper()
	config := filepath.Join(t.TempDir(), "ssh_config")
	require.NoError(t, os.WriteFile(config, []byte(fmt.Sprintf(
		"Host *\n  IdentityFile %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s %s\n  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n",
		filepath.Join(cli.dir, "id"), filepath.Join(cli2.dir, "id"), filepath.Join(cli.dir, "known_hosts"), filepath.Join(cli2.dir, "known_hosts"))), 0o600))
	return config
}

// shardLine is one "shards:" line of the study's log (remoteload.ShardLine).
var shardLine = regexp.MustCompile(`shards: (.*); common window ([0-9.]+)s: (\d+) responses, ([0-9.]+) req/s, merged p50 (\d+)us p99 (\d+)us`)
var shardPart = regexp.MustCompile(`(\S+) (\d+) responses in ([0-9.]+)s \(p50 (\d+)us p99 (\d+)us\)`)

// testStudyTwoClients runs the study with -load-host naming
// two clients, each an sshd in its own namespace over its own 8-queue
// veth: every load runs as two shards from one shared start, each
// client's clock offset is printed with its uncertainty, and for every
// sharded run the merged capacity is the shards' responses over their
// common window, and the merged p50/p99 lie between the shards' own.
// Both veths carried load;
// nothing is left on either client.
func testStudyTwoClients(t *testing.T) {
	testutil.RequireHostTests(t)
	testutil.StableCPUs(t)
	bin := program(t)
	in, port, orig := tomcatBase(t)
	n := newStudyNetNS(t)
	n2 := addClientNetNS(t, n)
	cli := startSSHD(t, n, false, false)
	cli2 := startSSHD(t, n2, false, false)
	t.Cleanup(func() {
		assert.Empty(t, jvmPIDsOf(t, in.Base), "a JVM of %s was left running", in.Base)
		assert.Empty(t, workerProcs(t, bin), "a load worker was left running")
	})
	config := twoClientsConfig(t, cli, cli2)
	rx1, rx2 := rxPackets(t, n.srv, n.srvIf), rxPackets(t, n.srv, n2.srvIf)

	url := fmt.Sprintf("http://%s:%d%s", n.srvAddr, port, loadgen.HelloWorldPath)
	journal := filepath.Join(t.TempDir(), "two.journal")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	hosts := cli.loadHost + "," + cli2.loadHost
	// Hotplug (the default) is allowed with the load on clients; with
	// -cpus 8 on a smaller host no CPU goes offline, and no drift guard
	// runs, which keeps the test short.
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-apply",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port), "-url", url,
		"-load-host", hosts, "-ssh-config", config, "-steps", "cpus,access-log",
		"-duration", "1s", "-warmup", "0s", "-repeat", "2", "-latency-rate", "300", "-connections", "8", "-journal", journal)
	cmd.Env = cleanEnv()
	outb, err := cmd.CombinedOutput()
	text := string(outb)
	t.Logf("tomcat-tuning … -load-host %s\n%s", hosts, text)
	require.NoError(t, err)

	for _, h := range []string{cli.loadHost, cli2.loadHost} {
		m := regexp.MustCompile(`load generator: client ` + regexp.QuoteMeta(h) + ` over ssh, .* its clock ([+-])(\S+) ± (\S+) against this host's`).FindStringSubmatch(text)
		require.NotNil(t, m, "client %s: no clock offset printed", h)
		offset, err := time.ParseDuration(m[2])
		require.NoError(t, err)
		uncertainty, err := time.ParseDuration(m[3])
		require.NoError(t, err)
		// The namespaces share this host's clock: the true offset is 0,
		// so a right measurement is within its uncertainty of it (both
		// printed to 3 digits: 1 % slack).
		assert.LessOrEqual(t, offset, uncertainty+uncertainty/100+10*time.Microsecond, "client %s: clock %s%s ± %s, the true offset 0", h, m[1], m[2], m[3])
		assert.Less(t, uncertainty, time.Second, "client %s: a round trip inside one ssh session", h)
		assert.Regexp(t, `removed /\S+/tomcat-tuning-worker\.\S+ from `+regexp.QuoteMeta(h), text)
	}
	lines := shardLine.FindAllStringSubmatch(text, -1)
	// Two measured steps, each two capacity runs and a latency run.
	require.Len(t, lines, 6, "sharded runs logged")
	for _, l := range lines {
		window, _ := strconv.ParseFloat(l[2], 64)
		merged, _ := strconv.ParseInt(l[3], 10, 64)
		rate, _ := strconv.ParseFloat(l[4], 64)
		p50, _ := strconv.ParseFloat(l[5], 64)
		p99, _ := strconv.ParseFloat(l[6], 64)
		parts := shardPart.FindAllStringSubmatch(l[1], -1)
		require.Len(t, parts, 2, "%s", l[0])
		var inWindow float64
		lo50, hi50, lo99, hi99 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, p := range parts {
			count, _ := strconv.ParseFloat(p[2], 64)
			elapsed, _ := strconv.ParseFloat(p[3], 64)
			require.Greater(t, elapsed, 0.0)
			assert.LessOrEqual(t, window, elapsed+1e-6, "the common window is within each shard's: %s", l[0])
			inWindow += count * window / elapsed
			sp50, _ := strconv.ParseFloat(p[4], 64)
			sp99, _ := strconv.ParseFloat(p[5], 64)
			lo50, hi50 = min(lo50, sp50), max(hi50, sp50)
			lo99, hi99 = min(lo99, sp99), max(hi99, sp99)
		}
		// A quantile of a merge lies between the shards' own: where both
		// shards' CDFs have reached q, so has their weighted sum. Every
		// figure is a bucket of the same histogram layout, printed in
		// whole µs: 1 µs of slack for the rounding.
		assert.True(t, lo50-1 <= p50 && p50 <= hi50+1, "merged p50 %gus outside the shards' [%g, %g]: %s", p50, lo50, hi50, l[0])
		assert.True(t, lo99-1 <= p99 && p99 <= hi99+1, "merged p99 %gus outside the shards' [%g, %g]: %s", p99, lo99, hi99, l[0])
		assert.Equal(t, int64(math.Round(inWindow)), merged, "merged responses = the shards' over the common window: %s", l[0])
		assert.InEpsilon(t, float64(merged)/window, rate, 1e-3, "capacity = merged responses / common window: %s", l[0])
	}
	assert.Regexp(t, `(?m)^baseline: [1-9]\d* requests/s capacity`, text)
	assert.Regexp(t, `(?m)^access-log: [1-9]\d* requests/s capacity`, text)
	d1, d2 := rxPackets(t, n.srv, n.srvIf)-rx1, rxPackets(t, n.srv, n2.srvIf)-rx2
	t.Logf("%s received %d packets, %s %d", n.srvIf, d1, n2.srvIf, d2)
	assert.Greater(t, d1, uint64(100), "client 1's load crossed its veth")
	assert.Greater(t, d2, uint64(100), "client 2's load crossed its veth")

	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got, "server.xml as found")
	entries, err := tuning.ReadJournal(journal)
	require.NoError(t, err)
	dirs := 0
	for _, e := range entries {
		assert.True(t, e.Reverted, "journal entry %s not reverted", e.Step)
		if strings.HasPrefix(e.Step, "load-host") {
			dirs++
		}
	}
	assert.Equal(t, 2, dirs, "each client's directory journaled")
	onlyLeft(t, n.path(n.cli), cli.sshdPID)
	onlyLeft(t, n2.path(n2.cli), cli2.sshdPID)
	assert.Empty(t, cli.workerDirs(), "worker directories left on the clients")
}
