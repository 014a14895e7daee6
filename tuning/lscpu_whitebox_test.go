package tuning

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/testutil"
)

// labelled returns the lines of an lscpu output keyed by their label
// (the text up to and including the first ':', without indentation).
func labelled(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		label, _, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		m[strings.TrimSpace(label)+":"] = line
	}
	return m
}

// assertLinesMatch checks that every line of ours whose label the
// reference has is byte-identical to the reference's, and that at least
// the given labels were compared.
func assertLinesMatch(t *testing.T, ours, ref string, must ...string) {
	t.Helper()
	refLines := labelled(ref)
	compared := map[string]bool{}
	for label, line := range labelled(ours) {
		want, ok := refLines[label]
		if !ok {
			continue
		}
		compared[label] = true
		assert.Equal(t, want, line, "line %q", label)
	}
	for _, m := range must {
		assert.True(t, compared[m], "label %q not compared; ours:\n%s", m, ours)
	}
}

func readCorpus(t *testing.T, elem ...string) string {
	t.Helper()
	b, err := os.ReadFile(testutil.CorpusFile(t, elem...))
	require.NoError(t, err)
	return string(b)
}

// The seeds' lscpu after step 000 (0-7 online) and step 002 (96-103).
func TestSummaryMatchesSeedsLscpu(t *testing.T) {
	tests := []struct {
		file string
		want cpuset.Set
		must []string
	}{
		{"lscpu_arm-lp_graviton4-192cpu_0-7-online_TRUNCATED.txt", cpuset.Range(0, 7),
			[]string{"CPU(s):", "On-line CPU(s) list:", "Off-line CPU(s) list:"}},
		{"lscpu_arm-lp_graviton4-192cpu_96-103-online_TRUNCATED.txt", cpuset.Range(96, 103),
			[]string{"CPU(s):", "On-line CPU(s) list:", "Off-line CPU(s) list:", "NUMA:", "NUMA node(s):", "NUMA node0 CPU(s):", "NUMA node1 CPU(s):"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ref := readCorpus(t, "cmd-outputs", tt.file)
			h, _ := newFixtureHost(t, seedsHost())
			_, err := h.KeepOnline(context.Background(), tt.want, nil)
			require.NoError(t, err)
			s, err := h.Summary()
			require.NoError(t, err)
			assertLinesMatch(t, s.Text(nil), ref, tt.must...)
		})
	}
}

// The guide's Grace host: 144 CPUs, 72-79 online, lscpu's column at 26.
func TestSummaryMatchesGraceLscpu(t *testing.T) {
	ref := readCorpus(t, "cmd-outputs", "lscpu_arm-lp_grace-144cpu_72-79-online_TRUNCATED.txt")
	f := fixture{cpus: 144, nodes: 2, nodeOf: func(id int) int { return id / 72 }, online: cpuset.Range(72, 79)}
	h, _ := newFixtureHost(t, f)
	s, err := h.Summary()
	require.NoError(t, err)
	assertLinesMatch(t, s.Text(&SummaryOptions{Width: 26}), ref,
		"CPU(s):", "On-line CPU(s) list:", "Off-line CPU(s) list:", "NUMA node(s):", "NUMA node0 CPU(s):", "NUMA node1 CPU(s):")
}

// A POWER8 with sparse node ids 0, 1, 16, 17 and SMT pairs online, from
// prometheus/procfs issue 84: lscpu's flat form and its "0,1,8,9" pairs.
func TestSummaryMatchesSparseNodesLscpu(t *testing.T) {
	ref := readCorpus(t, "cmd-outputs", "lscpu_prometheus-procfs-issue84_power8_sparse-nodes16-17_offline.txt")
	var online []int
	for id := 0; id < 160; id++ {
		if id%8 < 2 {
			online = append(online, id)
		}
	}
	nodeIDs := []int{0, 1, 16, 17}
	f := fixture{cpus: 160, online: cpuset.Of(online...), nodeOf: func(id int) int { return nodeIDs[id/40] }}
	dir := f.build(t)
	for i, n := range nodeIDs {
		var ids []int
		for _, id := range online {
			if id/40 == i {
				ids = append(ids, id)
			}
		}
		writeFile(t, dir+"/sys/devices/system/node/node"+itoa(n)+"/cpulist", cpuset.Of(ids...).String()+"\n")
	}
	h, err := New(dir)
	require.NoError(t, err)
	s, err := h.Summary()
	require.NoError(t, err)
	assertLinesMatch(t, s.Text(&SummaryOptions{Flat: true, Width: 23}), ref,
		"CPU(s):", "On-line CPU(s) list:", "Off-line CPU(s) list:", "NUMA node(s):",
		"NUMA node0 CPU(s):", "NUMA node1 CPU(s):", "NUMA node16 CPU(s):", "NUMA node17 CPU(s):")
}

func itoa(n int) string { return cpuName(n)[3:] }

// Captured trees: lscpu --sysroot was run on two of them; the others
// lack files lscpu needs and still have to read.
func TestSummaryCapturedTrees(t *testing.T) {
	t.Run("ghw offlineCPUs", func(t *testing.T) {
		t.Parallel()
		dir := testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", "ghw-linux-amd64-offlineCPUs.tar.gz"))
		h, err := New(dir)
		require.NoError(t, err)
		st, err := h.CPUState()
		require.NoError(t, err)
		assert.Equal(t, "2-3", st.Offline.String())
		c2, ok := st.CPU(2)
		require.True(t, ok)
		assert.Equal(t, CPU{ID: 2, Online: false, Hotpluggable: true, Node: 0}, c2, "offline CPUs keep their node link")
		s, err := h.Summary()
		require.NoError(t, err)
		assert.Equal(t, "0-1", s.Nodes[0].CPUs.String(), "offline CPUs leave the node's cpulist")
		ref := readCorpus(t, "cmd-outputs", "lscpu_sysroot_ghw-offlineCPUs.txt")
		assertLinesMatch(t, s.Text(&SummaryOptions{Flat: true, Width: 36}), ref,
			"CPU(s):", "On-line CPU(s) list:", "Off-line CPU(s) list:", "NUMA node(s):", "NUMA node0 CPU(s):")
	})
	t.Run("kunpeng 920, NUL-terminated files", func(t *testing.T) {
		t.Parallel()
		dir := testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", "128arm-2pa2n8cluster4co.tar.bz2"))
		h, err := New(dir)
		require.NoError(t, err)
		st, err := h.CPUState()
		require.NoError(t, err)
		assert.Equal(t, "0-127", st.Hotpluggable().String(), "arm64: cpu0 has an online file")
		s, err := h.Summary()
		require.NoError(t, err)
		ref := readCorpus(t, "cmd-outputs", "lscpu_sysroot_hwloc-128arm-kunpeng920-2socket-4node.txt")
		assertLinesMatch(t, s.Text(&SummaryOptions{Flat: true, Width: 21}), ref,
			"CPU(s):", "On-line CPU(s) list:", "NUMA node(s):", "NUMA node0 CPU(s):", "NUMA node3 CPU(s):")
	})
	t.Run("xeon L5640, no possible/present/online files", func(t *testing.T) {
		t.Parallel()
		dir := testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", "ghw-linux-amd64-intel-xeon-L5640-2node.tar.gz"))
		h, err := New(dir)
		require.NoError(t, err)
		st, err := h.CPUState()
		require.NoError(t, err)
		assert.Equal(t, "0-23", st.Present.String())
		assert.Equal(t, "0-23", st.Online.String(), "CPUs without online files count as online")
		s, err := h.Summary()
		require.NoError(t, err)
		require.Len(t, s.Nodes, 2)
		assert.Equal(t, "0,2,4,6,8,10,12,14,16,18,20,22", s.Nodes[0].CPUs.Lscpu())
	})
	t.Run("32em64t, possible beyond present", func(t *testing.T) {
		t.Parallel()
		dir := testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", "32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2"))
		h, err := New(dir)
		require.NoError(t, err)
		st, err := h.CPUState()
		require.NoError(t, err)
		assert.Equal(t, "16-127", st.Offline.String(), "the kernel's offline list")
		assert.True(t, st.PresentOffline().IsEmpty())
		s, err := h.Summary()
		require.NoError(t, err)
		assert.Equal(t, 16, s.CPUs)
		assert.NotContains(t, s.Text(nil), "Off-line")
		// x86: cpu0 has no online file, so keeping 8-15 is refused.
		_, err = h.PlanKeepOnline(cpuset.Range(8, 15))
		require.NoError(t, err)
		_, err = h.KeepOnline(context.Background(), cpuset.Range(8, 15), nil)
		require.ErrorIs(t, err, ErrNotHotpluggable)
	})
}

// This machine: our summary against the real lscpu on the real /sys.
func TestSummaryMatchesRealLscpu(t *testing.T) {
	testutil.StableCPUs(t)
	if _, err := exec.LookPath("lscpu"); err != nil {
		t.Skip("skipped: lscpu (util-linux) not installed")
	}
	out, err := exec.Command("lscpu").Output()
	require.NoError(t, err)
	ref := string(out)
	// lscpu's column depends on its longest label; take it from its output.
	line := labelled(ref)["CPU(s):"]
	width := len(line) - len(strings.TrimLeft(line[len("CPU(s):"):], " "))
	s, err := NewDefault().Summary()
	require.NoError(t, err)
	ours := s.Text(&SummaryOptions{Flat: true, Width: width})
	must := []string{"CPU(s):", "On-line CPU(s) list:", "NUMA node(s):", "NUMA node0 CPU(s):"}
	if !s.Offline.IsEmpty() {
		must = append(must, "Off-line CPU(s) list:")
	}
	assertLinesMatch(t, ours, ref, must...)
}
