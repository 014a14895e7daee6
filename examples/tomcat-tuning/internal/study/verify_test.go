//go:build linux

package study

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/jsonschema"
	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// journalRecord journals v under step as a change of kind, applied
// (apply: false leaves it begun, as a killed run does).
func journalRecord(t *testing.T, j *tuning.Journal, step, kind string, v any, applied bool) {
	t.Helper()
	u, err := tuning.NewUndo(kind, v)
	require.NoError(t, err)
	seq, err := j.Begin(step, []tuning.Undo{u})
	require.NoError(t, err)
	if applied {
		require.NoError(t, j.Applied(seq))
	}
}

// persistedFixture writes, in a fixture root, what -persist writes:
// server.xml with the guide's Connector attributes, the unit's
// persistent drop-in and a tuned profile, and journals each as -persist
// does (a closed journal at the returned path). It returns the journal
// and the three files.
func persistedFixture(t *testing.T) (journal, xml, dropIn, profile string) {
	t.Helper()
	h, xml, _ := guideHost(t)
	e, err := tomcatconf.EditServerXML(xml, func(c *tomcatconf.Config) error {
		_, err := c.SetConnector(h.Tomcat.Query, tomcatconf.ArmGuideConnectorAttrs(7), &tomcatconf.SetOptions{ToExecutor: true})
		return err
	})
	require.NoError(t, err)
	require.NoError(t, e.Apply(context.Background()))

	u := &tomcatconf.Unit{Name: "tomcat10.service", Root: h.Root, Persistent: true}
	dropIn, err = u.DropInPath()
	require.NoError(t, err)
	d := tomcatconf.DropInChange{Unit: u.Name, Root: h.Root, Persistent: true, Path: dropIn,
		Next: tomcatconf.DropIn{LimitNOFILE: 20000, CPUAffinity: []int{0, 1}}}
	b, err := d.Next.Render()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(dropIn), 0o755))
	require.NoError(t, os.WriteFile(dropIn, b, 0o644))

	profile = filepath.Join(h.Root, "etc", "tuned", ProfileName, "tuned.conf")
	text, err := (&persist.TunedProfile{Name: ProfileName, Sysfs: persist.OfflineCPUs(tuning.CPUSet{})}).Render()
	require.NoError(t, err)
	f, err := persist.PlanFile(profile, text)
	require.NoError(t, err)
	require.NoError(t, f.Apply(context.Background()))

	journal = filepath.Join(t.TempDir(), "j")
	j, err := tuning.CreateJournal(journal)
	require.NoError(t, err)
	journalRecord(t, j, "persist-server-xml", tomcatconf.ServerXMLEdit{}.Kind(), e, true)
	journalRecord(t, j, "persist-drop-in", tomcatconf.DropInChange{}.Kind(), d, true)
	journalRecord(t, j, "persist-tuned-profile", persist.FileEdit{}.Kind(), f, true)
	require.NoError(t, j.Close())
	return journal, xml, dropIn, profile
}

// verifyText runs Verify and returns what it printed.
func verifyText(t *testing.T, journal string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Verify(context.Background(), journal, &out)
	t.Logf("-verify:\n%s", out.String())
	return out.String(), err
}

// TestVerifyOutcomes: -verify of what -persist wrote (server.xml, the
// drop-in, a tuned profile, on a fixture root) holds; each file changed
// by hand fails, naming the step and what it found; a record that cannot
// be verified, or a change that never finished applying, fails named; a
// journal with nothing in force, or none at all, is told apart.
func TestVerifyOutcomes(t *testing.T) {
	t.Run("all hold", func(t *testing.T) {
		journal, xml, _, _ := persistedFixture(t)
		out, err := verifyText(t, journal)
		require.NoError(t, err)
		assert.Contains(t, out, "ok    persist-server-xml (tomcat-server-xml)\n      expected: "+xml+" as the edit wrote it")
		assert.Contains(t, out, "ok    persist-drop-in (systemd-drop-in)")
		assert.Contains(t, out, "ok    persist-tuned-profile (persist-file)")
		assert.Equal(t, 3, strings.Count(out, "found:    as expected\n"))
		assert.Contains(t, out, "verification succeeded: the host holds all 3 setting(s) the journal keeps in force")
	})
	edits := []struct {
		name, step  string
		file        func(xml, dropIn, profile string) string
		from, to    string
		wantFound   string
		wantInError string
	}{
		{"maxThreads edited", "persist-server-xml", func(x, _, _ string) string { return x }, `maxThreads="7"`, `maxThreads="50"`,
			`is "maxThreads=\"50\"", want "maxThreads=\"7\""`, "persist-server-xml"},
		{"drop-in edited", "persist-drop-in", func(_, d, _ string) string { return d }, "LimitNOFILE=20000", "LimitNOFILE=4096",
			"holds LimitNOFILE=4096 CPUAffinity=0-1, want LimitNOFILE=20000 CPUAffinity=0-1", "persist-drop-in"},
		{"profile edited", "persist-tuned-profile", func(_, _, p string) string { return p }, "[main]", "[main]\ninclude=throughput-performance",
			"content differs from what was written", "persist-tuned-profile"},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			journal, xml, dropIn, profile := persistedFixture(t)
			path := tt.file(xml, dropIn, profile)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Contains(t, string(data), tt.from)
			require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), tt.from, tt.to, 1)), 0o644))
			out, err := verifyText(t, journal)
			require.ErrorIs(t, err, ErrVerifyFailed)
			assert.Contains(t, err.Error(), "1 of 3 setting(s) the journal keeps in force do not hold ("+tt.wantInError+")")
			assert.Contains(t, out, "FAIL  "+tt.step+" (")
			assert.Contains(t, out, tt.wantFound)
			assert.Equal(t, 2, strings.Count(out, "found:    as expected\n"), "the other two hold")
			assert.Contains(t, out, "verification failed: 1 of 3 setting(s) do not hold; -revert -journal "+journal)
		})
	}
	t.Run("not verifiable and interrupted", func(t *testing.T) {
		journal := filepath.Join(t.TempDir(), "j")
		j, err := tuning.CreateJournal(journal)
		require.NoError(t, err)
		journalRecord(t, j, "odd", "no-such-kind", map[string]int{"x": 1}, true)
		journalRecord(t, j, remoteload.StepLoadHost, remoteload.KindRemoteDir, remoteload.SSHClient{Host: "client", Dir: "/tmp/nettune-w"}, true)
		e := tomcatconf.ServerXMLEdit{Path: filepath.Join(t.TempDir(), "server.xml"), Before: "a", After: "b"}
		require.NoError(t, os.WriteFile(e.Path, []byte("b"), 0o644))
		journalRecord(t, j, "access-log", tomcatconf.ServerXMLEdit{}.Kind(), e, false)
		seq, err := j.Begin("placement", nil)
		require.NoError(t, err)
		require.NoError(t, j.Applied(seq))
		require.NoError(t, j.Close())
		out, err := verifyText(t, journal)
		require.ErrorIs(t, err, ErrVerifyFailed)
		assert.Contains(t, err.Error(), "3 of 3 setting(s) the journal keeps in force do not hold (odd, "+remoteload.StepLoadHost+", access-log)")
		assert.Contains(t, out, `FAIL  odd (no-such-kind)`)
		assert.Contains(t, out, `cannot be verified: persist: journal record cannot be verified: no VerifyFunc for undo kind "no-such-kind"`)
		assert.Contains(t, out, "expected: the load worker's directory /tmp/nettune-w on client")
		assert.Contains(t, out, "-revert removes it")
		assert.Contains(t, out, "FAIL  access-log (tomcat-server-xml)\n      expected: "+e.Path)
		assert.Contains(t, out, "never finished applying (a run killed part-way)")
		assert.Contains(t, out, "placement: journaled no record")
	})
	t.Run("all reverted", func(t *testing.T) {
		journal := filepath.Join(t.TempDir(), "j")
		j, err := tuning.CreateJournal(journal)
		require.NoError(t, err)
		u, err := tuning.NewUndo("no-such-kind", 1)
		require.NoError(t, err)
		seq, err := j.Begin("odd", []tuning.Undo{u})
		require.NoError(t, err)
		require.NoError(t, j.Applied(seq))
		require.NoError(t, j.Reverted(seq))
		require.NoError(t, j.Close())
		out, err := verifyText(t, journal)
		require.NoError(t, err)
		assert.Contains(t, out, "nothing in force: every change the journal records is reverted")
	})
	t.Run("no journal", func(t *testing.T) {
		_, err := verifyText(t, filepath.Join(t.TempDir(), "none"))
		require.ErrorIs(t, err, os.ErrNotExist)
		assert.NotErrorIs(t, err, ErrVerifyFailed)
		assert.Contains(t, err.Error(), "nothing to verify")
	})
	t.Run("journal of a live run", func(t *testing.T) {
		journal := filepath.Join(t.TempDir(), "j")
		j, err := tuning.CreateJournal(journal)
		require.NoError(t, err)
		defer j.Close()
		_, err = verifyText(t, journal)
		require.ErrorIs(t, err, tuning.ErrJournalLocked)
	})
}

// TestVerifiersCoverReverters: every kind the study can revert it can
// verify, so a journal of the study never holds a kind -verify does not
// know.
func TestVerifiersCoverReverters(t *testing.T) {
	rev, ver := Reverters(tuning.NewDefault()), Verifiers(persist.NewDefault())
	for kind := range rev {
		assert.Contains(t, ver, kind)
	}
	assert.Len(t, ver, len(rev))
}

// TestPlanJSONGuide: -plan's document of the guide's host has the host
// and every step in order with its status, the server.xml steps their
// diffs, and the kinds -apply would journal; the measured part is empty.
func TestPlanJSONGuide(t *testing.T) {
	h, xml, _ := guideHostWith(t, func(root string) {
		grub, err := os.ReadFile(testutil.CorpusFile(t, "grub", "debian12-grub2-common-2.06-13+deb12u2.default-grub"))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "default"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "default", "grub"), grub, 0o644))
		// The guide's host takes cpu0 offline too.
		require.NoError(t, os.WriteFile(filepath.Join(root, "sys/devices/system/cpu/cpu0/online"), []byte("1\n"), 0o644))
	})
	o := DefaultOptions()
	o.Root = h.Root
	rep, err := PlanSteps(context.Background(), h, o)
	require.NoError(t, err)
	b, err := json.Marshal(PlanDocument(o, PlanJSONOf(h, rep, 0)))
	require.NoError(t, err)
	require.NoError(t, jsonschema.Validate(schemaFile, b), "the plan's document conforms to the schema")
	var doc struct {
		Steps []json.RawMessage `json:"steps"`
		Plan  PlanJSON          `json:"plan"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.NotNil(t, doc.Steps)
	assert.Empty(t, doc.Steps, "nothing measured")
	p := doc.Plan
	assert.False(t, p.Live)
	assert.Equal(t, h.Root, p.Root)
	assert.Equal(t, xml, p.Host.ServerXML)
	assert.Equal(t, 2, p.Host.NUMANodes)
	assert.Equal(t, "enp1s0f0np0", p.Host.NIC)
	assert.Equal(t, 1, p.Host.NICNode)
	var names []string
	byName := map[string]PlanStepJSON{}
	for _, s := range p.Steps {
		names = append(names, s.Step)
		byName[s.Step] = s
	}
	assert.Equal(t, StepNames(), names)
	iommu := byName[StepIOMMU]
	assert.Equal(t, StatusSkipped, iommu.Status)
	assert.Contains(t, iommu.Reason, "reboot required")
	assert.Contains(t, iommu.Diff, `+GRUB_CMDLINE_LINUX="iommu.strict=1 iommu.passthrough=0"`)
	for _, step := range []string{StepAccessLog, StepThreads} {
		s := byName[step]
		assert.Equal(t, StatusChange, s.Status, step)
		assert.True(t, strings.HasPrefix(s.Diff, "--- a"+xml+"\n+++ b"+xml+"\n"), "%s: %q", step, s.Diff)
		assert.Equal(t, []string{tomcatconf.ServerXMLEdit{}.Kind()}, s.Journal, step)
	}
	assert.Contains(t, byName[StepThreads].Diff, `+               maxThreads="7"`)
	require.NotNil(t, byName[StepThreads].Search)
	assert.Equal(t, "maxThreads", byName[StepThreads].Search.Setting)
	numa := byName[StepNUMALocal]
	assert.Equal(t, StatusChange, numa.Status)
	assert.Contains(t, numa.Describe, "CPUs 96-103 of node 1 (enp1s0f0np0's)")
	assert.Equal(t, []string{"cpu-online"}, numa.Journal)
	assert.Empty(t, byName[StepCPUs].Journal, "the CPUs are online already: unchanged")
	assert.Equal(t, StatusUnchanged, byName[StepCPUs].Status)
}
