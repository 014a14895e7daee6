package testutil_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
)

func TestExtractSysroot(t *testing.T) {
	for _, name := range []string{
		"ghw-linux-amd64-offlineCPUs.tar.gz",
		"128arm-2pa2n8cluster4co.tar.bz2",
	} {
		t.Run(name, func(t *testing.T) {
			root := testutil.ExtractSysroot(t, testutil.CorpusFile(t, "sysfs", name))
			fi, err := os.Stat(filepath.Join(root, "sys", "devices", "system", "cpu"))
			require.NoError(t, err)
			assert.True(t, fi.IsDir())
		})
	}
}
