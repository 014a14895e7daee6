package persist_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// TestVerifyAs: a Reversible's record comes back through VerifyAs and its
// Verify runs; a record that does not decode is not verifiable.
func TestVerifyAs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	e, err := persist.PlanFile(p, []byte("x\n"))
	require.NoError(t, err)
	require.NoError(t, e.Apply(context.Background()))
	ch, err := tuning.ChangeFor(e)
	require.NoError(t, err)
	fn := tuning.VerifyAs[persist.FileEdit]()
	want, err := fn(context.Background(), ch.Undo[0].Data)
	require.NoError(t, err)
	assert.Equal(t, "write "+p+" (2 bytes, new)", want)
	require.NoError(t, os.WriteFile(p, []byte("y\n"), 0o644))
	_, err = fn(context.Background(), ch.Undo[0].Data)
	assert.ErrorContains(t, err, `line 1 is "y", want "x"`)
	_, err = fn(context.Background(), json.RawMessage(`[1]`))
	assert.True(t, errors.Is(err, tuning.ErrNotVerifiable))
}
