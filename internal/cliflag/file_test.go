package cliflag

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetFromFile: each kind of JSON value sets its flag as the command
// line would; a later Parse overrides; errors name the file and the key.
func TestSetFromFile(t *testing.T) {
	f := New("x", "usage: x", io.Discard)
	n := f.Int("n", 1, "a number")
	b := f.Bool("b", false, "a switch")
	s := f.String("s", "", "a list")
	var d time.Duration
	DurationVar(f, &d, "d", time.Second, "a duration")
	path := filepath.Join(t.TempDir(), "f.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"n": 7, "b": true, "s": ["a", "b,c"], "d": 60}`), 0o644))
	require.NoError(t, f.SetFromFile(path))
	assert.Equal(t, 7, *n)
	assert.True(t, *b)
	assert.Equal(t, `a,b\,c`, *s, "a comma inside an item is escaped")
	assert.Equal(t, time.Minute, d, "a bare number is seconds, as on the command line")
	require.NoError(t, f.Parse([]string{"-n", "8"}))
	assert.Equal(t, 8, *n, "the command line wins")
	assert.Equal(t, Given{"n": true, "b": true, "s": true, "d": true}, f.Given())

	for _, tt := range []struct{ json, want string }{
		{`{"n": "x"}`, `f.json: "n": invalid value "x"`},
		{`{"m": 1}`, `f.json: "m" is not a flag this file can set`},
		{`{"n": null}`, `f.json: "n": want a string, a number, a boolean or a list of strings`},
		{`{"s": ["a", true]}`, `item 2 of the list: want a string or a number, got true`},
		{`{"n": 1} {"n": 2}`, "want one JSON object of flag names and values: more follows it"},
		{`nope`, "want a JSON object of flag names and values"},
	} {
		require.NoError(t, os.WriteFile(path, []byte(tt.json), 0o644))
		g := New("x", "usage: x", io.Discard)
		g.Int("n", 1, "a number")
		g.String("s", "", "a list")
		err := g.SetFromFile(path)
		require.ErrorIs(t, err, ErrUsage, tt.json)
		assert.ErrorContains(t, err, tt.want, tt.json)
	}
	g := New("x", "usage: x", io.Discard)
	g.String("self", "", "the file's own flag")
	require.NoError(t, os.WriteFile(path, []byte(`{"self": "again"}`), 0o644))
	assert.ErrorContains(t, g.SetFromFile(path, "self"), `"self" is not a flag this file can set`)
}
