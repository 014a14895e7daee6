package testutil_test

import (
	"os"
	"path/filepath"
	"strings"
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

// TestUserEmulated checks the /proc/self/stat test against a second sign
// of qemu-user: /proc/self/status, which qemu passes through from the
// kernel, names the emulator ("qemu-aarch64-st") as the process.
func TestUserEmulated(t *testing.T) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(string(b), "Name:"), "\n")
	qemu := strings.HasPrefix(strings.TrimSpace(name), "qemu-")
	if got := testutil.UserEmulated(); got != qemu {
		t.Errorf("UserEmulated() = %v, but /proc/self/status names %q", got, strings.TrimSpace(name))
	}
}
