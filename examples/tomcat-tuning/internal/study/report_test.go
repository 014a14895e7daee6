//go:build linux

package study

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

func TestFormatResults(t *testing.T) {
	res := []tuning.StepResult{
		{Name: "threads", Status: tuning.StatusReverted},
		{Name: "nic", Status: tuning.StatusSkipped, Reason: "no physical NIC"},
	}
	assert.Equal(t, "step     status     detail\n"+
		"threads  reverted   \n"+
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
			{Name: "baseline", Capacity: loadgen.SpreadOf([]float64{11000, 12000, 11500}), Latency: lat(10 * time.Millisecond)},
			{Name: "access-log", Capacity: loadgen.SpreadOf([]float64{14000, 14500, 15000}), CapacityErrors: 2, Latency: lat(5 * time.Millisecond)},
			{Name: "threads", Capacity: loadgen.SpreadOf([]float64{14200, 14900, 15100}), Latency: lat(4 * time.Millisecond)},
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
		CommonRate float64          `json:"common_rate_rps"`
		Steps      []map[string]any `json:"steps"`
		Comparison any              `json:"comparison"`
	}
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Nil(t, back.Comparison, "each figure once: no second copy of the table")
	assert.Equal(t, 7000.0, back.CommonRate)
	status := map[string]string{}
	for _, st := range back.Steps {
		status[st["step"].(string)] = st["status"].(string)
	}
	assert.Equal(t, map[string]string{"baseline": "measured", "iommu": "skipped", "cpus": "measured", "open-files": "unchanged",
		"access-log": "measured", "threads": "measured", "nic-queues": "failed", "numa-local": "skipped"}, status)
	require.Len(t, back.Steps, 8)
	assert.Equal(t, "baseline", back.Steps[2]["measured_in"], "cpus is part of the baseline")
	assert.NotContains(t, back.Steps[2], "capacity_rps")
	assert.Equal(t, "reboot required", back.Steps[1]["reason"])
	al := back.Steps[4]
	assert.Equal(t, 14500.0, al["capacity_rps"])
	assert.Equal(t, 14000.0, al["capacity_min_rps"])
	assert.Equal(t, 15000.0, al["capacity_max_rps"])
	assert.Equal(t, 3.0, al["capacity_runs"])
	assert.Equal(t, false, al["vs_baseline_noise"])
	assert.InDelta(t, 26.09, al["vs_baseline_percent"], 0.01)
	assert.Equal(t, map[string]any{"rate_rps": 7000.0, "requests": 35000.0, "mean_ms": 0.0, "p50_ms": 1.0, "p90_ms": 0.0, "p99_ms": 5.0,
		"p999_ms": 0.0, "max_ms": 40.0, "p99_vs_baseline_percent": -50.0, "errors": 0.0, "jvm_cpu_percent": 50.0}, al["latency"])
	assert.Equal(t, true, back.Steps[5]["vs_previous_noise"], "14900 against 14500: inside the spread")
	assert.NotContains(t, back.Steps[6], "capacity_rps")
}

// TestCheck: every option is checked in one place, before anything runs.
func TestCheck(t *testing.T) {
	require.NoError(t, DefaultOptions().Check())
	for _, tt := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.CPUMethod = "magic" }, `-cpu-method "magic": want hotplug or affinity`},
		{func(o *Options) { o.CPUs = 0 }, "-cpus 0: want 1 or more"},
		{func(o *Options) { o.Repeat = 0 }, "-repeat 0: want 1 or more"},
		{func(o *Options) { o.Apply, o.Root = true, "/tmp" }, "cannot be used with -root"},
		{func(o *Options) { o.Steps = []string{"nope"} }, `-steps: unknown step "nope"`},
		{func(o *Options) { o.LoadNetNS, o.RemoteLoad = "cli", true }, "give one of them"},
		{func(o *Options) { o.LoadNetNS = "../cli" }, `-load-netns "../cli": want the name of a namespace in /run/netns`},
		{func(o *Options) { o.LoadNetNS = ".." }, "want the name of a namespace"},
		// Issue 24, case 7: checked before the host changes, not after.
		{func(o *Options) { o.URL = "ftp://x" }, `-url: loadgen: URL "ftp://x": want an http:// or https:// URL`},
		{func(o *Options) { o.URL = "http://" }, "no host"},
		{func(o *Options) { o.JSONFile = "/nonexistent-dir/steps.json" }, "-json /nonexistent-dir/steps.json: cannot be written"},
		{func(o *Options) { o.PlotFile = os.TempDir() }, "a folder, want a file to write"},
		{func(o *Options) { o.Iface = "nosuch0" }, `-iface "nosuch0"`},
	} {
		o := DefaultOptions()
		tt.set(&o)
		assert.ErrorContains(t, o.Check(), tt.want)
	}
	o := DefaultOptions()
	o.LoadNetNS = "nettune-missing-namespace"
	assert.ErrorContains(t, o.Check(), "create it with `ip netns add nettune-missing-namespace`")
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
