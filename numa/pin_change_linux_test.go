package numa_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/numa"
)

// TestPinChange pins a sleep this test started to one CPU, checks it from
// /proc, and undoes it from the value's JSON, as a journal would.
func TestPinChange(t *testing.T) {
	testutil.StableCPUs(t)
	h := numa.NewDefault()
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	all, err := h.AllowedCPUs(pid)
	require.NoError(t, err)
	one := all.First(1)

	c, err := h.PlanPin(pid, one)
	require.NoError(t, err)
	assert.Contains(t, c.Describe(), "to CPUs "+one.String()+" (now "+all.String()+")")
	ctx := context.Background()
	require.NoError(t, c.Apply(ctx))
	require.NoError(t, c.Verify(ctx))
	got, err := h.AllowedCPUs(pid)
	require.NoError(t, err)
	assert.Equal(t, one.String(), got.String())

	b, err := json.Marshal(c)
	require.NoError(t, err)
	var rec numa.PinChange
	require.NoError(t, json.Unmarshal(b, &rec))
	require.NoError(t, rec.Undo(ctx))
	got, err = h.AllowedCPUs(pid)
	require.NoError(t, err)
	assert.Equal(t, all.String(), got.String())

	// A process that has gone has nothing to undo.
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.NoError(t, rec.Undo(ctx))
	_, err = h.PlanPin(pid, numa.CPUSet{})
	assert.ErrorContains(t, err, "no CPU given")
}
