package tuning

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
)

func TestCPUStateSeedsHost(t *testing.T) {
	h, _ := newFixtureHost(t, seedsHost())
	st, err := h.CPUState()
	require.NoError(t, err)
	assert.Equal(t, "0-191", st.Possible.String())
	assert.Equal(t, "0-191", st.Present.String())
	assert.Equal(t, "0-191", st.Online.String())
	assert.True(t, st.Offline.IsEmpty())
	require.Len(t, st.CPUs, 192)
	assert.Equal(t, CPU{ID: 0, Online: true, Hotpluggable: true, Node: 0}, st.CPUs[0])
	assert.Equal(t, CPU{ID: 100, Online: true, Hotpluggable: true, Node: 1}, st.CPUs[100])
	assert.Equal(t, "0-191", st.Hotpluggable().String())
}

func TestCPUStateThisMachineShape(t *testing.T) {
	h, _ := newFixtureHost(t, thisMachineShape())
	st, err := h.CPUState()
	require.NoError(t, err)
	c0, ok := st.CPU(0)
	require.True(t, ok)
	assert.False(t, c0.Hotpluggable)
	assert.True(t, c0.Online)
	assert.Equal(t, "1", st.Hotpluggable().String())
	_, ok = st.CPU(7)
	assert.False(t, ok)
}

// The seeds' step 000: keep 0-7 of 192 online, then lscpu.
func TestKeepOnlineSeedsStep(t *testing.T) {
	h, k := newFixtureHost(t, seedsHost())
	ctx := context.Background()

	plan, err := h.PlanKeepOnline(cpuset.Range(0, 7))
	require.NoError(t, err)
	assert.True(t, plan.Online.IsEmpty())
	assert.Equal(t, "8-191", plan.Offline.String())
	assert.Empty(t, k.writes, "planning must not write")

	snap, err := h.KeepOnline(ctx, cpuset.Range(0, 7), nil)
	require.NoError(t, err)
	assert.Equal(t, "0-191", snap.Online.String())
	assert.Len(t, k.writes, 184)
	got, err := h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "0-7", got.String())

	// Step 002: move to node 1's 96-103; online first, then offline.
	k.writes = nil
	_, err = h.KeepOnline(ctx, cpuset.Range(96, 103), nil)
	require.NoError(t, err)
	assert.Equal(t, "cpu96=1", k.writes[0])
	assert.Equal(t, "cpu0=0", k.writes[8])
	got, err = h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "96-103", got.String())

	// Restore the first snapshot; restoring twice writes nothing more.
	require.NoError(t, h.RestoreCPUs(ctx, snap))
	got, err = h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "0-191", got.String())
	n := len(k.writes)
	require.NoError(t, h.RestoreCPUs(ctx, snap))
	assert.Len(t, k.writes, n, "restoring the current state must not write")
}

func TestKeepOnlineRefusals(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		f    fixture
		want cpuset.Set
		is   error
	}{
		{"empty list", seedsHost(), cpuset.Set{}, ErrAllOffline},
		{"not present", seedsHost(), cpuset.Of(0, 192), ErrUnknownCPU},
		{"far out of range", thisMachineShape(), cpuset.Of(4000), ErrUnknownCPU},
		{"cpu0 not hot-pluggable", thisMachineShape(), cpuset.Of(1), ErrNotHotpluggable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, k := newFixtureHost(t, tt.f)
			snap, err := h.KeepOnline(ctx, tt.want, nil)
			require.ErrorIs(t, err, tt.is)
			assert.Empty(t, k.writes, "a refused change must not write")
			assert.False(t, snap.Online.IsEmpty(), "the snapshot is returned with the error")
		})
	}
}

func TestKeepOnlineNotHotpluggableExplained(t *testing.T) {
	h, _ := newFixtureHost(t, thisMachineShape())
	plan, err := h.PlanKeepOnline(cpuset.Of(1))
	require.NoError(t, err)
	require.Len(t, plan.Blocked, 1)
	assert.Equal(t, 0, plan.Blocked[0].CPU)
	assert.ErrorIs(t, plan.Blocked[0], errors.ErrUnsupported)
	assert.Contains(t, plan.String(), "cannot take cpu0 offline")

	_, err = h.KeepOnline(context.Background(), cpuset.Of(1), nil)
	var herr *HotplugError
	require.ErrorAs(t, err, &herr)
	assert.Equal(t, "0", herr.FailedCPUs().String())
	assert.Contains(t, err.Error(), "offline cpu0")
	assert.Contains(t, err.Error(), "hot-pluggable")

	// Best effort keeps cpu0 and succeeds for the rest (nothing to do).
	_, err = h.KeepOnline(context.Background(), cpuset.Of(1), &KeepOptions{BestEffort: true})
	require.ErrorIs(t, err, ErrNotHotpluggable)
}

// A failed multi-CPU change rolls back what it already did.
func TestKeepOnlineRollsBackOnEBUSY(t *testing.T) {
	h, k := newFixtureHost(t, seedsHost())
	k.fail[150] = syscall.EBUSY
	_, err := h.KeepOnline(context.Background(), cpuset.Range(0, 7), nil)
	var herr *HotplugError
	require.ErrorAs(t, err, &herr)
	require.ErrorIs(t, err, syscall.EBUSY)
	assert.True(t, herr.RolledBack)
	assert.Empty(t, herr.RollbackFailed)
	assert.Equal(t, "150", herr.FailedCPUs().String())
	assert.Contains(t, err.Error(), "cpu150/online")
	assert.Contains(t, err.Error(), "device or resource busy")
	got, err := h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "0-191", got.String(), "every CPU taken offline must be back")
	// The roll-back went in reverse order: 149 first, 8 last.
	assert.Equal(t, "cpu149=1", k.writes[143])
	assert.Equal(t, "cpu8=1", k.writes[len(k.writes)-1])
}

func TestKeepOnlineBestEffortReportsEachCPU(t *testing.T) {
	h, k := newFixtureHost(t, seedsHost())
	k.fail[9] = syscall.EBUSY
	k.fail[10] = syscall.EPERM
	snap, err := h.KeepOnline(context.Background(), cpuset.Range(0, 7), &KeepOptions{BestEffort: true})
	var herr *HotplugError
	require.ErrorAs(t, err, &herr)
	assert.False(t, herr.RolledBack)
	assert.Equal(t, "9-10", herr.FailedCPUs().String())
	require.Len(t, herr.Failed, 2)
	assert.ErrorIs(t, herr.Failed[0], syscall.EBUSY)
	assert.ErrorIs(t, herr.Failed[1], os.ErrPermission)
	got, err := h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "0-7,9-10", got.String())
	// Restoring is best effort too; then clear the faults and finish.
	delete(k.fail, 9)
	delete(k.fail, 10)
	require.NoError(t, h.RestoreCPUs(context.Background(), snap))
	got, err = h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "0-191", got.String())
}

// When the kernel accepts the writes but the online list does not change,
// the verification catches it and the change is rolled back.
func TestKeepOnlineVerifies(t *testing.T) {
	h, k := newFixtureHost(t, seedsHost())
	k.ignore = true
	_, err := h.KeepOnline(context.Background(), cpuset.Range(0, 95), nil)
	require.ErrorIs(t, err, ErrNotApplied)
	var herr *HotplugError
	require.ErrorAs(t, err, &herr)
	assert.Equal(t, "96-191", herr.FailedCPUs().String())
	assert.True(t, herr.RolledBack)
}

func TestKeepOnlineCancelled(t *testing.T) {
	h, k := newFixtureHost(t, seedsHost())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.KeepOnline(ctx, cpuset.Range(0, 7), nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, k.writes)
}

// A read-only tree: /sys mounted read-only, as in a container, answers
// EROFS; a non-root user on a fixture tree gets EACCES from the file mode.
func TestKeepOnlineReadOnlyTree(t *testing.T) {
	h, k := newFixtureHost(t, seedsHost())
	if os.Geteuid() == 0 {
		k.fail[191] = syscall.EROFS // root ignores file modes
	} else {
		require.NoError(t, os.Chmod(filepath.Join(k.dir, "sys", "devices", "system", "cpu", "cpu191", "online"), 0o444))
	}
	_, err := h.KeepOnline(context.Background(), cpuset.Range(0, 7), nil)
	require.Error(t, err)
	if os.Geteuid() == 0 {
		assert.ErrorIs(t, err, syscall.EROFS)
		assert.Contains(t, err.Error(), "read-only file system")
	} else {
		assert.ErrorIs(t, err, os.ErrPermission)
	}
	assert.Contains(t, err.Error(), "cpu191")
	got, err := h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "0-191", got.String(), "rolled back")
}

func TestSetOnline(t *testing.T) {
	h, k := newFixtureHost(t, thisMachineShape())
	require.NoError(t, h.SetOnline(1, false))
	got, err := h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, "0", got.String())
	require.NoError(t, h.SetOnline(1, false), "already offline: no-op")
	assert.Len(t, k.writes, 1)
	require.NoError(t, h.SetOnline(1, true))
	require.NoError(t, h.SetOnline(0, true), "cpu0 is online; nothing to do")

	tests := []struct {
		name   string
		cpu    int
		online bool
		is     error
		msg    string
	}{
		{"negative", -1, false, ErrUnknownCPU, "cpu id -1 is out of range"},
		{"out of range", 2, false, ErrUnknownCPU, "cpu2 is not present (present: 0-1)"},
		{"huge", 1 << 20, true, ErrUnknownCPU, "out of range"},
		{"not hot-pluggable", 0, false, ErrNotHotpluggable, "cpu0/online"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := h.SetOnline(tt.cpu, tt.online)
			require.ErrorIs(t, err, tt.is)
			assert.Contains(t, err.Error(), tt.msg)
			var ce *CPUError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.cpu, ce.CPU)
		})
	}
}

func TestSetOnlineKernelRefuses(t *testing.T) {
	h, k := newFixtureHost(t, thisMachineShape())
	k.fail[1] = syscall.EBUSY
	err := h.SetOnline(1, false)
	require.ErrorIs(t, err, syscall.EBUSY)
	assert.Contains(t, err.Error(), `write "0" to `)
	assert.Contains(t, err.Error(), filepath.Join("cpu1", "online"))
}

func TestSetOnlineLastCPU(t *testing.T) {
	f := seedsHost()
	f.online = cpuset.Of(5)
	h, k := newFixtureHost(t, f)
	require.ErrorIs(t, h.SetOnline(5, false), ErrAllOffline)
	assert.Empty(t, k.writes)
}

func TestCPUSnapshotJSON(t *testing.T) {
	h, _ := newFixtureHost(t, thisMachineShape())
	snap, err := h.CPUSnapshot()
	require.NoError(t, err)
	b, err := json.Marshal(snap)
	require.NoError(t, err)
	assert.JSONEq(t, `{"online":"0-1","present":"0-1","hotpluggable":"1"}`, string(b))
	var back CPUSnapshot
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, back.Online.Equal(snap.Online))
	assert.Error(t, json.Unmarshal([]byte(`{"online":"0-x"}`), &back))
}

func TestRestoreCPUsRejectsEmptyAndMissing(t *testing.T) {
	h, k := newFixtureHost(t, thisMachineShape())
	require.ErrorIs(t, h.RestoreCPUs(context.Background(), CPUSnapshot{}), ErrAllOffline)
	err := h.RestoreCPUs(context.Background(), CPUSnapshot{Online: cpuset.Of(0, 1, 7)})
	require.ErrorIs(t, err, ErrUnknownCPU)
	assert.Contains(t, err.Error(), "cpu7 was online in the snapshot")
	assert.Empty(t, k.writes)
}

func TestCPUStateMalformed(t *testing.T) {
	tests := []struct {
		name, file, content, msg string
	}{
		{"online list", "online", "0-x\n", `"0-x"`},
		{"present list", "present", "3-1\n", "range end before start"},
		{"negative", "possible", "-1\n", "negative"},
		{"cpu flag", "cpu1/online", "2\n", "expected 0 or 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := thisMachineShape().build(t)
			p := filepath.Join(dir, "sys", "devices", "system", "cpu", tt.file)
			writeFile(t, p, tt.content)
			h, err := New(dir)
			require.NoError(t, err)
			_, err = h.CPUState()
			require.Error(t, err)
			assert.Contains(t, err.Error(), p, "the error names the file")
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}
