//go:build linux

package loadgen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCgroupQuota(t *testing.T) {
	write := func(root, path, data string) {
		p := filepath.Join(root, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	tests := []struct {
		name  string
		files map[string]string
		want  float64
	}{
		{"v2 quota", map[string]string{"proc/self/cgroup": "0::/bench\n", "sys/fs/cgroup/bench/cpu.max": "50000 100000\n"}, 0.5},
		{"v2 max", map[string]string{"proc/self/cgroup": "0::/bench\n", "sys/fs/cgroup/bench/cpu.max": "max 100000\n"}, 0},
		{"v1 quota", map[string]string{"proc/self/cgroup": "3:cpuset:/\n1:cpu:/lg\n0::/\n", "sys/fs/cgroup/cpu/lg/cpu.cfs_quota_us": "10000\n", "sys/fs/cgroup/cpu/lg/cpu.cfs_period_us": "100000\n"}, 0.1},
		{"v1 joint, none", map[string]string{"proc/self/cgroup": "2:cpu,cpuacct:/\n", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 0},
		{"no cgroup file", map[string]string{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, d := range tt.files {
				write(root, p, d)
			}
			assert.InDelta(t, tt.want, cgroupQuota(root), 1e-9)
		})
	}
}
