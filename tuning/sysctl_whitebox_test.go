package tuning

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSysctlPath(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"dotted", "net.ipv4.tcp_max_tw_buckets", "net/ipv4/tcp_max_tw_buckets"},
		{"slashed", "net/ipv4/tcp_max_tw_buckets", "net/ipv4/tcp_max_tw_buckets"},
		{"vlan interface", "net/ipv4/conf/eth0.100/rp_filter", "net/ipv4/conf/eth0.100/rp_filter"},
		{"one component", "kernel", "kernel"},
		{"dashes", "kernel.threads-max", "kernel/threads-max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sysctlPath(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	bad := []struct{ name, in, msg string }{
		{"empty", "", "empty"},
		{"absolute", "/proc/sys/net/ipv4/tcp_max_tw_buckets", "absolute"},
		{"dot-dot dotted", "net..ipv4", "empty component"},
		{"dot-dot slashed", "net/../../etc/passwd", `component ".."`},
		{"dot slashed", "net/./ipv4", `component "."`},
		{"leading dot", ".net.ipv4", "empty component"},
		{"trailing slash", "net/ipv4/", "empty component"},
		{"space", "net.ipv4.tcp max", "white space"},
		{"NUL", "net\x00ipv4", "NUL"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sysctlPath(tt.in)
			require.ErrorIs(t, err, errSysctlName)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Contains(t, err.Error(), "net.ipv4.tcp_max_tw_buckets", "the error shows the expected form")
		})
	}
}

// What sysctlPath returns for the two name forms and a malformed name,
// error text included.
func TestSysctlPathMessages(t *testing.T) {
	var lines []string
	for _, name := range []string{"net.ipv4.tcp_max_tw_buckets", "net/ipv4/conf/eth0.100/rp_filter", "net.ipv4..x"} {
		p, err := sysctlPath(name)
		lines = append(lines, fmt.Sprintln(p, err))
	}
	assert.Equal(t, []string{
		"net/ipv4/tcp_max_tw_buckets <nil>\n",
		"net/ipv4/conf/eth0.100/rp_filter <nil>\n",
		" tuning: invalid sysctl name \"net.ipv4..x\": empty component; expected a dotted name like net.ipv4.tcp_max_tw_buckets\n",
	}, lines)
}

func TestSetSysctlFixture(t *testing.T) {
	h, _ := newFixtureHost(t, seedsHost())
	v, err := h.Sysctl("net.ipv4.tcp_max_tw_buckets")
	require.NoError(t, err)
	assert.Equal(t, "65536", v)
	prev, err := h.SetSysctl("net.ipv4.tcp_max_tw_buckets", "2000000")
	require.NoError(t, err)
	assert.Equal(t, "65536", prev)
	v, err = h.Sysctl("net/ipv4/tcp_max_tw_buckets")
	require.NoError(t, err)
	assert.Equal(t, "2000000", v)

	_, err = h.Sysctl("net.ipv4.no_such_knob")
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = h.SetSysctl("../../etc/passwd", "x")
	require.ErrorIs(t, err, errSysctlName)
	_, err = h.SetSysctl("net.ipv4.tcp_max_tw_buckets", "1\x002")
	require.Error(t, err)
}

// A kernel refusal leaves the value alone and names file and value.
func TestSetSysctlRejected(t *testing.T) {
	h, _ := newFixtureHost(t, seedsHost())
	h.root = h.root.WithWriteFunc(func(path, value string) error { return syscall.EINVAL })
	prev, err := h.SetSysctl("net.ipv4.tcp_max_tw_buckets", "lots")
	require.ErrorIs(t, err, syscall.EINVAL)
	assert.Equal(t, "65536", prev)
	assert.Contains(t, err.Error(), `write "lots" to `)
	assert.Contains(t, err.Error(), filepath.Join("proc", "sys", "net", "ipv4", "tcp_max_tw_buckets"))
	v, err := h.Sysctl("net.ipv4.tcp_max_tw_buckets")
	require.NoError(t, err)
	assert.Equal(t, "65536", v)
}

// A write the kernel accepts but does not keep is ErrNotApplied. The file
// is swapped for a link to /dev/null, which swallows the write and reads
// back empty.
func TestSetSysctlNotApplied(t *testing.T) {
	h, k := newFixtureHost(t, seedsHost())
	p := filepath.Join(k.dir, "proc", "sys", "net", "ipv4", "tcp_max_tw_buckets")
	h.root = h.root.WithWriteFunc(func(path, value string) error {
		if path == p && value == "2000000" {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink(os.DevNull, p)
		}
		return nil
	})
	_, err := h.SetSysctl("net.ipv4.tcp_max_tw_buckets", "2000000")
	require.ErrorIs(t, err, ErrNotApplied)
	assert.Contains(t, err.Error(), `reads "" after writing "2000000"; restored "65536"`)
}
