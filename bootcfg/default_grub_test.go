package bootcfg_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/bootcfg"
)

// TestParseFileForms checks each form the issue lists, and checks the
// value against what /bin/sh assigns for the static ones.
func TestParseFileForms(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		value string                // effective X, when known
		quote bootcfg.QuoteStyle    // of the last assignment
		kind  bootcfg.ExpansionKind // when dynamic
		dyn   bool
	}{
		{name: "double", src: `X="a b"`, value: "a b", quote: bootcfg.QuoteDouble},
		{name: "single", src: `X='a "b" $c'`, value: `a "b" $c`, quote: bootcfg.QuoteSingle},
		{name: "unquoted", src: "X=abc", value: "abc", quote: bootcfg.QuoteNone},
		{name: "empty", src: "X=", value: "", quote: bootcfg.QuoteNone},
		{name: "empty double", src: `X=""`, value: "", quote: bootcfg.QuoteDouble},
		{name: "escapes in double", src: `X="a\"b\\c\$d\` + "`" + `e\qf"`, value: "a\"b\\c$d`e\\qf", quote: bootcfg.QuoteDouble},
		{name: "escapes unquoted", src: `X=a\ b\"c`, value: `a b"c`, quote: bootcfg.QuoteNone},
		{name: "continuation in double", src: "X=\"a \\\nb\"", value: "a b", quote: bootcfg.QuoteDouble},
		{name: "continuation unquoted", src: "X=a\\\nb", value: "ab", quote: bootcfg.QuoteNone},
		{name: "newline in double", src: "X=\"a\nb\"", value: "a\nb", quote: bootcfg.QuoteDouble},
		{name: "mixed", src: `X=a"b c"'d'`, value: "ab cd", quote: bootcfg.QuoteMixed},
		{name: "comment after", src: `X="a" # note`, value: "a", quote: bootcfg.QuoteDouble},
		{name: "hash inside word", src: `X=a#b`, value: "a#b", quote: bootcfg.QuoteNone},
		{name: "commented out", src: "#X=\"old\"\nX=new", value: "new", quote: bootcfg.QuoteNone},
		{name: "repeated, last wins", src: "X=one\nX='two'", value: "two", quote: bootcfg.QuoteSingle},
		{name: "two on a line", src: `X=1 Y=2`, value: "1", quote: bootcfg.QuoteNone},
		{name: "semicolon", src: `X=1; X=2`, value: "2", quote: bootcfg.QuoteNone},
		{name: "export", src: `export X="e"`, value: "e", quote: bootcfg.QuoteDouble},
		{name: "lone dollar", src: `X="a $ b"`, value: "a $ b", quote: bootcfg.QuoteDouble},
		{name: "self append", src: "X=\"a\"\nX=\"$X b\"\nX=\"${X} c\"", value: "a b c", quote: bootcfg.QuoteDouble},
		{name: "prefix of a command does not persist", src: "X=1\nX=2 true", value: "1", quote: bootcfg.QuoteNone},
		{name: "command substitution", src: `X="$(uname -r)"`, dyn: true, kind: bootcfg.ExpandCommand},
		{name: "nested quotes in substitution", src: `X="$(echo "$Y" | tr "a" ")")" Z=1`, dyn: true, kind: bootcfg.ExpandCommand},
		{name: "backticks", src: "X=`lsb_release -i -s 2> /dev/null || echo Debian`", dyn: true, kind: bootcfg.ExpandBacktick},
		{name: "other variable", src: `X="$Y a"`, dyn: true, kind: bootcfg.ExpandVariable},
		{name: "self reference not at start", src: `X="a $X"`, dyn: true, kind: bootcfg.ExpandVariable},
		{name: "arithmetic", src: `X=$((1+2))`, dyn: true, kind: bootcfg.ExpandArithmetic},
		{name: "special", src: `X=$1`, dyn: true, kind: bootcfg.ExpandSpecial},
		{name: "tilde", src: `X=~/a`, dyn: true, kind: bootcfg.ExpandTilde},
		{name: "conditional", src: "if true; then\n X=1\nfi", dyn: true},
		{name: "after &&", src: "true && X=1", dyn: true},
		{name: "in a case", src: "case a in a) X=1;; esac", dyn: true},
		{name: "in a function", src: "f() {\n X=1\n}", dyn: true},
		{name: "static again after dynamic", src: "X=$(date)\nX=fixed", value: "fixed", quote: bootcfg.QuoteNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := bootcfg.ParseFile("test", []byte(tt.src+"\n"))
			require.NoError(t, err)
			cfg := &bootcfg.Config{Files: []*bootcfg.File{f}}
			v := cfg.Lookup("X")
			require.True(t, v.Set)
			if tt.dyn {
				require.False(t, v.Known)
				require.ErrorIs(t, v.Dynamic, bootcfg.ErrDynamic)
				assert.Contains(t, v.Dynamic.Error(), "test:")
				if tt.kind != 0 || len(bootcfg.Origin(v).Expansions) > 0 {
					require.NotEmpty(t, bootcfg.Origin(v).Expansions)
					assert.Equal(t, tt.kind, bootcfg.Origin(v).Expansions[0].Kind)
				}
				return
			}
			require.True(t, v.Known, "%v", v.Dynamic)
			assert.Equal(t, tt.value, v.Value)
			assert.Equal(t, tt.quote, bootcfg.Origin(v).Quote)
			// The real shell agrees.
			p := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(p, []byte(tt.src+"\n"), 0o644))
			assert.Equal(t, tt.value, shellEnv(t, p)["X"])
		})
	}
}

func TestParseFileErrors(t *testing.T) {
	tests := []struct{ name, src, msg string }{
		{"double", "A=1\nGRUB_CMDLINE_LINUX=\"quiet splash\n", "f:2: unterminated double quote"},
		{"single", "X='abc", "f:1: unterminated single quote"},
		{"substitution", "X=$(echo", "f:1: unterminated command substitution"},
		{"backtick", "X=`echo", "f:1: unterminated backquote"},
		{"brace", "X=${Y", "f:1: unterminated ${"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bootcfg.ParseFile("f", []byte(tt.src))
			require.ErrorIs(t, err, bootcfg.ErrSyntax)
			assert.Contains(t, err.Error(), tt.msg)
			var se *bootcfg.SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "f", se.File)
		})
	}
}

func TestLoadConfigDropInOrder(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "grub")
	require.NoError(t, os.WriteFile(main, []byte("X=main\nY=main\n"), 0o644))
	require.NoError(t, os.MkdirAll(main+".d", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(main+".d", "50-b.cfg"), []byte("X=b\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(main+".d", "10-a.cfg"), []byte("X=a\nY=\"$Y a\"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(main+".d", "README"), []byte("X=ignored\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(main+".d", "dir.cfg"), 0o755))
	cfg, err := bootcfg.LoadConfig(main)
	require.NoError(t, err)
	require.Len(t, cfg.Files, 3)
	x := cfg.Lookup("X")
	assert.Equal(t, "b", x.Value)
	assert.Equal(t, filepath.Join(main+".d", "50-b.cfg"), x.File, "the effective value says which file set it")
	y := cfg.Lookup("Y")
	assert.Equal(t, "main a", y.Value)
	assert.Len(t, bootcfg.Chain(y), 2)
	env := shellEnv(t, main, filepath.Join(main+".d", "10-a.cfg"), filepath.Join(main+".d", "50-b.cfg"))
	assert.Equal(t, env["X"], x.Value)
	assert.Equal(t, env["Y"], y.Value)

	_, err = bootcfg.LoadConfig(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), filepath.Join(dir, "missing"))
}

func TestParseFileCommandsAndUnset(t *testing.T) {
	src := "X=1\nY=2 &\nZ=3 | cat\nunset X\ntrue && W=1\nif [ -n \"$A\" ]; then V=1; fi\n"
	f, err := bootcfg.ParseFile("f", []byte(src))
	require.NoError(t, err)
	var names []string
	for _, c := range bootcfg.Commands(f) {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"cat", "unset", "true", "if", "[", "V=1", "fi"}[:3], names[:3])
	cfg := &bootcfg.Config{Files: []*bootcfg.File{f}}
	x := cfg.Lookup("X")
	assert.True(t, x.Known)
	assert.Equal(t, "", x.Value)
	assert.Equal(t, "unset X", bootcfg.Origin(x).Text())
	for _, n := range []string{"Y", "Z", "W", "V"} {
		assert.False(t, cfg.Lookup(n).Known, n)
	}
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	env := shellEnv(t, p)
	assert.NotContains(t, env, "X")
	assert.NotContains(t, env, "Y", "a background command's assignment does not persist")
	assert.NotContains(t, env, "Z")
	assert.Equal(t, "1", env["W"])

	pu := writeConfig(t, "GRUB_CMDLINE_LINUX=\"a\"\nunset GRUB_CMDLINE_LINUX\n", nil)
	_, err = planFor(t, pu, bootcfg.Edit{Set: guideParams})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is unset at "+pu+":2")
}
