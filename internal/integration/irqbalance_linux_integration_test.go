//go:build linux

package integration_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/nspawn"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
)

// standInIRQBalance is an enabled irqbalance.service that runs a sleep:
// irqbalance's own unit has ConditionVirtualization=!container (it
// places the host's IRQs, which a container cannot), and on this host
// it would move the host's IRQs. systemd stops and starts it as it would
// the real one, which is what nic.IRQBalanceStop asks of systemd.
const standInIRQBalance = `[Unit]
Description=stand-in for irqbalance (nettune's test): a process that systemd stops and starts

[Service]
ExecStart=/bin/sleep infinity

[Install]
WantedBy=multi-user.target
`

// TestIntegrationIRQBalanceStop: under a real systemd, the stop of an
// active irqbalance.service leaves it inactive with no main process, and
// its undo starts it again; planned against an inactive unit, neither
// starts it.
func TestIntegrationIRQBalanceStop(t *testing.T) {
	testutil.RequireRoot(t)
	c := nspawn.ForTest(t, func(upper string) error {
		dir := filepath.Join(upper, "etc", "systemd", "system")
		if err := os.MkdirAll(filepath.Join(dir, "multi-user.target.wants"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, nic.IRQBalanceUnit), []byte(standInIRQBalance), 0o644); err != nil {
			return err
		}
		return os.Symlink("../"+nic.IRQBalanceUnit, filepath.Join(dir, "multi-user.target.wants", nic.IRQBalanceUnit))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := tunedRunner{c}
	show := func() string {
		out, err := c.Run(ctx, nil, "systemctl", "show", "-p", "ActiveState", "-p", "MainPID", nic.IRQBalanceUnit)
		require.NoError(t, err)
		kv := map[string]string{}
		for _, f := range strings.Fields(string(out)) {
			k, v, _ := strings.Cut(f, "=")
			kv[k] = v
		}
		return "ActiveState=" + kv["ActiveState"] + " MainPID=" + kv["MainPID"]
	}
	for deadline := time.Now().Add(time.Minute); !strings.HasPrefix(show(), "ActiveState=active"); {
		require.True(t, time.Now().Before(deadline), "the stand-in never became active: %s", show())
		time.Sleep(200 * time.Millisecond)
	}
	before := show()
	t.Logf("before: %s", before)

	s, err := nic.PlanIRQBalanceStop(ctx, "", r)
	require.NoError(t, err)
	require.True(t, s.WasActive)
	require.NoError(t, s.Apply(ctx))
	require.NoError(t, s.Verify(ctx))
	assert.Equal(t, "ActiveState=inactive MainPID=0", show())

	idle, err := nic.PlanIRQBalanceStop(ctx, "", r)
	require.NoError(t, err)
	assert.False(t, idle.WasActive, "planned while stopped")
	require.NoError(t, idle.Apply(ctx))
	require.NoError(t, idle.Undo(ctx))
	assert.Equal(t, "ActiveState=inactive MainPID=0", show(), "an inactive unit is left so")

	require.NoError(t, s.Undo(ctx))
	after := show()
	assert.True(t, strings.HasPrefix(after, "ActiveState=active MainPID="), after)
	assert.NotEqual(t, before, after, "a new main process")
}
