//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// program builds the command once per test binary.
func program(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tomcat-tuning-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tomcat-tuning")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// stepRow matches the step table's row of a step and captures its
// capacity: the name, a searched step's setting ("maxThreads=4 (measured
// best; …)"), " (unsettled)", then the figure.
// readDocument reads the study's -json file at path, by step name.
func readDocument(t *testing.T, path string) (study.Document, map[string]study.StepJSON) {
	t.Helper()
	js, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc study.Document
	require.NoError(t, json.Unmarshal(js, &doc), "-json %s", path)
	steps := map[string]study.StepJSON{}
	for _, st := range doc.Steps {
		steps[st.Step] = st
	}
	return doc, steps
}

// assertMeasured checks that each named step of a -json document was
// measured, with a capacity above min requests/s.
func assertMeasured(t *testing.T, steps map[string]study.StepJSON, min float64, names ...string) {
	t.Helper()
	for _, name := range names {
		st, ok := steps[name]
		if !assert.True(t, ok, "no step %s in -json", name) {
			continue
		}
		assert.Equal(t, study.StatusMeasured, st.Status, name)
		if assert.NotNil(t, st.Capacity, "%s has no capacity", name) {
			assert.Greater(t, st.Capacity.Median, min, "%s requests/s", name)
		}
	}
}

func runProgram(t *testing.T, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, program(t), args...)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	t.Logf("tomcat-tuning %s\n%s", strings.Join(args, " "), out)
	return string(out), err
}

// cleanEnv drops CATALINA_* so the flags alone choose the instance.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CATALINA_") {
			env = append(env, kv)
		}
	}
	return env
}

// seedsFixture is the seeds' 192-CPU, 2-node host (CPUs 0-7 online, the
// NIC on node 1) with Debian's GRUB defaults file and upstream Tomcat
// 10.1's server.xml at Debian's places.
func seedsFixture(t *testing.T, cpu0Hotplug bool) string {
	t.Helper()
	root := testutil.ExtractSysroot(t, filepath.Join(testutil.RepoRoot(t), "numa", "testdata", "neoverse-v2-192cpu-2node.tar.gz"))
	copyFile := func(src, dst string) {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
	}
	copyFile(testutil.CorpusFile(t, "grub", "debian12-grub2-common-2.06-13+deb12u2.default-grub"), filepath.Join(root, "etc", "default", "grub"))
	copyFile(testutil.CorpusFile(t, "tomcat", "server-10.1.59.xml"), filepath.Join(root, tomcatconf.DefaultBase, "conf", "server.xml"))
	require.NoError(t, os.MkdirAll(filepath.Join(root, tomcatconf.DefaultHome, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, tomcatconf.DefaultHome, "bin", "catalina.sh"), nil, 0o755))
	if cpu0Hotplug {
		// The guide's Graviton4 takes cpu0 offline too (seed 002's loop
		// over {0..95}); the fixture's cpu0 has no online file by default.
		require.NoError(t, os.WriteFile(filepath.Join(root, "sys/devices/system/cpu/cpu0/online"), []byte("1\n"), 0o644))
	}
	return root
}

// TestPlanGuideFixture: plan mode on the Arm guide's host prints its
// plan and changes nothing.
func TestPlanGuideFixture(t *testing.T) {
	root := seedsFixture(t, true)
	xml := filepath.Join(root, tomcatconf.DefaultBase, "conf", "server.xml")
	before, err := os.ReadFile(xml)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-root", root)
	require.NoError(t, err)

	for _, want := range []string{
		"CPU(s):                      192",
		"available: 2 nodes (0-1)",
		"enp1s0f0np0: NUMA node 1",
		`+GRUB_CMDLINE_LINUX="iommu.strict=1 iommu.passthrough=0"`,
		"skipped: reboot required",
		"Tomcat CPUs: 0-7 (8, by hotplug)",
		"CPU method: hotplug (-cpu-method auto: a fixture -root, where no load runs: the guide's method, for its plan)",
		"unchanged: online CPUs already 0-7",
		`+        <!--<Valve className="org.apache.catalina.valves.AccessLogValve" directory="logs"`,
		"maxThreads=7 from the guide's CPUs - 1 = 7",
		`+               maxThreads="7"`,
		`+               maxKeepAliveRequests="500000"`,
		`+               maxConnections="100000"`,
		"ethtool -L enp1s0f0np0 combined 8",
		"CPUs 96-103 of node 1 (enp1s0f0np0's)",
		"bring online: 96-103",
		"take offline: 0-7",
		"fixture root: no baseline measurement",
	} {
		assert.Contains(t, out, want)
	}
	// The steps come in the seeds' order.
	last := -1
	for i, name := range study.StepNames() {
		idx := strings.Index(out, fmt.Sprintf("%d. %s: ", i+1, name))
		require.Greater(t, idx, last, "step %s out of order", name)
		last = idx
	}
	after, err := os.ReadFile(xml)
	require.NoError(t, err)
	assert.Equal(t, before, after, "plan mode must not write")
	online, err := os.ReadFile(filepath.Join(root, "sys/devices/system/cpu/online"))
	require.NoError(t, err)
	assert.Equal(t, "0-7\n", string(online))
}

// TestPlanOnlyJSONFixture: -plan on the guide's fixture prints the plan
// with no baseline at all, writes -json's plan document (every step in
// order, the server.xml diffs) and changes no file of the tree.
func TestPlanOnlyJSONFixture(t *testing.T) {
	root := seedsFixture(t, true)
	xml := filepath.Join(root, tomcatconf.DefaultBase, "conf", "server.xml")
	before, err := os.ReadFile(xml)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "plan.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-plan", "-root", root, "-json", file)
	require.NoError(t, err)
	assert.Contains(t, out, "planned 7 step(s), 3 with a change")
	assert.Contains(t, out, "no load, no JVM started, nothing changed")
	assert.NotContains(t, out, "baseline measurement", "-plan measures nothing, says nothing of a baseline")
	assert.Contains(t, out, "wrote the plan to "+file)

	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assertConformsToSchema(t, data)
	var doc struct {
		Steps []json.RawMessage `json:"steps"`
		Plan  *study.PlanJSON   `json:"plan"`
	}
	require.NoError(t, json.Unmarshal(data, &doc), "%s", data)
	require.NotNil(t, doc.Plan, "%s", data)
	assert.Empty(t, doc.Steps)
	assert.Equal(t, root, doc.Plan.Root)
	var names []string
	for _, s := range doc.Plan.Steps {
		names = append(names, s.Step)
		if s.Step == study.StepThreads {
			assert.Equal(t, study.StatusChange, s.Status)
			assert.Contains(t, s.Diff, `+               maxThreads="7"`)
		}
	}
	assert.Equal(t, study.StepNames(), names)
	after, err := os.ReadFile(xml)
	require.NoError(t, err)
	assert.Equal(t, before, after, "-plan must not write")
}

// TestPlanGuideFixtureCPU0 keeps the fixture's non-hot-pluggable cpu0: the
// NUMA step is skipped with the kernel's reason, not failed.
func TestPlanGuideFixtureCPU0(t *testing.T) {
	root := seedsFixture(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-root", root, "-steps", "numa-local,threads", "-cpus", "4")
	require.NoError(t, err)
	assert.Contains(t, out, "1. numa-local: ")
	assert.Contains(t, out, "skipped: cannot take CPU 0 offline")
	assert.Contains(t, out, "2. threads: ")
	assert.Contains(t, out, `maxThreads="3"`)
	assert.NotContains(t, out, "iommu:")
}

// testPlanWithoutTomcat: no Tomcat where the flags point, so the baseline
// is measured against the built-in HelloWorld server, and said so.
func testPlanWithoutTomcat(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-catalina-home", t.TempDir(), "-catalina-base", t.TempDir(),
		"-repeat", "2", "-duration", "1s", "-warmup", "200ms", "-latency-rate", "200", "-connections", "4")
	require.NoError(t, err)
	assert.Contains(t, out, "no Tomcat instance")
	assert.Contains(t, out, "measuring nettune's built-in HelloWorld server")
	assert.Contains(t, out, "skipped: no Tomcat instance")
	// Plan mode writes no -json (only -plan and -apply do): its one row.
	row := regexp.MustCompile(`(?m)^baseline(?: \(unsettled\))?\s+([0-9.]+)\s`).FindStringSubmatch(out)
	require.NotNil(t, row, "no baseline row")
	rate, err := strconv.ParseFloat(row[1], 64)
	require.NoError(t, err)
	assert.Greater(t, rate, 100.0)
}

func TestBadFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-cpu-method", "taskset"}, `-cpu-method "taskset": want auto, hotplug or affinity`},
		{[]string{"-cpus", "0"}, "-cpus 0: want 1 or more"},
		{[]string{"-root", "/tmp", "-apply"}, "cannot be used with -root"},
		// Issue 25: a local load under hotplug runs on Tomcat's CPUs.
		{[]string{"-apply", "-cpu-method", "hotplug"}, "-apply with -cpu-method hotplug and the load in this process: the load generator would run on Tomcat's CPUs"},
	} {
		out, err := runProgram(t, ctx, tc.args...)
		assert.Error(t, err)
		assert.Contains(t, out, tc.want)
	}
}

// tomcatBase copies Debian's tomcat10 instance into a temporary
// CATALINA_BASE with its Connector on a free port (as tomcatconf's
// integration test does) and returns it with server.xml's bytes.
func tomcatBase(t *testing.T) (*tomcatconf.Instance, int, []byte) {
	t.Helper()
	base := testutil.DebianTomcatBase(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	c, err := tomcatconf.Load(filepath.Join(base, "conf", "server.xml"))
	require.NoError(t, err)
	_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "port", Value: strconv.Itoa(port)}}, nil)
	require.NoError(t, err)
	_, err = c.Save(nil)
	require.NoError(t, err)
	orig, err := os.ReadFile(filepath.Join(base, "conf", "server.xml"))
	require.NoError(t, err)
	in := &tomcatconf.Instance{Home: tomcatconf.DefaultHome, Base: base}
	t.Cleanup(func() {
		if _, err := in.StopAll(context.Background(), nil); err != nil {
			t.Errorf("cleanup: stop Tomcat: %v", err)
		}
		if jvms, err := in.JVMs(); err != nil || len(jvms) > 0 {
			t.Errorf("cleanup: JVMs of %s left: %v %v", in.Base, jvms, err)
		}
	})
	return in, port, orig
}

// testApplyAffinityRevert runs the whole study against real Debian Tomcat
// with short steps, CPU restriction by affinity, and the automatic revert
// at the end.
func testApplyAffinityRevert(t *testing.T) {
	testutil.StableCPUs(t)
	in, port, orig := tomcatBase(t)
	h := tuning.NewDefault()
	onlineBefore, err := h.OnlineCPUs()
	require.NoError(t, err)
	selfBefore, err := numa.NewDefault().AllowedCPUs(os.Getpid())
	require.NoError(t, err)
	journal := filepath.Join(t.TempDir(), "study.journal")
	plot := filepath.Join(t.TempDir(), "steps.svg")
	jsonOut := filepath.Join(t.TempDir(), "steps.json")

	// The threads step searches maxThreads (-search, the default): two or three
	// candidates more than the rule.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-apply", "-cpu-method", "affinity",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
		"-journal", journal, "-repeat", "2", "-duration", "1500ms", "-warmup", "1s", "-latency-rate", "500", "-connections", "16",
		"-json", jsonOut, "-plot", plot)
	require.NoError(t, err)

	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got, "server.xml must be byte-identical after the revert")
	onlineAfter, err := h.OnlineCPUs()
	require.NoError(t, err)
	assert.True(t, onlineBefore.Equal(onlineAfter), "online CPUs %s, before %s", onlineAfter, onlineBefore)
	assert.Contains(t, out, "CPU affinity of this process: "+selfBefore.String()+"\n")
	assert.Contains(t, out, "every change reverted")
	_, err = in.PID()
	assert.ErrorIs(t, err, tomcatconf.ErrNotRunning, "the JVM the study started is stopped")

	// Every measured step has real numbers in -json.
	doc, steps := readDocument(t, jsonOut)
	assertMeasured(t, steps, 50, "baseline", "access-log", "threads")
	assert.Regexp(t, `pinned JVM \d+ to CPUs \S+`, out)
	assert.Contains(t, out, "thread census of JVM")
	assert.Regexp(t, `recommended maxThreads=\d+`, out)
	// The search: the rule first, then the other candidates in its place,
	// one kept and named in the table's row.
	assert.Regexp(t, `== threads: try maxThreads=\d+ \(`, out)
	assert.Regexp(t, `threads: maxThreads searched over 1, `, out)
	assert.Regexp(t, `kept maxThreads=\d+: `, out)
	assert.Regexp(t, `^maxThreads=\d+ \((measured best; the guide's rule 1: |the guide's rule, measured best of )`, steps["threads"].Setting)
	for _, name := range []string{"access-log", "threads"} {
		assert.Equal(t, string(tuning.StatusReverted), steps[name].Runner, name)
	}
	require.Len(t, doc.Searches, 1)
	assert.Equal(t, "threads", doc.Searches[0].Step)
	assert.NotNil(t, doc.Searches[0].Choice, "the search kept a value")
	assert.Contains(t, out, "one NUMA node")
	svg, err := os.ReadFile(plot)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
	js, err := os.ReadFile(jsonOut)
	require.NoError(t, err)
	var measured []string
	for _, st := range doc.Steps {
		if st.Status == study.StatusMeasured && st.Capacity != nil {
			measured = append(measured, st.Step)
		}
	}
	assert.Equal(t, []string{"baseline", "access-log", "threads"}, measured)
	assert.NotContains(t, string(js), `"comparison"`, "each figure once")

	entries, err := tuning.ReadJournal(journal)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	assert.Equal(t, "tomcat", entries[0].Step)
	for _, e := range entries {
		assert.True(t, e.Reverted, "journal entry %s not reverted", e.Step)
	}
}

// testKeepThenRevertRestartsTomcat runs a step with -keep against a Tomcat
// that was already running: the tuned JVM stays up; -revert then restores
// server.xml and starts Tomcat again with it, as it was found.
func testKeepThenRevertRestartsTomcat(t *testing.T) {
	testutil.StableCPUs(t)
	in, port, orig := tomcatBase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	first, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: url})
	require.NoError(t, err)
	journal := filepath.Join(t.TempDir(), "study.journal")

	out, err := runProgram(t, ctx, "-apply", "-keep", "-cpu-method", "affinity",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
		"-journal", journal, "-steps", "access-log",
		"-repeat", "2", "-duration", "1s", "-warmup", "3s", "-warmup-interval", "1s", "-latency-rate", "200", "-connections", "8")
	require.NoError(t, err)
	assert.Contains(t, out, "changes kept; undo them with -revert")
	tuned, err := in.PID()
	require.NoError(t, err, "-keep leaves the tuned JVM running")
	assert.NotEqual(t, first.PID, tuned, "the study restarted Tomcat")
	kept, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	require.NotEqual(t, orig, kept)

	out, err = runProgram(t, ctx, "-revert", "-journal", journal)
	require.NoError(t, err)
	assert.Regexp(t, `(?s)reverted access-log\nreverted tomcat\n`, out)
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got)
	again, err := in.PID()
	require.NoError(t, err, "Tomcat ran before the study: -revert starts it again")
	assert.NotEqual(t, tuned, again, "a new JVM, with the restored server.xml")
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	entries, err := tuning.ReadJournal(journal)
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, e.Reverted, e.Step)
	}
}

// testKillThenRevert kills the study with SIGKILL once the access log is
// off, then restores server.xml from the journal with -revert.
func testKillThenRevert(t *testing.T) {
	testutil.StableCPUs(t)
	in, port, orig := tomcatBase(t)
	journal := filepath.Join(t.TempDir(), "study.journal")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, wait := startAccessLogStep(t, ctx, in, port, journal)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	out, _ := wait()
	t.Logf("killed run:\n%s", out)

	mid, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	require.NotEqual(t, orig, mid, "the killed run left the access log off")
	entries, err := tuning.ReadJournal(journal)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, "tomcat", entries[0].Step)
	assert.Equal(t, "access-log", entries[1].Step)
	for _, e := range entries {
		assert.False(t, e.Reverted, e.Step)
	}
	// The JVM the run started with the access log off outlived it.
	_, err = in.PID()
	require.NoError(t, err, "the killed run's JVM still runs")

	// A new run refuses to start over the pending journal.
	out, err = runProgram(t, ctx, "-apply", "-cpu-method", "affinity", "-catalina-home", in.Home, "-catalina-base", in.Base,
		"-port", strconv.Itoa(port), "-journal", journal, "-steps", "access-log")
	require.Error(t, err)
	assert.Contains(t, out, "run with -revert -journal "+journal+" first")

	out, err = runProgram(t, ctx, "-revert", "-journal", journal)
	require.NoError(t, err)
	assert.Regexp(t, `(?s)reverted access-log\nreverted tomcat\n`, out, "files first, then Tomcat")
	assert.NotContains(t, out, "restart it")
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got, "server.xml byte-identical after -revert")
	// Tomcat was not running before the run: -revert stopped the JVM.
	_, err = in.PID()
	assert.ErrorIs(t, err, tomcatconf.ErrNotRunning)

	out, err = runProgram(t, ctx, "-revert", "-journal", journal)
	require.NoError(t, err)
	assert.Contains(t, out, "nothing to revert")
}

// startUntil starts the program and reads its output until lines start
// with each of prefixes, in order. It returns the command and wait, which waits for the
// program to exit and returns its whole output. The output goes through a
// pipe of the test's own, not cmd.StdoutPipe: exec's Wait closes that pipe
// when the program exits, and a reader still draining it loses the last
// lines (the "exiting without reverting" line went missing that way on a
// loaded machine). After the exit, the rest is read until EOF or for at
// most 5 s, in case a child of the program still holds the pipe.
func startUntil(t *testing.T, ctx context.Context, prefixes []string, args ...string) (cmd *exec.Cmd, wait func() (string, error)) {
	t.Helper()
	cmd = exec.CommandContext(ctx, program(t), args...)
	cmd.Env = cleanEnv()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	w.Close()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var log bytes.Buffer
	sc := bufio.NewScanner(r)
	next := 0
	for next < len(prefixes) && sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), prefixes[next]) {
			next++
		}
	}
	require.Equal(t, len(prefixes), next, "no line starting with %q (after %q):\n%s", prefixes[min(next, len(prefixes)-1)], prefixes[:next], log.String())
	rest := make(chan string, 1)
	go func() {
		var b strings.Builder
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		rest <- b.String()
	}()
	return cmd, func() (string, error) {
		err := cmd.Wait()
		r.SetReadDeadline(time.Now().Add(5 * time.Second))
		return log.String() + <-rest, err
	}
}

// startAccessLogStep starts an -apply run of the access-log and threads
// steps against in, CPUs by affinity, and returns once the access-log
// step is applied and being measured: its JVM restarted and pinned, so
// that the caller reads the JVM the step measures (returning at "==
// measure access-log" raced with the restart, and a test read no JVM). The threads step applies the
// guide's rule (-search=false): these tests are about the run's lifetime,
// and a search there cost testConcurrentApplyRefused a minute. The
// warm-up limit is long because Tomcat, pinned to CPU 0 beside the
// container tests, can read "0 5 0 req/s" for seconds; a 3 s limit then
// measured a stalled JVM and the run ended "no request completed". The
// warm-up stops as soon as the rate is flat; 15 s bounds what a climbing
// JIT adds to each test (60 s cost the three tests 34 s in all).
func startAccessLogStep(t *testing.T, ctx context.Context, in *tomcatconf.Instance, port int, journal string) (*exec.Cmd, func() (string, error)) {
	t.Helper()
	return startUntil(t, ctx, []string{"== measure access-log", "pinned JVM "}, "-apply", "-cpu-method", "affinity",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
		"-journal", journal, "-steps", "access-log,threads", "-search=false",
		"-repeat", "2", "-duration", "2s", "-warmup", "15s", "-warmup-interval", "1s", "-latency-rate", "200", "-connections", "8")
}

// TestApplyHotplug restricts Tomcat to CPU 0 the seeds' way, taking cpu1
// offline for the baseline measurement, and checks it is back online
// afterwards. A load in the study's process, or in a namespace on this
// host, would then run on Tomcat's one CPU, which -apply refuses (issue
// 25). With -load-shares-cpus it measures anyway, the study in a server
// namespace and the load from a client namespace (-load-netns), and
// marks every figure.
func TestApplyHotplug(t *testing.T) {
	testutil.RequireHostTests(t)
	bin := program(t)
	in, port, orig := tomcatBase(t)
	n := newStudyNetNS(t)
	t.Cleanup(func() {
		assert.Empty(t, jvmPIDsOf(t, in.Base), "a JVM of %s was left running", in.Base)
		assert.Empty(t, workerProcs(t, bin), "a load worker was left running")
	})
	testutil.LockHotplug(t)
	h := tuning.NewDefault()
	before, err := h.OnlineCPUs()
	require.NoError(t, err)
	if !before.Contains(1) || before.Len() < 2 {
		t.Skipf("needs cpu1 online and another CPU; online: %s", before)
	}
	if _, err := os.Stat("/sys/devices/system/cpu/cpu1/online"); err != nil {
		t.Skipf("cpu1 is not hot-pluggable: %v", err)
	}
	if before.Len() > 2 {
		t.Skipf("only cpu1 may be hotplugged by tests; this host has %d CPUs online", before.Len())
	}
	t.Cleanup(func() {
		if err := h.SetOnline(1, true); err != nil {
			t.Errorf("cleanup: bring cpu1 online: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{"-apply", "-cpu-method", "hotplug", "-cpus", "1",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port),
		"-journal", filepath.Join(t.TempDir(), "j"), "-steps", "cpus",
		"-repeat", "2", "-duration", "1s", "-warmup", "500ms", "-latency-rate", "300", "-connections", "8"}
	out, err := runProgram(t, ctx, args...)
	require.Error(t, err, "a local load under hotplug is refused")
	assert.Contains(t, out, "the load generator would run on Tomcat's CPUs")
	after, err := h.OnlineCPUs()
	require.NoError(t, err)
	require.True(t, before.Equal(after), "refused before any CPU went offline: online %s, before %s", after, before)

	url := fmt.Sprintf("http://%s:%d%s", n.srvAddr, port, loadgen.HelloWorldPath)
	inNetNS := func(more ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.srv, bin}, append(args, more...)...)...)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err = inNetNS("-url", url, "-load-netns", n.cli)
	require.Error(t, err, "a load from a namespace on this host under hotplug is refused too")
	assert.Contains(t, out, "the load in network namespace "+n.cli+", on this host: the load generator would run on Tomcat's CPUs")
	assert.Contains(t, out, "-load-shares-cpus")
	out, err = inNetNS("-url", url, "-load-netns", n.cli, "-load-shares-cpus")
	t.Logf("%s", out)
	require.NoError(t, err)
	assert.Contains(t, out, "the load generator ran on Tomcat's CPUs 0 (-load-shares-cpus, -cpu-method hotplug)")
	assert.Contains(t, out, "every step: the load generator ran on Tomcat's CPUs 0")
	assert.Contains(t, out, "take offline: 1")
	assert.Regexp(t, `(?m)^baseline: [1-9]\d* requests/s`, out, "the baseline is measured with cpu1 offline")
	assert.Regexp(t, `(?m)^cpus\s+reverted`, out)
	after, err = h.OnlineCPUs()
	require.NoError(t, err)
	assert.True(t, before.Equal(after), "online %s, before %s", after, before)
	assert.Contains(t, out, "online CPUs: "+before.String()+" ")
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got)
}

// testSecondSignalKeepsJournal: a second signal exits at once (status 130)
// without waiting for the revert; -revert then restores server.xml.
func testSecondSignalKeepsJournal(t *testing.T) {
	testutil.StableCPUs(t)
	in, port, orig := tomcatBase(t)
	journal := filepath.Join(t.TempDir(), "study.journal")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, wait := startAccessLogStep(t, ctx, in, port, journal)
	// Two different signals: the kernel keeps both pending (two SIGINTs
	// sent back to back can merge into one).
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	out, err := wait()
	t.Logf("interrupted run:\n%s", out)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 130, ee.ExitCode())
	assert.Contains(t, out, "exiting without reverting; run -revert -journal "+journal)

	// The signals may race with the revert of the first one: whatever
	// the journal still records, -revert restores.
	out, err = runProgram(t, ctx, "-revert", "-journal", journal)
	require.NoError(t, err)
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got)
	entries, err := tuning.ReadJournal(journal)
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, e.Reverted, e.Step)
	}
	_, err = in.PID()
	assert.ErrorIs(t, err, tomcatconf.ErrNotRunning)
}

// testApplyRefusesBadTargetFirst: a URL that cannot reach the tuned
// Connector, or an output that cannot be written, is refused before the
// journal is created or Tomcat started (issue 24, case 7: the run used
// to change the host, wait 90 s and blame Tomcat).
func testApplyRefusesBadTargetFirst(t *testing.T) {
	in, port, orig := tomcatBase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-url", "http://127.0.0.1:1/"}, "port 1 is none of the Connectors'"},
		{[]string{"-url", "ftp://x"}, "want an http:// or https:// URL"},
		{[]string{"-json", filepath.Join(t.TempDir(), "no", "such", "dir", "steps.json")}, "cannot be written"},
	} {
		journal := filepath.Join(t.TempDir(), "j")
		args := append([]string{"-apply", "-cpu-method", "affinity", "-catalina-home", in.Home, "-catalina-base", in.Base,
			"-port", strconv.Itoa(port), "-journal", journal, "-steps", "access-log"}, tc.args...)
		out, err := runProgram(t, ctx, args...)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, out, tc.want)
		assert.NoFileExists(t, journal, "refused before the journal")
		assert.NotContains(t, out, "restarted Tomcat")
		got, err := os.ReadFile(in.ServerXML())
		require.NoError(t, err)
		assert.Equal(t, orig, got)
		_, err = in.PID()
		assert.ErrorIs(t, err, tomcatconf.ErrNotRunning)
	}
}

// testConcurrentApplyRefused: a second -apply on the same CATALINA_BASE,
// with another journal, is refused naming the first run's PID, and leaves
// the first run's JVM alone; so is a -revert of the live run's journal
// (issue 24, cases 1 and 2: B restarted A's JVM, A measured thousands of
// errors, a JVM was left running; -revert undid a live run's files).
// Then SIGINT while A measures: A reverts everything and exits non-zero,
// server.xml byte-identical, no JVM left.
func testConcurrentApplyRefused(t *testing.T) {
	testutil.StableCPUs(t)
	in, port, orig := tomcatBase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	journalA := filepath.Join(t.TempDir(), "a.journal")
	a, waitA := startAccessLogStep(t, ctx, in, port, journalA)
	jvmA, err := in.PID()
	require.NoError(t, err, "A's JVM runs while A measures")
	out, err := runProgram(t, ctx, "-apply", "-cpu-method", "affinity", "-catalina-home", in.Home, "-catalina-base", in.Base,
		"-port", strconv.Itoa(port), "-journal", filepath.Join(t.TempDir(), "b.journal"), "-steps", "access-log,threads",
		"-duration", "1s", "-warmup", "0s", "-latency-rate", "200", "-connections", "4")
	require.Error(t, err)
	assert.Contains(t, out, fmt.Sprintf("another study (PID %d) is changing Tomcat at %s", a.Process.Pid, in.Base))
	assert.NotContains(t, out, "restarted Tomcat")
	// Case 2: -revert on the live run's journal is refused too.
	out, err = runProgram(t, ctx, "-revert", "-journal", journalA)
	require.Error(t, err)
	assert.Contains(t, out, fmt.Sprintf("not reverted: tuning: journal is in use by a live run: %s is locked by PID %d", journalA, a.Process.Pid))
	mid, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.NotEqual(t, orig, mid, "A's access-log change still in place")
	still, err := in.PID()
	require.NoError(t, err)
	assert.Equal(t, jvmA, still, "the refused runs left A's JVM alone")

	require.NoError(t, a.Process.Signal(os.Interrupt))
	outA, err := waitA()
	t.Logf("run A, interrupted:\n%s", outA)
	assert.Error(t, err, "an interrupted run exits non-zero")
	assert.Contains(t, outA, "interrupt: reverting")
	assert.Regexp(t, `(?m)^access-log\s+reverted`, outA)
	assert.Regexp(t, `(?m)^threads\s+not run`, outA)
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got)
	entries, err := tuning.ReadJournal(journalA)
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, e.Reverted, e.Step)
	}
	_, err = in.PID()
	assert.ErrorIs(t, err, tomcatconf.ErrNotRunning, "no JVM left")
}

// TestExportGuideFixture: -export on the Arm guide's host (a fixture
// root) writes the persistent files of its plan into a folder a user
// could commit, and nothing outside it: without tuned, a boot unit that
// keeps CPUs 8-191 offline; with tuned, a profile that includes the
// active one and takes them offline in [sysfs]; the server.xml diff; a
// README naming each file. The plan ends with numa-local, so Tomcat keeps
// CPUs 96-103 of the NIC's node 1, as the guide's last step does.
func TestExportGuideFixture(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, withTuned := range []bool{false, true} {
		root := seedsFixture(t, true)
		if withTuned {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "tuned"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "tuned", "active_profile"), []byte("throughput-performance\n"), 0o644))
		}
		xml := filepath.Join(root, tomcatconf.DefaultBase, "conf", "server.xml")
		before, err := os.ReadFile(xml)
		require.NoError(t, err)
		dir := filepath.Join(t.TempDir(), "export")
		out, err := runProgram(t, ctx, "-root", root, "-export", dir)
		require.NoError(t, err, "%s", out)
		assert.Contains(t, out, "exported the plan's persistent files to "+dir)
		readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
		require.NoError(t, err)
		patch, err := os.ReadFile(filepath.Join(dir, "server.xml.patch"))
		require.NoError(t, err)
		assert.Contains(t, string(patch), `+               maxThreads="7"`)
		assert.Contains(t, string(patch), `<!--<Valve className="org.apache.catalina.valves.AccessLogValve"`)
		assert.Contains(t, string(readme), "`server.xml.patch`")
		_, errAdm := exec.LookPath("tuned-adm")
		if withTuned && errAdm == nil {
			conf, err := os.ReadFile(filepath.Join(dir, "etc/tuned/nettune-tomcat/tuned.conf"))
			require.NoError(t, err)
			assert.Contains(t, string(conf), "include=throughput-performance")
			for _, off := range []int{0, 8, 95, 104, 191} {
				assert.Contains(t, string(conf), fmt.Sprintf("/sys/devices/system/cpu/cpu%d/online=0\n", off))
			}
			for _, on := range []int{96, 103} {
				assert.NotContains(t, string(conf), fmt.Sprintf("/sys/devices/system/cpu/cpu%d/online", on))
			}
			assert.Contains(t, string(readme), "tuned-adm profile nettune-tomcat")
		} else {
			unit, err := os.ReadFile(filepath.Join(dir, "etc/systemd/system/nettune-cpu-online.service"))
			require.NoError(t, err)
			assert.Contains(t, string(unit), "0-95,104-191")
		}
		after, err := os.ReadFile(xml)
		require.NoError(t, err)
		assert.Equal(t, before, after, "-export changes nothing outside its folder")
		assert.NoDirExists(t, filepath.Join(root, "etc/tuned/nettune-tomcat"))
		assert.NoFileExists(t, filepath.Join(root, "etc/systemd/system/nettune-cpu-online.service"))
	}
}

// testApplyPersistRevert: -persist keeps the named step after the run, as
// a journaled server.xml edit that survives the run's end, and -revert
// removes it (issue 22, on a copy of Debian's Tomcat run as its child: no
// unit, so no drop-in, and nothing for tuned to keep).
func testApplyPersistRevert(t *testing.T) {
	testutil.StableCPUs(t)
	in, port, orig := tomcatBase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	journal := filepath.Join(t.TempDir(), "j")
	out, err := runProgram(t, ctx, "-apply", "-persist", "-persist-steps", "access-log", "-cpu-method", "affinity",
		"-catalina-home", in.Home, "-catalina-base", in.Base, "-port", strconv.Itoa(port), "-journal", journal,
		"-steps", "access-log", "-repeat", "2", "-duration", "1s", "-warmup", "1s", "-latency-rate", "200", "-connections", "4")
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "== keep: access-log ==")
	assert.Contains(t, out, "made persistent: persist-server-xml (undo them with -revert -journal "+journal+")")
	kept, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.NotEqual(t, orig, kept)
	assert.Contains(t, string(kept), `<!--<Valve className="org.apache.catalina.valves.AccessLogValve"`)
	_, err = in.PID()
	assert.ErrorIs(t, err, tomcatconf.ErrNotRunning, "Tomcat left as found: stopped")

	out, err = runProgram(t, ctx, "-revert", "-journal", journal)
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "reverted persist-server-xml")
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, orig, got)
}

// testApplySearchesFromTheRule: a study on a server.xml that already has
// the guide's Connector attributes (as after a study kept the rule) still
// searches maxThreads: the threads step is applied as it is and measured,
// the other candidates are tried against it, and the run puts the file
// back byte for byte.
func testApplySearchesFromTheRule(t *testing.T) {
	testutil.StableCPUs(t)
	in, port, _ := tomcatBase(t)
	// -cpus 1: the rule is maxThreads = max(1, CPUs − 1) = 1 on any host.
	e, err := tomcatconf.EditServerXML(in.ServerXML(), func(c *tomcatconf.Config) error {
		_, err := c.SetConnector(tomcatconf.ConnectorQuery{Port: strconv.Itoa(port)}, tomcatconf.ArmGuideConnectorAttrs(1), &tomcatconf.SetOptions{ToExecutor: true})
		return err
	})
	require.NoError(t, err)
	require.True(t, e.Changed())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	require.NoError(t, e.Apply(ctx))
	ruled := []byte(e.After)

	out, err := runProgram(t, ctx, "-apply", "-cpu-method", "affinity", "-cpus", "1", "-catalina-home", in.Home, "-catalina-base", in.Base,
		"-port", strconv.Itoa(port), "-journal", filepath.Join(t.TempDir(), "j"), "-steps", "threads",
		"-repeat", "1", "-duration", "500ms", "-warmup", "0s", "-latency-rate", "200", "-connections", "4")
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "already has the guide's Connector attributes: kept as it is and measured, for the search")
	assert.Contains(t, out, "== threads: try maxThreads=2 (2 × CPUs) ==")
	assert.Regexp(t, `kept maxThreads=\d+: `, out)
	assert.Regexp(t, `(?m)^threads\s+reverted`, out)
	got, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	assert.Equal(t, string(ruled), string(got), "the run leaves the file as it found it")
}

// TestPlanUserCandidates: the plan on the seeds' 192-CPU host names the
// user's maxThreads values in the search, in place of the generated ones
// and of the census (the queue counts' are in testStudyNICQueuesNetNS: a
// fixture's channels are unknown).
func TestPlanUserCandidates(t *testing.T) {
	root := seedsFixture(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := runProgram(t, ctx, "-plan", "-root", root, "-threads-candidates", "16,32")
	require.NoError(t, err)
	assert.Contains(t, out, "search: maxThreads=7 (the guide's rule: CPUs − 1) first, then measured against 16 (-threads-candidates), 32 (-threads-candidates), 200 (as before the step, Tomcat's default); the best is kept")
	assert.NotContains(t, out, "adds the thread census's recommendation")
}
