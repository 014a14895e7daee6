package importer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tuning"
)

// writeTree writes files (path relative to root: content) under a new root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A two-CPU host tree, cpu0 not hot-pluggable: the CPU state, the dry run
// of keeping cpu0 only, a sysctl, lscpu's lines and numa's view of it.
func TestTuningAndNUMA(t *testing.T) {
	root := writeTree(t, map[string]string{
		"sys/devices/system/cpu/possible":         "0-1\n",
		"sys/devices/system/cpu/present":          "0-1\n",
		"sys/devices/system/cpu/online":           "0-1\n",
		"sys/devices/system/cpu/cpu0/node0/.keep": "",
		"sys/devices/system/cpu/cpu1/online":      "1\n",
		"sys/devices/system/cpu/cpu1/node0/.keep": "",
		"sys/devices/system/node/node0/cpulist":   "0-1\n",
		"proc/sys/net/ipv4/tcp_max_tw_buckets":    "65536\n",
	})
	h, err := tuning.New(root)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tuning.ParseCPUList("0")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := h.PlanKeepOnline(want)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Offline.String() != "1" || len(plan.Blocked) != 0 {
		t.Fatalf("plan: %s", plan)
	}
	st, err := h.CPUState()
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Hotpluggable().String(); got != "1" {
		t.Fatalf("hot-pluggable: %q, want 1", got)
	}
	sum, err := h.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.Text(&tuning.SummaryOptions{Flat: true}), "On-line CPU(s) list:") {
		t.Fatalf("summary:\n%s", sum)
	}
	ch, err := h.SysctlChange("net.ipv4.tcp_max_tw_buckets", "2000000")
	if err != nil || ch.Describe != "net.ipv4.tcp_max_tw_buckets: 65536 -> 2000000" {
		t.Fatalf("sysctl change: %+v, %v", ch, err)
	}
	if _, err := tuning.OpenFilesLimit(0); err != nil {
		t.Fatal(err)
	}

	nh, err := numa.New(root)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := nh.Topology()
	if err != nil {
		t.Fatal(err)
	}
	keep, err := topo.PickCPUs(0, 2, nil)
	if err != nil || keep.Lscpu() != "0,1" {
		t.Fatalf("pick: %s, %v", keep.Lscpu(), err)
	}
}

// A plan of one file step, run with a journal and reverted at the end.
func TestTuningPlan(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "server.xml")
	if err := os.WriteFile(conf, []byte(`<Connector maxThreads="200"/>`), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := tuning.CreateJournal(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	step := tuning.Step{Name: "threads", Prepare: func(context.Context) (*tuning.Change, error) {
		return tuning.FileChange(conf, func(old []byte) ([]byte, error) {
			return []byte(strings.Replace(string(old), "200", "7", 1)), nil
		})
	}}
	r := &tuning.Runner{Journal: j, Reverters: tuning.NewDefault().Reverters()}
	res, err := r.Run(context.Background(), []tuning.Step{step})
	if err != nil || res[0].Status != tuning.StatusReverted {
		t.Fatalf("run: %+v, %v", res, err)
	}
	entries, err := tuning.ReadJournal(j.Path())
	if err != nil || len(entries) != 1 || !entries[0].Reverted {
		t.Fatalf("journal: %+v, %v", entries, err)
	}
}
