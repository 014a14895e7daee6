//go:build linux

package study

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tomcatconf"
)

func values(cs []Candidate) []int {
	v := make([]int, len(cs))
	for i, c := range cs {
		v[i] = c.Value
	}
	return v
}

func TestThreadCandidates(t *testing.T) {
	// The guide's 8 CPUs on Debian's server.xml (no maxThreads: 200).
	cs := ThreadCandidates(8, nil, 200)
	assert.Equal(t, []int{7, 16, 32, 200}, values(cs))
	assert.Equal(t, "the guide's rule: CPUs − 1", cs[0].Why)
	assert.True(t, cs[3].Previous)
	assert.Contains(t, cs[3].Why, "Tomcat's default")

	// This host under affinity: one CPU for Tomcat; the census's 2 is
	// measured once, with both reasons.
	cs = ThreadCandidates(1, &tomcatconf.Recommendation{MaxThreads: 2}, 200)
	assert.Equal(t, []int{1, 2, 4, 200}, values(cs))
	assert.Equal(t, "the thread census; 2 × CPUs", cs[1].Why)

	// A pool configured at 16 is the step before's: not measured again.
	cs = ThreadCandidates(8, &tomcatconf.Recommendation{MaxThreads: 9}, 16)
	assert.Equal(t, []int{7, 9, 16, 32}, values(cs))
	assert.True(t, cs[2].Previous)
	assert.Equal(t, "2 × CPUs; as before the step", cs[2].Why)

	// The rule is never the step before's: it is the step's own change.
	cs = ThreadCandidates(8, nil, 7)
	assert.Equal(t, []int{7, 16, 32}, values(cs))
	assert.False(t, cs[0].Previous)
}

func TestQueueCandidates(t *testing.T) {
	mlx5 := channelsFrom(t, "ethtool-l_arm-lp_grace-mlx5_enp1s0f0np0_before.txt")
	cs := QueueCandidates(8, mlx5.MaxQueues(), mlx5.Queues())
	assert.Equal(t, []int{8, 1, 4, 63}, values(cs), "the guide's NIC: 63 combined now")
	assert.True(t, cs[3].Previous, "the maximum is what it runs now")
	// 192 CPUs on a 64-queue device: the rule is capped; CPUs/2 too.
	cs = QueueCandidates(192, 64, 64)
	assert.Equal(t, []int{64, 1}, values(cs))
	// A veth with 8 queues, 2 CPUs.
	cs = QueueCandidates(2, 8, 8)
	assert.Equal(t, []int{2, 1, 8}, values(cs))
}

// searchOf returns a threads search whose candidates have six runs
// around the given medians, and p99 at the common rate 1, 2, 3 and 4 ms
// (reversed with lowLast), chosen by PickBest.
func searchOf(t *testing.T, lowLast bool, medians ...float64) *Search {
	t.Helper()
	s := &Search{Step: StepThreads, Setting: "maxThreads", Candidates: ThreadCandidates(1, nil, 200)}
	require.Len(t, s.Candidates, len(medians))
	figs := make([]loadgen.StepFigures, len(medians))
	for i, m := range medians {
		figs[i] = loadgen.StepFigures{Name: "c", CapacityRuns: []float64{m * 0.99, m * 0.995, m, m, m * 1.005, m * 1.01},
			Latency: loadgen.Figures{Load: 1000, P99: time.Duration(i+1) * time.Millisecond}}
		if lowLast {
			figs[i].Latency.P99 = time.Duration(len(medians)-i) * time.Millisecond
		}
		s.Candidates[i].Figures = &figs[i]
	}
	ch, err := loadgen.PickBest(figs, nil)
	require.NoError(t, err)
	s.Choice = &ch
	return s
}

func TestSearchLabel(t *testing.T) {
	s := searchOf(t, false, 21000, 29000, 27000, 24000)
	assert.Equal(t, 1, s.Choice.Best)
	assert.Equal(t, "maxThreads=2 (measured best; the guide's rule 1: −28 %)", s.Label())
	text := s.Text()
	assert.Contains(t, text, "threads: maxThreads searched over 1, 2, 4, 200")
	assert.Regexp(t, `\n\s+2\s+best\s+29000 req/s`, text)
	assert.Contains(t, text, "kept maxThreads=2: highest capacity")

	s = searchOf(t, false, 30000, 24000, 23000, 22000)
	assert.Equal(t, "maxThreads=1 (the guide's rule, measured best of 1, 2, 4, 200)", s.Label())

	// Tied on capacity: the lower p99 wins, and the rule's change is
	// said to be no significant one.
	s = searchOf(t, true, 29900, 30000, 20000, 20000)
	assert.Equal(t, 1, s.Choice.Best)
	assert.Equal(t, "maxThreads=2 (measured best; the guide's rule 1: −0.3 %, no significant change)", s.Label())
	assert.Contains(t, s.Text(), "kept maxThreads=2: lowest p99 at 1000 req/s (3.00ms) of 2 not significantly different in capacity")
}

// debianBase is a CATALINA_BASE holding only a copy of Debian's tomcat10
// server.xml (tomcatconf's testdata): its folder, the file's path and
// its bytes.
func debianBase(t *testing.T) (base, path string, orig []byte) {
	t.Helper()
	orig, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "tomcatconf", "testdata", "debian-tomcat10-10.1.60-server.xml"))
	require.NoError(t, err)
	base = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(base, "conf"), 0o755))
	path = filepath.Join(base, "conf", "server.xml")
	require.NoError(t, os.WriteFile(path, orig, 0o644))
	return base, path, orig
}

// TestThreadsSearchOnDebianServerXML plans the threads step on a copy of
// Debian's tomcat10 server.xml and drives its search's setter: each
// candidate sets the Connector's pool, and the pool before the step puts
// the file back byte for byte.
func TestThreadsSearchOnDebianServerXML(t *testing.T) {
	ctx := context.Background()
	base, path, orig := debianBase(t)
	f := &Findings{Census: &tomcatconf.Recommendation{MaxThreads: 3}}
	p := &planner{h: Host{CPUs: CPUs{N: 2}, Tomcat: Tomcat{Instance: &tomcatconf.Instance{Base: base},
		Query: tomcatconf.ConnectorQuery{Port: "8080"}}}, o: DefaultOptions(), f: f}
	ch, err := p.threads(ctx)
	require.NoError(t, err)
	assert.Contains(t, ch.Describe, "maxThreads=1 from the guide's CPUs - 1 = 1")
	assert.Contains(t, ch.Describe, "search: maxThreads=1 (the guide's rule: CPUs − 1) first, then measured against 3 (the thread census), 4 (2 × CPUs), 8 (4 × CPUs), 200 (as before the step, Tomcat's default)")
	s := f.Searches[StepThreads]
	require.NotNil(t, s)
	require.NoError(t, ch.Apply(ctx))

	maxThreads := func() int {
		c, err := tomcatconf.Load(path)
		require.NoError(t, err)
		n, err := c.MaxThreads(tomcatconf.ConnectorQuery{Port: "8080"})
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, 1, maxThreads())
	for _, c := range s.Candidates[1:] {
		require.NoError(t, s.set(ctx, c), "%d", c.Value)
		assert.Equal(t, c.Value, maxThreads())
		if c.Previous {
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(orig), string(got), "the pool before the step is the file before the step")
		}
	}
	// The step's own undo still puts the original back after the search.
	require.NoError(t, s.set(ctx, s.Candidates[2]))
	require.NoError(t, tomcatconf.ServerXMLEdit{Path: path, Before: string(orig)}.Undo(ctx))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(orig), string(got))

	// -search=false: the rule alone, no search.
	p.o.Search, p.f = SearchOff, &Findings{}
	ch, err = p.threads(ctx)
	require.NoError(t, err)
	assert.NotContains(t, ch.Describe, "search:")
	assert.Empty(t, p.f.Searches)
}

// TestThreadsSearchFromTheRule: a server.xml that already has the guide's
// Connector attributes (a second study, after -persist kept the rule) is
// still searched: the step is applied as it is (the same bytes, with an
// undo), measured, and the other candidates tried against it; the rule
// is the pool before the step, measured once. With -search=false there is
// nothing to do.
func TestThreadsSearchFromTheRule(t *testing.T) {
	ctx := context.Background()
	base, path, _ := debianBase(t)
	planner := func(search string) *planner {
		o := DefaultOptions()
		o.Search = search
		return &planner{h: Host{CPUs: CPUs{N: 2}, Tomcat: Tomcat{Instance: &tomcatconf.Instance{Base: base},
			Query: tomcatconf.ConnectorQuery{Port: "8080"}}}, o: o, f: &Findings{}}
	}
	first, err := planner(SearchOn).threads(ctx)
	require.NoError(t, err)
	require.NoError(t, first.Apply(ctx))
	ruled, err := os.ReadFile(path)
	require.NoError(t, err)

	p := planner(SearchOn)
	ch, err := p.threads(ctx)
	require.NoError(t, err)
	require.NotNil(t, ch.Apply, "applied as it is, for the search")
	require.Len(t, ch.Undo, 1)
	assert.Contains(t, ch.Describe, path+" already has the guide's Connector attributes: kept as it is and measured, for the search")
	require.NoError(t, ch.Apply(ctx))
	require.NoError(t, ch.Verify(ctx))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(ruled), string(got), "the same bytes")
	s := p.f.Searches[StepThreads]
	require.NotNil(t, s)
	assert.Equal(t, "1, 4, 8", s.values())
	for _, c := range s.Candidates {
		assert.False(t, c.Previous, "%d: the rule is the pool before the step, measured by the step", c.Value)
	}

	ch, err = planner(SearchOff).threads(ctx)
	require.NoError(t, err)
	assert.Nil(t, ch.Apply, "-search=false: nothing to do")
}

// TestUserCandidates: -threads-candidates and -queues-candidates replace
// the generated candidates; the rule stays first and the value before
// the step last, a value the rule or the pool already has is measured
// once, and queue counts are capped at the device's maximum.
func TestUserCandidates(t *testing.T) {
	o := DefaultOptions()
	o.ThreadCandidates = []int{16, 7, 64}
	cs := o.threadCandidates(8, &tomcatconf.Recommendation{MaxThreads: 9}, 200)
	assert.Equal(t, []int{7, 16, 64, 200}, candidateValues(cs))
	assert.Equal(t, "the guide's rule: CPUs − 1; -threads-candidates", cs[0].Why)
	assert.True(t, cs[3].Previous, "the pool before: the step before's figures")
	assert.Equal(t, []int{7, 9, 16, 32, 200}, candidateValues(DefaultOptions().threadCandidates(8, &tomcatconf.Recommendation{MaxThreads: 9}, 200)),
		"without the flag, the generated ones")

	o.QueueCandidates = []int{4, 99}
	cs = o.queueCandidates(8, 16, 16)
	assert.Equal(t, []int{8, 4, 16}, candidateValues(cs), "99 capped at 16, the device's maximum and the count before")
	assert.Equal(t, "the guide's rule: queues = CPUs", cs[0].Why, "no generated reason merged in")
	assert.Equal(t, "-queues-candidates; as before the step", cs[2].Why)
	assert.True(t, cs[2].Previous)
}

func candidateValues(cs []Candidate) []int {
	v := make([]int, len(cs))
	for i, c := range cs {
		v[i] = c.Value
	}
	return v
}
