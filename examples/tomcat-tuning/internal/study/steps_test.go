//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
)

func TestParseSteps(t *testing.T) {
	names, err := ParseSteps("threads, access-log")
	require.NoError(t, err)
	assert.Equal(t, []string{"threads", "access-log"}, names)
	_, err = ParseSteps("threads,nope")
	assert.ErrorContains(t, err, `unknown step "nope"`)
	_, err = ParseSteps("threads,threads")
	assert.ErrorContains(t, err, `"threads" named twice`)
	_, err = ParseSteps(" , ")
	assert.ErrorContains(t, err, "no step named")

	// The baseline is iommu, cpus and open-files, as in the Arm guide.
	o := DefaultOptions()
	o.Root = t.TempDir()
	require.NoError(t, os.MkdirAll(o.Root+"/sys/devices/system/cpu", 0o755))
	all, err := Steps(Host{Root: o.Root, CPUs: CPUs{N: 8}}, o, nil)
	require.NoError(t, err)
	require.Len(t, all, len(StepNames()))
	for i, st := range all {
		assert.Equal(t, StepNames()[i], st.Name)
		assert.Equal(t, i < 3, st.Baseline, st.Name)
	}
}

// FuzzParseSteps: any -steps text either fails with a message naming the
// flag or gives known, distinct steps whose names, joined, parse to the
// same list.
func FuzzParseSteps(f *testing.F) {
	for _, s := range []string{strings.Join(StepNames(), ","), "threads,access-log", " cpus , iommu", "", ",,", "threads,threads", "nope",
		"sysctl:net.core.somaxconn=4096", "sysctl:", "sysctl:=", "sysctl:a=b,sysctl:a=b", "access-log,sysctl:net.ipv4.tcp_rmem=4096 87380 6291456"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		names, err := ParseSteps(list)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "-steps: ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, n := range names {
			if !isStep(n) || seen[n] {
				t.Fatalf("step %q unknown or repeated in %q", n, list)
			}
			seen[n] = true
		}
		again, err := ParseSteps(strings.Join(names, ","))
		if err != nil || len(again) != len(names) {
			t.Fatalf("round trip of %q: %v", names, err)
		}
	})
}

// channelsFrom parses a captured `ethtool -l` output from the corpus.
func channelsFrom(t *testing.T, name string) nic.Channels {
	t.Helper()
	f, err := os.Open(testutil.CorpusFile(t, "cmd-outputs", name))
	require.NoError(t, err)
	defer f.Close()
	_, ch, err := nic.ParseChannels(f)
	require.NoError(t, err)
	return ch
}

// nicPlanner is a planner of the nic-queues step over a NIC value.
func nicPlanner(n int, c NIC) *planner {
	return &planner{h: Host{CPUs: CPUs{N: n}, NIC: c}, f: &Findings{}}
}

// TestNICQueuesPlan plans the nic-queues step on real channel counts
// captured from the guide's mlx5 NIC and others.
func TestNICQueuesPlan(t *testing.T) {
	ctx := context.Background()
	mlx5 := channelsFrom(t, "ethtool-l_arm-lp_grace-mlx5_enp1s0f0np0_before.txt")
	ch, err := nicPlanner(8, NIC{Name: "enp1s0f0np0", Channels: &mlx5}).nicQueues(ctx)
	require.NoError(t, err)
	assert.Contains(t, ch.Describe, "ethtool -L enp1s0f0np0 combined 8")
	if os.Geteuid() == 0 {
		require.Empty(t, ch.Skip)
		require.NotNil(t, ch.Apply)
		require.Len(t, ch.Undo, 1)
		assert.Equal(t, nic.ChannelsEdit{}.Kind(), ch.Undo[0].Kind)
		assert.Contains(t, string(ch.Undo[0].Data), `"interface":"enp1s0f0np0"`)
		assert.Contains(t, string(ch.Undo[0].Data), `"netns":`, "the namespace is recorded")
	} else {
		assert.Contains(t, ch.Skip, "CAP_NET_ADMIN")
	}

	// The guide's NIC after its own `ethtool -L combined 8`: with -search
	// off nothing to do; with the search (as root) the step is applied as
	// it is, journaled, so that 8 is measured against the other counts.
	after := channelsFrom(t, "ethtool-l_arm-lp_grace-mlx5_enp1s0f0np0_after-L-combined-8.txt")
	p := nicPlanner(8, NIC{Name: "enp1s0f0np0", Channels: &after})
	p.o.Search = SearchOff
	ch, err = p.nicQueues(ctx)
	require.NoError(t, err)
	assert.Empty(t, ch.Skip)
	assert.Nil(t, ch.Apply, "already 8 combined channels")
	p = nicPlanner(8, NIC{Name: "enp1s0f0np0", Channels: &after})
	ch, err = p.nicQueues(ctx)
	require.NoError(t, err)
	assert.Empty(t, ch.Skip)
	if os.Geteuid() == 0 {
		require.NotNil(t, ch.Apply)
		require.Len(t, ch.Undo, 1)
		assert.Contains(t, ch.Describe, "enp1s0f0np0 already has 8 queues: kept as it is and measured, for the search")
	} else {
		assert.Nil(t, ch.Apply, "the search needs root")
	}
	s := p.f.Searches[StepNICQueues]
	require.NotNil(t, s)
	assert.Equal(t, "8, 1, 4, 63", s.values(), "the rule (and the count before) first, measured once")

	// rx/tx only, no combined: rx N tx N.
	sep := channelsFrom(t, "ethtool-l_firedancer-issue1427_eno1_rx-tx-separate_no-combined.txt")
	// It has rx 4 tx 1 of at most 4 each: 2 CPUs make rx 2 tx 2.
	ch, err = nicPlanner(2, NIC{Name: "eno1", Channels: &sep}).nicQueues(ctx)
	require.NoError(t, err)
	assert.Regexp(t, `ethtool -L eno1 (rx 2 tx 2|tx 2 rx 2)`, ch.Describe)
	if os.Geteuid() == 0 {
		assert.Empty(t, ch.Skip)
		assert.NotNil(t, ch.Apply)
	} else {
		assert.Contains(t, ch.Skip, "CAP_NET_ADMIN")
	}

	// A request above the maximum is capped to it.
	big := channelsFrom(t, "ethtool-l_firedancer-issue1427_ens3f0_combined64-other1.txt")
	ch, err = nicPlanner(192, NIC{Name: "ens3f0", Channels: &big}).nicQueues(ctx)
	require.NoError(t, err)
	assert.Contains(t, ch.Describe, fmt.Sprintf("combined %d", big.MaxCombined))

	for _, tc := range []struct {
		n    NIC
		want string
	}{
		{NIC{Why: "no interface holds 10.0.0.1 (the URL's host): it is remote"}, "no NIC: no interface holds"},
		{NIC{Name: "lo", Virtual: true, Why: "lo is virtual"}, "no physical NIC"},
		{NIC{Name: "eth9", ChannelsErr: errors.New("operation not supported")}, "channels unknown"},
		{NIC{Name: "eth9", Channels: &nic.Channels{MaxOther: 1, Other: 1}}, "no combined or rx/tx channels"},
	} {
		ch, err := nicPlanner(8, tc.n).nicQueues(ctx)
		require.NoError(t, err)
		assert.Contains(t, ch.Skip, tc.want)
		assert.Nil(t, ch.Apply)
	}
}

// TestNICQueuesVirtual plans the nic-queues step on virtual devices: a
// veth with settable rx/tx channels is tuned (capped at its maximum, and
// said so); lo and a one-queue veth are skipped with the reason.
func TestNICQueuesVirtual(t *testing.T) {
	ctx := context.Background()
	veth := nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8}
	tests := []struct {
		name     string
		n        int
		nic      NIC
		describe []string
		skip     string // "" when the step changes the device
	}{
		{name: "veth with 8 queues, 2 CPUs", n: 2,
			nic:      NIC{Name: "ntsrv0", Virtual: true, Why: "ntsrv0 is virtual", Channels: &veth},
			describe: []string{"ethtool -L ntsrv0 rx 2 tx 2: rx 8 -> 2, tx 8 -> 2", "ntsrv0 is virtual, with channels to set (rx 8/8, tx 8/8)"}},
		{name: "more CPUs than queues: capped", n: 16,
			nic:      NIC{Name: "ntsrv0", Virtual: true, Channels: &nic.Channels{MaxRX: 8, MaxTX: 6, RX: 2, TX: 2}},
			describe: []string{"ethtool -L ntsrv0 rx 6 tx 6: rx 2 -> 6, tx 2 -> 6", "16 CPUs capped at ntsrv0's maximum of 6 queues"}},
		{name: "one-queue veth", n: 2,
			nic:  NIC{Name: "veth0", Virtual: true, Channels: &nic.Channels{MaxRX: 1, MaxTX: 1, RX: 1, TX: 1}},
			skip: "virtual veth0 has one queue (ethtool -l: rx 1/1, tx 1/1)"},
		{name: "loopback", n: 2,
			nic: NIC{Name: "lo", Virtual: true, Why: "lo is virtual (no device/: loopback, veth, bridge)",
				ChannelsErr: errors.New("nic: get channels on lo: operation not supported")},
			skip: "no physical NIC: lo is virtual (no device/: loopback, veth, bridge), without channels to set (nic: get channels on lo: operation not supported)"},
		{name: "virtual without channels", n: 2,
			nic:  NIC{Name: "br0", Virtual: true, Why: "br0 is virtual"},
			skip: "without channels to set (none reported)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := nicPlanner(tt.n, tt.nic).nicQueues(ctx)
			require.NoError(t, err)
			for _, d := range tt.describe {
				assert.Contains(t, ch.Describe, d)
			}
			if tt.skip != "" {
				assert.Contains(t, ch.Skip, tt.skip)
				assert.Nil(t, ch.Apply)
				return
			}
			if os.Geteuid() != 0 {
				assert.Contains(t, ch.Skip, "CAP_NET_ADMIN")
				return
			}
			require.Empty(t, ch.Skip)
			require.NotNil(t, ch.Apply)
			require.Len(t, ch.Undo, 1)
			assert.Equal(t, nic.ChannelsEdit{}.Kind(), ch.Undo[0].Kind)
			assert.Contains(t, string(ch.Undo[0].Data), `"interface":"`+tt.nic.Name+`"`)
		})
	}
}

// TestPlacement: the numa-local step moves Tomcat to the NIC's node under
// affinity; the plan and the run compute it from the Host alone.
func TestPlacement(t *testing.T) {
	cpus := func(s string) numa.CPUSet {
		c, err := numa.ParseCPUList(s)
		require.NoError(t, err)
		return c
	}
	o := DefaultOptions()
	o.CPUMethod = MethodAffinity
	h := Host{CPUs: CPUs{N: 1, Online: cpus("0-1"), Tomcat: cpus("0"), Load: cpus("1"),
		Topology: &numa.Topology{Online: cpus("0-1"), Nodes: []numa.Node{{ID: 0, CPUs: cpus("0"), AllCPUs: cpus("0")}, {ID: 1, CPUs: cpus("1"), AllCPUs: cpus("1")}}}},
		NIC: NIC{Name: "eth0", Node: 1}}
	p := InitialPlacement(h, o)
	assert.Equal(t, "0", p.Tomcat.String())
	assert.Equal(t, "1", p.Load.String())
	assert.Equal(t, p, PlacementAfter(h, o, StepAccessLog, p), "other steps keep it")
	q := PlacementAfter(h, o, StepNUMALocal, p)
	assert.Equal(t, "1", q.Tomcat.String(), "the NIC's node")
	assert.Equal(t, "0", q.Load.String())

	h.NIC.Node = numa.NodeUnknown
	assert.Equal(t, p, PlacementAfter(h, o, StepNUMALocal, p))
	_, skip := NUMAPick(h, o)
	assert.Contains(t, skip, "the NIC's NUMA node is unknown")
	o.CPUMethod = MethodHotplug
	assert.Equal(t, "0-1", InitialPlacement(h, o).Tomcat.String(), "hotplug: every online CPU until the cpus step")
	assert.Equal(t, "0", PlacementAfter(h, o, StepCPUs, InitialPlacement(h, o)).Tomcat.String())
}

// TestCPUsStepSaysWhereTheLoadRuns: under affinity the cpus step names the
// load generator's CPUs, -load-host's clients, or that none is left.
func TestCPUsStepSaysWhereTheLoadRuns(t *testing.T) {
	ctx := context.Background()
	cpus := func(s string) numa.CPUSet {
		c, err := numa.ParseCPUList(s)
		require.NoError(t, err)
		return c
	}
	for _, tc := range []struct {
		load     string
		loadHost string
		want     string
	}{
		{"1", "", "pin the JVM to CPUs 0 after each start (sched_setaffinity); load generator on CPUs 1; no host change"},
		{"", "bench@client", "pin the JVM to CPUs 0 after each start (sched_setaffinity); load generator on bench@client; no host change"},
		{"", "", "no CPU left for a local load generator"},
	} {
		h := Host{CPUs: CPUs{N: 1, Online: cpus("0-1"), Tomcat: cpus("0")}}
		if tc.load != "" {
			h.CPUs.Load = cpus(tc.load)
		}
		o := DefaultOptions()
		o.CPUMethod, o.LoadHost = MethodAffinity, tc.loadHost
		ch, err := (&planner{h: h, o: o, f: &Findings{}}).cpusStep(ctx)
		require.NoError(t, err)
		assert.Contains(t, ch.Describe, tc.want)
	}
}
