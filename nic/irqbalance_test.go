package nic_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/nic"
)

// unitRunner answers systemctl as systemd would for one unit: is-active
// prints the state and exits non-zero unless active; stop and start
// change it. It records the commands.
type unitRunner struct {
	state string
	ran   []string
}

func (r *unitRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	r.ran = append(r.ran, name+" "+strings.Join(args, " "))
	switch args[0] {
	case "is-active":
		if r.state != "active" {
			return []byte(r.state + "\n"), errors.New("exit status 3")
		}
		return []byte("active\n"), nil
	case "stop":
		r.state = "inactive"
	case "start":
		r.state = "active"
	}
	return nil, nil
}

// TestIRQBalanceStop: an active unit is stopped by Apply and started by
// Undo (twice is harmless); an inactive one is left alone; the value
// round-trips through JSON as a journal keeps it; what systemctl prints
// that is no state is an error quoting it.
func TestIRQBalanceStop(t *testing.T) {
	ctx := context.Background()
	r := &unitRunner{state: "active"}
	s, err := nic.PlanIRQBalanceStop(ctx, "", r)
	require.NoError(t, err)
	assert.Equal(t, nic.IRQBalanceStop{Unit: "irqbalance.service", WasActive: true, Runner: r}, s)
	assert.Contains(t, s.Describe(), "stop irqbalance.service for the step")
	require.NoError(t, s.Apply(ctx))
	assert.Equal(t, "inactive", r.state)
	require.NoError(t, s.Verify(ctx))
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"unit": "irqbalance.service", "was_active": true}`, string(b))
	var back nic.IRQBalanceStop
	require.NoError(t, json.Unmarshal(b, &back))
	back.Runner = r
	require.NoError(t, back.Undo(ctx))
	require.NoError(t, back.Undo(ctx))
	assert.Equal(t, "active", r.state)
	assert.Equal(t, []string{"systemctl is-active irqbalance.service", "systemctl stop irqbalance.service",
		"systemctl is-active irqbalance.service", "systemctl start irqbalance.service", "systemctl start irqbalance.service"}, r.ran)

	r = &unitRunner{state: "inactive"}
	s, err = nic.PlanIRQBalanceStop(ctx, "irqbalance.service", r)
	require.NoError(t, err)
	assert.False(t, s.WasActive)
	require.NoError(t, s.Apply(ctx))
	require.NoError(t, s.Undo(ctx))
	assert.Equal(t, []string{"systemctl is-active irqbalance.service"}, r.ran, "nothing stopped or started")

	r = &unitRunner{state: "Failed to connect to bus: No such file or directory"}
	_, err = nic.PlanIRQBalanceStop(ctx, "", r)
	assert.ErrorContains(t, err, `nic: systemctl is-active irqbalance.service: exit status 3: "Failed to connect to bus: No such file or directory"; want one of active`)

	r = &unitRunner{state: "active"}
	s, err = nic.PlanIRQBalanceStop(ctx, "", r)
	require.NoError(t, err)
	r.state = "activating" // restarted behind the study's back
	assert.ErrorIs(t, s.Verify(ctx), nic.ErrNotApplied)
	assert.Equal(t, "nic-irqbalance-stop", s.Kind())
}
