package tuning_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"

	"github.com/nettune/nettune/internal/testutil"
)

// fileStep rewrites path by replacing from with to.
func fileStep(name, path, from, to string) tuning.Step {
	return tuning.Step{
		Name:  name,
		Title: "replace " + from,
		Prepare: func(context.Context) (*tuning.Change, error) {
			return tuning.FileChange(path, func(old []byte) ([]byte, error) {
				return []byte(strings.Replace(string(old), from, to, 1)), nil
			})
		},
	}
}

// counterStep is a step on an in-memory value, with its own undo kind.
type counter struct{ v int }

func (c *counter) step(name string, to int, applyErr error) tuning.Step {
	return tuning.Step{Name: name, Prepare: func(context.Context) (*tuning.Change, error) {
		u, err := tuning.NewUndo("counter", c.v)
		if err != nil {
			return nil, err
		}
		return &tuning.Change{
			Describe: fmt.Sprintf("counter: %d -> %d", c.v, to),
			Undo:     []tuning.Undo{u},
			Apply: func(context.Context) error {
				c.v = to // half applied even when it then fails
				return applyErr
			},
		}, nil
	}}
}

func (c *counter) reverters() tuning.Reverters {
	return tuning.Reverters{
		tuning.UndoFile: tuning.RevertFile,
		"counter": func(_ context.Context, data json.RawMessage) error {
			return json.Unmarshal(data, &c.v)
		},
	}
}

func setupFiles(t *testing.T) (dir, a, b string) {
	dir = t.TempDir()
	a, b = filepath.Join(dir, "server.xml"), filepath.Join(dir, "grub")
	require.NoError(t, os.WriteFile(a, []byte("<Connector maxThreads=\"200\"/>\n"), 0o640))
	require.NoError(t, os.WriteFile(b, []byte("GRUB_CMDLINE_LINUX=\"quiet\"\n"), 0o644))
	return dir, a, b
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func TestRunnerAppliesMeasuresAndReverts(t *testing.T) {
	dir, a, b := setupFiles(t)
	j, err := tuning.CreateJournal(filepath.Join(dir, "journal"))
	require.NoError(t, err)
	defer j.Close()
	c := &counter{v: 1}
	var seen []string
	r := &tuning.Runner{Journal: j, Reverters: c.reverters(), AfterStep: func(_ context.Context, s tuning.StepResult) error {
		seen = append(seen, fmt.Sprintf("%s:%s:%s:%d", s.Name, s.Status, read(t, a)[:25], c.v))
		return nil
	}}
	steps := []tuning.Step{
		fileStep("threads", a, `maxThreads="200"`, `maxThreads="7"`),
		{Name: "nic", Prepare: func(context.Context) (*tuning.Change, error) {
			return &tuning.Change{Skip: "no physical NIC"}, nil
		}},
		fileStep("noop", b, "absent", "x"),
		c.step("cpus", 8, nil),
	}
	res, err := r.Run(context.Background(), steps)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`baseline:unchanged:<Connector maxThreads="20:1`,
		`threads:applied:<Connector maxThreads="7":1`,
		`cpus:applied:<Connector maxThreads="7":8`,
	}, seen)
	assert.Equal(t, tuning.StatusReverted, res[0].Status)
	assert.Equal(t, tuning.StatusSkipped, res[1].Status)
	assert.Equal(t, "no physical NIC", res[1].Reason)
	assert.Equal(t, tuning.StatusNoChange, res[2].Status)
	assert.Equal(t, tuning.StatusReverted, res[3].Status)
	assert.Contains(t, res[0].Describe, "-<Connector maxThreads=\"200\"/>\n+<Connector maxThreads=\"7\"/>\n")
	assert.Equal(t, "counter: 1 -> 8", res[3].Describe)
	// Everything is back; the file keeps its mode.
	assert.Equal(t, "<Connector maxThreads=\"200\"/>\n", read(t, a))
	fi, err := os.Stat(a)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	assert.Equal(t, 1, c.v)
	entries, err := tuning.ReadJournal(j.Path())
	require.NoError(t, err)
	require.Len(t, entries, 2)
	for _, e := range entries {
		assert.True(t, e.Applied && e.Reverted, e.Step)
	}
}

func TestRunnerRevertsOnApplyError(t *testing.T) {
	dir, a, _ := setupFiles(t)
	j, err := tuning.CreateJournal(filepath.Join(dir, "journal"))
	require.NoError(t, err)
	defer j.Close()
	c := &counter{v: 1}
	boom := errors.New("EBUSY on cpu5")
	r := &tuning.Runner{Journal: j, Reverters: c.reverters(), Keep: true}
	res, err := r.Run(context.Background(), []tuning.Step{
		fileStep("threads", a, "200", "7"),
		c.step("cpus", 8, boom),
		c.step("never", 9, nil),
	})
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), `apply step "cpus"`)
	assert.Equal(t, 1, c.v, "the half-applied step is reverted too")
	assert.Equal(t, "<Connector maxThreads=\"200\"/>\n", read(t, a))
	assert.Equal(t, tuning.StatusReverted, res[0].Status)
	assert.Equal(t, tuning.StatusReverted, res[1].Status)
	assert.Equal(t, tuning.StatusNotRun, res[2].Status)
}

func TestRunnerRevertsOnCancel(t *testing.T) {
	dir, a, _ := setupFiles(t)
	j, err := tuning.CreateJournal(filepath.Join(dir, "journal"))
	require.NoError(t, err)
	defer j.Close()
	c := &counter{v: 1}
	ctx, cancel := context.WithCancel(context.Background())
	r := &tuning.Runner{Journal: j, Reverters: c.reverters(), Keep: true,
		AfterStep: func(_ context.Context, s tuning.StepResult) error {
			if s.Name == "threads" {
				cancel() // SIGINT arrives while measuring
			}
			return nil
		}}
	_, err = r.Run(ctx, []tuning.Step{fileStep("threads", a, "200", "7"), c.step("cpus", 8, nil)})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "<Connector maxThreads=\"200\"/>\n", read(t, a))
	assert.Equal(t, 1, c.v)
}

func TestRunnerMissingReverter(t *testing.T) {
	dir, _, _ := setupFiles(t)
	j, err := tuning.CreateJournal(filepath.Join(dir, "journal"))
	require.NoError(t, err)
	defer j.Close()
	c := &counter{v: 1}
	r := &tuning.Runner{Journal: j, Reverters: tuning.Reverters{}}
	_, err = r.Run(context.Background(), []tuning.Step{c.step("cpus", 8, nil)})
	require.ErrorContains(t, err, `no RevertFunc registered for undo kind "counter"`)
	assert.Equal(t, 1, c.v, "nothing applied without a way back")
}

func TestKeepThenRevertJournal(t *testing.T) {
	dir, a, b := setupFiles(t)
	path := filepath.Join(dir, "journal")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)
	c := &counter{v: 1}
	r := &tuning.Runner{Journal: j, Reverters: c.reverters(), Keep: true}
	_, err = r.Run(context.Background(), []tuning.Step{
		fileStep("threads", a, "200", "7"),
		fileStep("iommu", b, `"quiet"`, `"quiet iommu.strict=1"`),
	})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Contains(t, read(t, b), "iommu.strict=1")

	// A new run refuses to start over unreverted changes.
	_, err = tuning.CreateJournal(path)
	require.ErrorIs(t, err, tuning.ErrPendingJournal)

	steps, err := tuning.RevertJournal(context.Background(), path, c.reverters())
	require.NoError(t, err)
	assert.Equal(t, []string{"iommu", "threads"}, steps, "newest first")
	assert.Equal(t, "<Connector maxThreads=\"200\"/>\n", read(t, a))
	assert.Equal(t, "GRUB_CMDLINE_LINUX=\"quiet\"\n", read(t, b))

	steps, err = tuning.RevertJournal(context.Background(), path, c.reverters())
	require.NoError(t, err)
	assert.Empty(t, steps, "a second revert has nothing to do")
	j2, err := tuning.CreateJournal(path)
	require.NoError(t, err, "a fully reverted journal is replaced")
	require.NoError(t, j2.Close())
}

func TestReadJournalTornAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "j")
	good := `{"seq":0,"op":"open","time":"2026-12-02T00:00:00Z"}
{"seq":1,"op":"begin","step":"threads","undo":[{"kind":"counter","data":3}],"time":"2026-12-02T00:00:01Z"}
`
	require.NoError(t, os.WriteFile(p, []byte(good+`{"seq":1,"op":"appl`), 0o600))
	e, err := tuning.ReadJournal(p)
	require.NoError(t, err, "a torn last line is a crash mid-write")
	require.Len(t, e, 1)
	assert.False(t, e[0].Applied)

	require.NoError(t, os.WriteFile(p, []byte(good+"garbage\n"+`{"seq":1,"op":"applied","time":"2026-12-02T00:00:01Z"}`+"\n"), 0o600))
	_, err = tuning.ReadJournal(p)
	require.ErrorContains(t, err, p+" line 3")

	require.NoError(t, os.WriteFile(p, []byte(`{"seq":7,"op":"reverted","time":"2026-12-02T00:00:01Z"}`+"\n"), 0o600))
	_, err = tuning.ReadJournal(p)
	require.ErrorContains(t, err, `"reverted" for unknown change 7`)

	_, err = tuning.ReadJournal(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestRevertAfterSIGKILL runs a plan in a child process, kills it with
// SIGKILL after its changes are made, and reverts from the journal.
func TestRevertAfterSIGKILL(t *testing.T) {
	if os.Getenv("NETTUNE_PLAN_CHILD") != "" {
		return
	}
	testutil.SkipUnderUserEmulation(t, "re-executes the test binary, which qemu-user without binfmt_misc cannot start")
	dir, a, b := setupFiles(t)
	journal := filepath.Join(dir, "journal")
	ready := filepath.Join(dir, "ready")
	cmd := exec.Command(os.Args[0], "-test.run=^TestPlanChild$")
	cmd.Env = append(os.Environ(), "NETTUNE_PLAN_CHILD="+strings.Join([]string{journal, a, b, ready}, ","))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	deadline := time.Now().Add(30 * time.Second)
	for !fileExists(ready) {
		require.True(t, time.Now().Before(deadline), "child never got to its last step")
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	assert.Contains(t, read(t, a), `maxThreads="7"`)
	assert.Contains(t, read(t, b), "iommu.strict=1")

	steps, err := tuning.RevertJournal(context.Background(), journal, tuning.Reverters{tuning.UndoFile: tuning.RevertFile})
	require.NoError(t, err)
	assert.Equal(t, []string{"iommu", "threads"}, steps)
	assert.Equal(t, "<Connector maxThreads=\"200\"/>\n", read(t, a))
	assert.Equal(t, "GRUB_CMDLINE_LINUX=\"quiet\"\n", read(t, b))
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestPlanChild is the child half of TestRevertAfterSIGKILL.
func TestPlanChild(t *testing.T) {
	env := os.Getenv("NETTUNE_PLAN_CHILD")
	if env == "" {
		t.Skip("helper process for TestRevertAfterSIGKILL")
	}
	p := strings.Split(env, ",")
	j, err := tuning.CreateJournal(p[0])
	require.NoError(t, err)
	r := &tuning.Runner{Journal: j, Reverters: tuning.Reverters{tuning.UndoFile: tuning.RevertFile},
		AfterStep: func(ctx context.Context, s tuning.StepResult) error {
			if s.Name == "iommu" {
				require.NoError(t, os.WriteFile(p[3], nil, 0o644))
				<-ctx.Done() // measured forever, until killed
			}
			return nil
		}}
	r.Run(context.Background(), []tuning.Step{
		fileStep("threads", p[1], `maxThreads="200"`, `maxThreads="7"`),
		fileStep("iommu", p[2], `"quiet"`, `"quiet iommu.strict=1"`),
	})
}

func TestRunnerBaselineSteps(t *testing.T) {
	dir, a, _ := setupFiles(t)
	j, err := tuning.CreateJournal(filepath.Join(dir, "journal"))
	require.NoError(t, err)
	defer j.Close()
	c := &counter{v: 1}
	var seen []string
	r := &tuning.Runner{Journal: j, Reverters: c.reverters(), AfterStep: func(_ context.Context, s tuning.StepResult) error {
		seen = append(seen, fmt.Sprintf("%s:%d", s.Name, c.v))
		return nil
	}}
	cpus := c.step("cpus", 8, nil)
	cpus.Baseline = true
	_, err = r.Run(context.Background(), []tuning.Step{cpus, fileStep("threads", a, "200", "7")})
	require.NoError(t, err)
	assert.Equal(t, []string{"baseline:8", "threads:8"}, seen, "the baseline is measured with the CPUs step applied")
	assert.Equal(t, 1, c.v)

	seen = nil
	only := c.step("cpus", 4, nil)
	only.Baseline = true
	_, err = r.Run(context.Background(), []tuning.Step{only})
	require.NoError(t, err)
	assert.Equal(t, []string{"baseline:4"}, seen)
}
