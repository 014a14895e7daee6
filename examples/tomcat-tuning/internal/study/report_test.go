//go:build linux

package study

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

func TestFormatResults(t *testing.T) {
	res := []tuning.StepResult{
		{Name: "threads", Status: tuning.StatusReverted},
		{Name: "nic", Status: tuning.StatusSkipped, Reason: "no physical NIC"},
	}
	assert.Equal(t, "step     status     detail\n"+
		"threads  reverted\n"+
		"nic      skipped    no physical NIC\n", FormatResults(res))
}

// TestDocument: -json's steps carry the runner's outcome: measured steps
// with capacity, spread and latency at the common rate, each figure once;
// unchanged, skipped and failed ones without figures.
func TestDocument(t *testing.T) {
	lat := func(p99 time.Duration) loadgen.Figures {
		return loadgen.Figures{Load: 7000, Requests: 35000, P50: time.Millisecond, P99: p99, Max: 40 * time.Millisecond, CPU: 50}
	}
	res := Results{
		Measured: []loadgen.StepFigures{
			{Name: "baseline", Capacity: stats.SpreadOf([]float64{11000, 12000, 11500}), Latency: lat(10 * time.Millisecond)},
			{Name: "access-log", Capacity: stats.SpreadOf([]float64{14000, 14500, 15000}), CapacityErrors: 2, Latency: lat(5 * time.Millisecond)},
			{Name: "threads", Capacity: stats.SpreadOf([]float64{14200, 14900, 15100}), Latency: lat(4 * time.Millisecond)},
		},
		Steps: []tuning.StepResult{
			{Name: "iommu", Status: tuning.StatusSkipped, Reason: "reboot required"},
			{Name: "cpus", Status: tuning.StatusReverted},
			{Name: "open-files", Status: tuning.StatusNoChange},
			{Name: "access-log", Status: tuning.StatusReverted},
			{Name: "threads", Status: tuning.StatusReverted},
			{Name: "nic-queues", Status: tuning.StatusReverted}, // applied, its measurement failed
			{Name: "numa-local", Status: tuning.StatusNotRun},
		},
		Baseline: map[string]bool{"iommu": true, "cpus": true, "open-files": true},
	}
	o := DefaultOptions()
	b, err := json.Marshal(DocumentOf(o, res))
	require.NoError(t, err)
	var back struct {
		Version    int              `json:"schema_version"`
		CommonRate float64          `json:"common_rate_rps"`
		Steps      []map[string]any `json:"steps"`
		Comparison any              `json:"comparison"`
	}
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Nil(t, back.Comparison, "each figure once: no second copy of the table")
	assert.Equal(t, SchemaVersion, back.Version)
	assert.Equal(t, 7000.0, back.CommonRate)
	status := map[string]string{}
	for _, st := range back.Steps {
		status[st["step"].(string)] = st["status"].(string)
	}
	assert.Equal(t, map[string]string{"baseline": "measured", "iommu": "skipped", "cpus": "measured", "open-files": "unchanged",
		"access-log": "measured", "threads": "measured", "nic-queues": "failed", "numa-local": "skipped"}, status)
	require.Len(t, back.Steps, 8)
	assert.Equal(t, "baseline", back.Steps[2]["measured_in"], "cpus is part of the baseline")
	assert.NotContains(t, back.Steps[2], "capacity")
	assert.Equal(t, "reboot required", back.Steps[1]["reason"])
	al := back.Steps[4]
	errs := 2.0
	assert.Equal(t, map[string]any{"median_rps": 14500.0, "min_rps": 14000.0, "max_rps": 15000.0, "runs": 3.0, "runs_rps": []any{}, "errors": errs},
		al["capacity"])
	vs := al["vs_baseline"].(map[string]any)
	assert.Equal(t, false, vs["noise"])
	assert.InDelta(t, 26.09, vs["percent"], 0.01)
	assert.NotContains(t, vs, "verdict", "runs not kept: the ranges only")
	assert.Equal(t, -50.0, al["p99_vs_baseline_percent"])
	assert.Equal(t, map[string]any{"rate_rps": 7000.0, "requests": 35000.0, "mean_ms": 0.0, "p50_ms": 1.0, "p90_ms": 0.0, "p99_ms": 5.0,
		"p999_ms": 0.0, "max_ms": 40.0, "errors": 0.0, "jvm_cpu_percent": 50.0}, al["latency"])
	assert.Equal(t, true, back.Steps[5]["vs_previous"].(map[string]any)["noise"], "14900 against 14500: inside the spread")
	assert.NotContains(t, back.Steps[6], "capacity")
	assert.NotContains(t, back.Steps[0], "vs_baseline", "the baseline has no change")
}

// hotplugApply asks -apply with the guide's hotplug.
func hotplugApply(o *Options) { o.Apply, o.CPUMethod = true, MethodHotplug }

// TestCheck: every option is checked in one place, before anything runs.
func TestCheck(t *testing.T) {
	require.NoError(t, DefaultOptions().Check())
	for _, tt := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.CPUMethod = "magic" }, `-cpu-method "magic": want auto, hotplug or affinity`},
		{func(o *Options) { o.Connections = -1 }, "-connections -1: want 1 or more, or 0 to size the load to the server"},
		{func(o *Options) { o.CPUs = 0 }, "-cpus 0: want 1 or more"},
		{func(o *Options) { o.Search = "maybe" }, `-search "maybe": want on (measure candidates where the guide applies a rule) or off`},
		{func(o *Options) { o.Repeat = 0 }, "-repeat 0: want 1 or more"},
		{func(o *Options) { o.Apply, o.Root = true, "/tmp" }, "cannot be used with -root"},
		{func(o *Options) { o.Steps = []string{"nope"} }, `-steps: unknown step "nope"`},
		// Issue 25, item 5: a local load under hotplug runs on Tomcat's CPUs.
		{hotplugApply, "-apply with -cpu-method hotplug and the load in this process: the load generator would run on Tomcat's CPUs"},
		{hotplugApply, "-load-host [USER@]HOST[:PORT]"},
		{hotplugApply, "or measure anyway with -load-shares-cpus"},
		{hotplugApply, "-cpu-method affinity with CPUs left for the load"},
		{func(o *Options) { o.LoadNetNS = "../cli" }, `-load-netns "../cli": want the name of a namespace in /run/netns`},
		{func(o *Options) { o.LoadNetNS = ".." }, "want the name of a namespace"},
		// Issue 24, case 7: checked before the host changes, not after.
		{func(o *Options) { o.URL = "ftp://x" }, `-url: loadgen: URL "ftp://x": want an http:// or https:// URL`},
		{func(o *Options) { o.URL = "http://" }, "no host"},
		{func(o *Options) { o.JSONFile = "/nonexistent-dir/steps.json" }, "-json /nonexistent-dir/steps.json: cannot be written"},
		{func(o *Options) { o.PlotFile = os.TempDir() }, "a folder, want a file to write"},
		{func(o *Options) { o.Iface = "nosuch0" }, `-iface "nosuch0"`},
		{func(o *Options) { o.LoadHost = "client" }, "-load-host \"client\" needs -url"},
		{func(o *Options) { o.LoadHost, o.URL = "client", "http://127.0.0.1:8080/" }, "loopback address"},
		{func(o *Options) { o.LoadHost, o.URL = "a,,b", "http://10.0.0.1:8080/" }, "an empty client in the list"},
		{func(o *Options) { o.LoadHost, o.URL = "a,b,a", "http://10.0.0.1:8080/" }, "a named twice"},
		{func(o *Options) { o.LoadHost, o.URL = "a,b,-x", "http://10.0.0.1:8080/" }, `-load-host "-x": want [USER@]HOST[:PORT]`},
		{func(o *Options) { o.LoadHost, o.URL, o.Connections = "a,b,c", "http://10.0.0.1:8080/", 2 }, "-connections 2: the 3 clients of -load-host split the connections"},
		{func(o *Options) { o.LoadHost, o.URL = "u@h:99999", "http://10.0.0.1:8080/" }, `port "99999": want 1-65535`},
		{func(o *Options) { o.LoadHost, o.URL = "-oProxyCommand=x", "http://10.0.0.1:8080/" }, "want [USER@]HOST[:PORT]"},
		{func(o *Options) { o.LoadHost, o.LoadNetNS, o.URL = "h", "cli", "http://10.0.0.1:8080/" }, "give one place for the load"},
		{func(o *Options) { o.SSHConfig = "/x" }, "-ssh-config \"/x\" without -load-host"},
		{func(o *Options) { o.LoadHost, o.URL, o.LoadWorker = "h", "http://10.0.0.1:8080/", "/etc/hostname" }, "-load-worker: /etc/hostname"},
	} {
		o := DefaultOptions()
		tt.set(&o)
		assert.ErrorContains(t, o.Check(), tt.want)
	}
	o := DefaultOptions()
	o.LoadNetNS = "nettune-missing-namespace"
	assert.ErrorContains(t, o.Check(), "create it with `ip netns add nettune-missing-namespace`")
	o = DefaultOptions()
	o.Apply = true
	assert.NoError(t, o.Check(), "-cpu-method auto: affinity for a load on this host")
	o.CPUMethod = MethodHotplug
	assert.ErrorIs(t, o.Check(), ErrLoadSharesCPUs)
	o.CPUMethod = MethodAffinity
	assert.NoError(t, o.Check(), "affinity leaves CPUs for the load (Apply checks there are some)")
	o.CPUMethod, o.LoadHost, o.URL = MethodHotplug, "client", "http://10.0.0.1:8080/"
	assert.NoError(t, o.Check(), "hotplug with the load on a client")
}

// TestApplyRefusesLoadOnTomcatsCPUs: under affinity, a host whose CPUs all
// go to Tomcat leaves none for a local load: Apply refuses before anything
// (no journal), naming the fixes; a load elsewhere is not refused there.
func TestApplyRefusesLoadOnTomcatsCPUs(t *testing.T) {
	o := DefaultOptions()
	o.Apply, o.CPUMethod, o.Journal = true, MethodAffinity, filepath.Join(t.TempDir(), "j")
	h := Host{Tomcat: Tomcat{Instance: &tomcatconf.Instance{Base: t.TempDir()}}}
	h.NIC.URL = "http://127.0.0.1:8080/"
	h.CPUs.Online, h.CPUs.Tomcat = cpuset.Of(0), cpuset.Of(0)
	_, err := Apply(context.Background(), h, o, io.Discard)
	require.ErrorIs(t, err, ErrLoadSharesCPUs)
	for _, want := range []string{"gives Tomcat CPUs 0, every online CPU (0), and the load in this process", "-load-host", "-cpu-method affinity with CPUs left", "-load-shares-cpus"} {
		assert.ErrorContains(t, err, want)
	}
	_, serr := os.Stat(o.Journal)
	assert.True(t, os.IsNotExist(serr), "refused before the journal is created")
	// A namespace on this host is no way out: its worker runs on the same
	// CPUs. A client is.
	err = checkLoadCPUs(h, Options{CPUMethod: MethodAffinity, LoadNetNS: "cli"})
	assert.ErrorIs(t, err, ErrLoadSharesCPUs)
	assert.ErrorContains(t, err, "the load in network namespace cli, on this host")
	assert.NoError(t, checkLoadCPUs(h, Options{CPUMethod: MethodAffinity, LoadHost: "client"}))
	// -load-shares-cpus measures anyway, and marks every figure.
	shared := Options{Apply: true, CPUMethod: MethodAffinity, LoadNetNS: "cli", LoadSharesCPUs: true}
	assert.NoError(t, checkLoadCPUs(h, shared))
	assert.Equal(t, "the load generator ran on Tomcat's CPUs 0 (-load-shares-cpus, -cpu-method affinity): every figure measures Tomcat and the generator together",
		SharedCPUsText(h, shared))
	h.CPUs.Online, h.CPUs.Load = cpuset.Of(0, 1), cpuset.Of(1)
	assert.NoError(t, checkLoadCPUs(h, o), "CPU 1 left for the load")
	assert.Empty(t, SharedCPUsText(h, shared), "CPU 1 left for the load")
	shared.CPUMethod = MethodHotplug
	assert.Contains(t, SharedCPUsText(h, shared), "-cpu-method hotplug")
	shared.LoadHost, shared.LoadNetNS = "client", ""
	assert.Empty(t, SharedCPUsText(h, shared), "a client's CPUs are its own")
}

// TestCheckTarget: -url must reach a Connector the study tunes.
func TestCheckTarget(t *testing.T) {
	h := Host{Tomcat: Tomcat{Instance: &tomcatconf.Instance{Base: "/var/lib/tomcat10"},
		Connectors: []tomcatconf.Connector{{Port: "8080"}, {Port: "8443"}}}}
	h.NIC.URL = "http://127.0.0.1:8080/examples/"
	assert.NoError(t, checkTarget(h))
	h.NIC.URL = "https://10.0.0.1:8443/"
	assert.NoError(t, checkTarget(h))
	h.NIC.URL = "http://127.0.0.1:1/"
	assert.ErrorContains(t, checkTarget(h), "port 1 is none of the Connectors' in /var/lib/tomcat10/conf/server.xml (8080, 8443)")
	h.NIC.URL = "http://127.0.0.1/"
	assert.ErrorContains(t, checkTarget(h), "port 80 is none")
	h.Tomcat.Connectors = append(h.Tomcat.Connectors, tomcatconf.Connector{Port: "${port.http}"})
	assert.NoError(t, checkTarget(h), "a placeholder port: cannot tell")
}

// TestLoadConfig: every load of the study comes from one Config built in
// one place: the URL, -connections and -duration.
func TestLoadConfig(t *testing.T) {
	o := DefaultOptions()
	o.Connections, o.Duration = 128, 7*time.Second
	assert.Equal(t, loadgen.Config{URL: "http://127.0.0.1:8080/", Connections: 128, Duration: 7 * time.Second}, o.LoadConfig("http://127.0.0.1:8080/"))
}

// TestDocumentVerdicts: with every capacity run kept, -json carries each
// uplift's verdict, p and interval, the guide's figure beside ours, and
// the drift guard's line.
func TestDocumentVerdicts(t *testing.T) {
	runs := func(base float64) []float64 {
		return []float64{base, base + 1, base + 2, base + 3, base + 4, base + 5}
	}
	base := loadgen.StepFigures{Name: "baseline", CapacityRuns: runs(1000), Capacity: stats.SpreadOf(runs(1000))}
	al := loadgen.StepFigures{Name: "access-log", CapacityRuns: runs(1110), Capacity: stats.SpreadOf(runs(1110)),
		Reference: &loadgen.Reference{Source: "Arm guide", VsPrevious: GuideUplift[StepAccessLog]}}
	same := loadgen.StepFigures{Name: "threads", CapacityRuns: []float64{1111, 1109, 1113, 1112, 1108, 1115}}
	again := loadgen.StepFigures{Name: "baseline again", CapacityRuns: runs(1001)}
	res := Results{Measured: []loadgen.StepFigures{base, al, same}, Alpha: 0.05, Again: &again,
		Steps: []tuning.StepResult{{Name: "access-log", Status: tuning.StatusReverted}, {Name: "threads", Status: tuning.StatusReverted}}}
	doc := DocumentOf(DefaultOptions(), res)
	require.Len(t, doc.Steps, 3)
	a := doc.Steps[1]
	require.NotNil(t, a.VsBaseline)
	assert.Equal(t, "gain", a.VsBaseline.Verdict)
	assert.Less(t, a.VsBaseline.P, 0.05)
	require.Len(t, a.VsBaseline.CI, 2)
	assert.Greater(t, a.VsBaseline.CI[0], 1.0, "the whole interval above the noise band")
	require.NotNil(t, a.GuideVsPrevious)
	assert.Equal(t, 11.1, *a.GuideVsPrevious)
	th := doc.Steps[2]
	require.NotNil(t, th.VsPrevious)
	assert.Equal(t, "no significant change", th.VsPrevious.Verdict)
	require.NotNil(t, doc.Drift, "the baseline measured again")
	assert.Equal(t, 6, doc.Drift.Capacity.Runs)
	assert.Equal(t, "no significant change", doc.Drift.VsBaseline.Verdict)
	assert.Equal(t, 0.05, doc.Alpha)
	text := res.Comparison().Text()
	assert.Contains(t, text, "no significant change")
	assert.Contains(t, text, "+11.1")
	d, ok := res.Drift()
	require.True(t, ok)
	assert.Contains(t, d.Text(), "drift")
}

// TestEstimate: the defaults' whole study on this machine's shape (one
// CPU for Tomcat, only lo, one NUMA node: the baseline, access-log,
// threads with two candidates besides the rule and the pool before, one
// for the census, the drift guard) and the load sizing's every count up
// to its bound is likely about 7 minutes, at most about 62 when every
// warm-up runs to its 3-minute bound and every measurement is warmed up
// and re-measured a second time; steps the host skips cost nothing, and
// a given -connections no sizing.
func TestEstimate(t *testing.T) {
	o := DefaultOptions()
	o.CPUMethod = MethodAffinity
	h := Host{CPUs: CPUs{N: 1}, NIC: NIC{Name: "lo", Virtual: true, Node: -1}}
	steps, err := Steps(h, o, nil)
	require.NoError(t, err)
	// A measurement: a 10 s restart, a 3 min warm-up of 90 runs of 2 s,
	// 6 capacity runs, a second warm-up and 6 capacity runs again (the
	// first warm-up unsettled, the second settled at its bound), and the
	// latency run of 5 s, each run with 0.25 s beyond its duration.
	const run = 5250 * time.Millisecond
	warmUp := 3*time.Minute + 90*250*time.Millisecond
	per := 10*time.Second + 2*warmUp + 13*run
	// The sizing: a warm-up, then 6 counts (7 connections, doubled to
	// 224) × 4 runs; the census 2.5 s + 3 s.
	sizing := warmUp + 6*4*run
	census := 5500 * time.Millisecond
	// Likely: each warm-up settled after its first 3 runs (6 s), runs
	// 0.05 s beyond their duration, the sizing done at its third count.
	const likelyRun = 5050 * time.Millisecond
	likelyWarmUp := 6*time.Second + 3*50*time.Millisecond
	likelyPer := 10*time.Second + likelyWarmUp + 7*likelyRun
	likelySizing := likelyWarmUp + 3*4*likelyRun
	// 7 measurements: the baseline, access-log, threads + 3, the drift guard.
	assert.Equal(t, 7*per+census+sizing, Estimate(h, o, steps))
	assert.Less(t, Estimate(h, o, steps), 62*time.Minute)
	assert.Less(t, Likely(h, o, steps), 8*time.Minute)
	b := Budget(h, o, steps)
	require.Len(t, b, 4)
	assert.Equal(t, 7*likelyPer+census+likelySizing, Likely(h, o, steps))
	assert.Equal(t, StepBudget{Name: "baseline", Measurements: 1, Restarts: 1, Time: per + sizing + census, Likely: likelyPer + likelySizing + census,
		Runs: Runs{WarmUp: 2*90 + 90, Capacity: 6, Remeasure: 6, Latency: 1, Census: 1, Sizing: 24}}, b[0])
	assert.Equal(t, StepBudget{Name: StepThreads, Measurements: 4, Restarts: 4, Time: 4 * per, Likely: 4 * likelyPer,
		Runs: Runs{WarmUp: 4 * 2 * 90, Capacity: 4 * 6, Remeasure: 4 * 6, Latency: 4}}, b[2])
	assert.Equal(t, "baseline again", b[3].Name)

	o.Search = SearchOff
	assert.Equal(t, 4*per+census+sizing, Estimate(h, o, steps), "the rules alone")
	o.Connections = 64
	assert.Equal(t, 4*per+census, Estimate(h, o, steps), "-connections: no sizing")
	o.Keep = true
	assert.Equal(t, 3*per+census, Estimate(h, o, steps), "-keep: no drift guard")
	o.Keep, o.Connections = false, 0

	// An 8-queue veth and 2 CPUs: nic-queues is measured, and searched
	// over 1 and 8 besides the rule.
	o.Search = SearchOn
	h.CPUs.N, h.NIC.Channels = 2, &nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}
	// threads: 1 (rule), 4, 8, 200 (before) + the census: 3 more; nic-queues:
	// 2 (rule), 1, 8 (before): 1 more. The sizing for 2 CPUs: 14
	// connections doubled to 448, 6 counts again.
	assert.Equal(t, (1+1+1+3+1+1+1)*per+census+sizing, Estimate(h, o, steps))
}

// TestSizingBudget: the sizing's counts are those sizeLoad may try, the
// start doubled up to the bound, which caps the doubling on a big host
// (256 CPUs: 1707, 3414, 6828, 8192).
func TestSizingBudget(t *testing.T) {
	o := DefaultOptions()
	o.WarmUp = 0
	runs := sizingRuns(o.Repeat, o.Alpha)
	for _, tt := range []struct{ cpus, counts int }{{1, 6}, {8, 6}, {192, 4}, {256, 4}, {2000, 1}} {
		b := o.sizingBudget(tt.cpus)
		assert.Equal(t, tt.counts*runs, b.Runs.Sizing, "%d CPUs", tt.cpus)
		assert.Equal(t, time.Duration(tt.counts*runs)*(o.Duration+runAllowance), b.Time, "%d CPUs", tt.cpus)
	}
	o.LoadHost = "a,b,c"
	assert.Equal(t, 6*runs, o.sizingBudget(1).Runs.Sizing, "3 clients: still from the 7 connections of one CPU")
}
