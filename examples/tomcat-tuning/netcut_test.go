//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// netCutBound is how long the study may take to fail once the client's
// link is cut: ssh's ServerAliveInterval 5 × ServerAliveCountMax 3, the
// revert and Tomcat's stop, and the clean-up's ConnectTimeout 10 s.
const netCutBound = 90 * time.Second

// testLoadHostNetworkCut runs the load on two clients and
// cuts the second one's veth (ip link set down, in its namespace) while
// both run a capacity run's shards. The study fails within netCutBound
// with an error naming that host and what failed; the first client's
// shard is stopped and its directory removed; server.xml is
// byte-identical and no JVM of the run is left; the cut client's worker,
// whose run is bounded, exits on its own; its directory alone stays
// journaled until -revert, run once the link is back, removes it.
func testLoadHostNetworkCut(t *testing.T) {
	testutil.RequireHostTests(t)
	bin := program(t)
	in, port, orig := tomcatBase(t)
	n := newStudyNetNS(t)
	n2 := addClientNetNS(t, n)
	cli := startSSHD(t, n, false, false)
	cli2 := startSSHD(t, n2, false, false)
	t.Cleanup(func() {
		// Whatever happened, the link is back for the namespaces' clean-up.
		_ = exec.Command("ip", "-n", n2.cli, "link", "set", n2.cliIf, "up").Run()
		assert.Empty(t, jvmPIDsOf(t, in.Base), "a JVM of %s was left running", in.Base)
	})
	journal := filepath.Join(t.TempDir(), "j")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-apply",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
		"-url", fmt.Sprintf("http://%s:%d%s", n.srvAddr, port, loadgen.HelloWorldPath),
		"-load-host", cli.loadHost+","+cli2.loadHost, "-ssh-config", twoClientsConfig(t, cli, cli2), "-steps", "nic-queues",
		"-warmup", "0s", "-duration", "8s", "-repeat", "1", "-latency-rate", "50", "-connections", "2", "-journal", journal)
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
	worker := func(netns string) int { return copiedWorker(t, n.path(netns)) }
	deadline := time.Now().Add(90 * time.Second)
	for worker(n.cli) == 0 || worker(n2.cli) == 0 {
		require.True(t, time.Now().Before(deadline), "no worker on both clients after 90s:\n%s", out.String())
		select {
		case err := <-exited:
			t.Fatalf("the study exited (%v) before its load ran:\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	ip(t, "-n", n2.cli, "link", "set", n2.cliIf, "down")
	cut := time.Now()
	var err error
	select {
	case err = <-exited:
		exited <- err
	case <-time.After(netCutBound):
		t.Fatalf("the study ran on %s after the link was cut:\n%s", netCutBound, out.String())
	}
	took := time.Since(cut)
	text := out.String()
	t.Logf("tomcat-tuning (link cut, failed after %s):\n%s", took.Round(time.Millisecond), text)
	require.Error(t, err)
	assert.Contains(t, text, "client "+cli2.loadHost+" (ssh)", "the error names the host")
	assert.Contains(t, text, "ssh failed: the session or the connection ended", "and what failed")
	assert.Contains(t, text, "reverted, except what the journal still holds ("+remoteload.StepLoadHost+"): run -revert -journal "+journal)
	assert.NotContains(t, text, "every change reverted")
	assert.Regexp(t, `removed /\S+/tomcat-tuning-worker\.\S+ from `+regexp.QuoteMeta(cli.loadHost), text, "the first client's directory goes at the end")
	got, rerr := os.ReadFile(in.ServerXML())
	require.NoError(t, rerr)
	assert.Equal(t, orig, got, "server.xml byte-identical")
	assert.Empty(t, jvmPIDsOf(t, in.Base), "no JVM of the run")
	// The first client's shard was stopped with the run.
	onlyLeft(t, n.path(n.cli), cli.sshdPID)

	// The cut client's run is bounded (-duration): its worker exits by
	// itself, the link still down.
	wdeadline := time.Now().Add(60 * time.Second)
	for worker(n2.cli) != 0 && time.Now().Before(wdeadline) {
		time.Sleep(100 * time.Millisecond)
	}
	assert.Zero(t, worker(n2.cli), "the worker still runs on the cut client")
	// The clients share this host's /tmp: one directory is left, the cut
	// client's, and one journal record.
	require.Len(t, cli2.workerDirs(), 1, "the cut client's directory stays for -revert")
	entries, jerr := tuning.ReadJournal(journal)
	require.NoError(t, jerr)
	var pending []string
	for _, e := range entries {
		if !e.Reverted {
			pending = append(pending, e.Step)
		}
	}
	assert.Equal(t, []string{remoteload.StepLoadHost}, pending, "only the cut client's directory is pending")

	// The link back, -revert removes the directory; the client's session
	// ends once its retransmissions reach the server.
	ip(t, "-n", n2.cli, "link", "set", n2.cliIf, "up")
	rev := exec.CommandContext(ctx, "ip", "netns", "exec", n.srv, bin, "-revert", "-journal", journal)
	rev.Env = cleanEnv()
	rout, err := rev.CombinedOutput()
	t.Logf("tomcat-tuning -revert:\n%s", rout)
	require.NoError(t, err)
	assert.Contains(t, string(rout), "reverted "+remoteload.StepLoadHost)
	assert.Empty(t, cli2.workerDirs(), "-revert removed the worker's directory")
	pdeadline := time.Now().Add(60 * time.Second)
	for len(procsInNetNS(t, n.path(n2.cli))) > 1 && time.Now().Before(pdeadline) {
		time.Sleep(200 * time.Millisecond)
	}
	assert.Equal(t, []int{cli2.sshdPID}, procsInNetNS(t, n.path(n2.cli)), "only sshd in the cut client's namespace")
}
