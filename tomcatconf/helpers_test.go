package tomcatconf_test

import (
	"flag"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files")

// golden compares got with testdata/name.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(p, []byte(got), 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err, "run go test -update to create it")
	require.Equal(t, string(want), got)
}

func statUID(fi os.FileInfo) int { return int(fi.Sys().(*syscall.Stat_t).Uid) }
func statGID(fi os.FileInfo) int { return int(fi.Sys().(*syscall.Stat_t).Gid) }
