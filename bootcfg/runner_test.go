package bootcfg_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/command"
)

// recorder is a Runner that records commands and returns canned results:
// the documented seam for bootloader tools that are not installed here.
type recorder struct {
	calls [][]string
	out   string
	err   error
}

func (r *recorder) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	r.calls = append(r.calls, append([]string{name}, args...))
	return []byte(r.out), r.err
}

// toolRoot makes a root with the named executables in usr/sbin and a
// defaults file.
func toolRoot(t *testing.T, grub string, tools ...string) (*bootcfg.Host, *bootcfg.Config) {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr", "sbin"), 0o755))
	for _, tool := range tools {
		require.NoError(t, os.WriteFile(filepath.Join(root, "usr", "sbin", tool), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "default"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "default", "grub"), []byte(grub), 0o644))
	h, err := bootcfg.New(root)
	require.NoError(t, err)
	cfg, err := h.DefaultGrub()
	require.NoError(t, err)
	return h, cfg
}

func TestRegenerateCommand(t *testing.T) {
	tests := []struct {
		name  string
		grub  string
		tools []string
		want  func(root string) []string
	}{
		{"debian", "GRUB_CMDLINE_LINUX=\"\"\n", []string{"update-grub", "grub-mkconfig"}, func(r string) []string { return []string{r + "/usr/sbin/update-grub"} }},
		{"fedora without BLS", "GRUB_ENABLE_BLSCFG=\"false\"\nGRUB_CMDLINE_LINUX=\"\"\n", []string{"grub2-mkconfig", "grubby"}, func(r string) []string {
			return []string{r + "/usr/sbin/grub2-mkconfig", "-o", r + "/boot/grub2/grub.cfg"}
		}},
		{"rhel BLS", "GRUB_ENABLE_BLSCFG=true\nGRUB_CMDLINE_LINUX=\"rd.lvm.lv=rhel/root\"\n", []string{"grub2-mkconfig", "grubby"}, func(r string) []string {
			return []string{r + "/usr/sbin/grubby", "--update-kernel=ALL", "--args=iommu.strict=1 iommu.passthrough=0"}
		}},
		{"upstream", "GRUB_CMDLINE_LINUX=\"\"\n", []string{"grub-mkconfig"}, func(r string) []string {
			return []string{r + "/usr/sbin/grub-mkconfig", "-o", r + "/boot/grub/grub.cfg"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, cfg := toolRoot(t, tt.grub, tt.tools...)
			plan, err := cfg.Plan(bootcfg.Edit{Set: guideParams})
			require.NoError(t, err)
			rec := &recorder{out: "Generating grub configuration file ...\ndone\n"}
			args, out, err := h.Regenerate(context.Background(), rec, cfg, plan)
			require.NoError(t, err)
			assert.Equal(t, tt.want(h.Root()), args)
			assert.Equal(t, [][]string{args}, rec.calls)
			assert.Contains(t, string(out), "done")
		})
	}
	t.Run("grubby remove", func(t *testing.T) {
		h, cfg := toolRoot(t, "GRUB_ENABLE_BLSCFG=true\nGRUB_CMDLINE_LINUX=\"iommu.strict=0\"\n", "grubby")
		plan, err := cfg.Plan(bootcfg.Edit{Remove: []string{"iommu.strict"}})
		require.NoError(t, err)
		args, err := h.RegenerateCommand(cfg, plan)
		require.NoError(t, err)
		assert.Equal(t, []string{h.Root() + "/usr/sbin/grubby", "--update-kernel=ALL", "--remove-args=iommu.strict"}, args)
	})
	t.Run("none", func(t *testing.T) {
		h, cfg := toolRoot(t, "X=1\n")
		rec := &recorder{}
		_, _, err := h.Regenerate(context.Background(), rec, cfg, nil)
		require.ErrorIs(t, err, bootcfg.ErrNoTool)
		assert.Empty(t, rec.calls)
	})
	t.Run("failure carries the output", func(t *testing.T) {
		h, cfg := toolRoot(t, "X=1\n", "update-grub")
		rec := &recorder{out: "/usr/sbin/grub-probe: error: failed to get canonical path of `overlay'.\n", err: errors.New("exit status 1")}
		_, _, err := h.Regenerate(context.Background(), rec, cfg, nil)
		var ce *command.Error
		require.ErrorAs(t, err, &ce)
		assert.Contains(t, err.Error(), "failed to get canonical path")
		assert.Contains(t, err.Error(), "update-grub")
	})
}

// TestRegenerateRunsForReal runs real, harmless processes through a nil
// Runner: fixture tools under a temporary root stand for update-grub.
func TestRegenerateRunsForReal(t *testing.T) {
	run := func(ctx context.Context, script string) ([]string, []byte, error) {
		h, cfg := toolRoot(t, "X=1\n")
		require.NoError(t, os.WriteFile(filepath.Join(h.Root(), "usr", "sbin", "update-grub"), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
		return h.Regenerate(ctx, nil, cfg, nil)
	}
	_, out, err := run(context.Background(), "echo out; echo err >&2")
	require.NoError(t, err)
	assert.Equal(t, "out\nerr\n", string(out))

	_, _, err = run(context.Background(), "echo grub-mkconfig failed >&2; exit 3")
	var ce *command.Error
	require.ErrorAs(t, err, &ce)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.ExitCode())
	assert.Contains(t, err.Error(), "grub-mkconfig failed")

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = run(ctx, "exec /bin/sleep 10")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second, "the context kills the command")

	// The plain tool toolRoot writes.
	h, cfg := toolRoot(t, "X=1\n", "update-grub")
	args, _, err := h.Regenerate(context.Background(), nil, cfg, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{h.Root() + "/usr/sbin/update-grub"}, args)
}
