package hostfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/hostfs"
)

func TestNew(t *testing.T) {
	dir := t.TempDir()
	r, err := hostfs.New(dir)
	require.NoError(t, err)
	assert.Equal(t, dir, r.Dir())
	assert.False(t, r.IsHost())
	assert.Equal(t, filepath.Join(dir, "sys/devices/system/cpu/online"), r.Sys("devices/system/cpu", "online"))
	assert.Equal(t, filepath.Join(dir, "proc/sys/net/ipv4/tcp_max_tw_buckets"), r.Proc("sys/net/ipv4/tcp_max_tw_buckets"))
	assert.Equal(t, filepath.Join(dir, "etc/default/grub"), r.Etc("default", "grub"))
	// Paths never climb above the root.
	assert.Equal(t, filepath.Join(dir, "etc/passwd"), r.Path("../../etc/passwd"))
	assert.Equal(t, filepath.Join(dir, "sys/x"), r.Sys("../../sys/x"))

	_, err = hostfs.New(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	f := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err = hostfs.New(f)
	require.ErrorContains(t, err, "is not a directory")

	assert.True(t, hostfs.Default().IsHost())
	assert.Equal(t, "/sys/devices/system/cpu/online", hostfs.Default().Sys("devices/system/cpu/online"))
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	r, err := hostfs.New(dir)
	require.NoError(t, err)
	p := r.Sys("devices/system/node/node0/cpulist")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("0-31\n\x00"), 0o644))
	s, err := hostfs.ReadString(p)
	require.NoError(t, err)
	assert.Equal(t, "0-31", s)

	n := r.Sys("class/net/eth0/device/numa_node")
	require.NoError(t, os.MkdirAll(filepath.Dir(n), 0o755))
	require.NoError(t, os.WriteFile(n, []byte("-1\n"), 0o644))
	v, err := hostfs.ReadInt(n)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), v)

	require.NoError(t, os.WriteFile(n, []byte("x\n"), 0o644))
	_, err = hostfs.ReadInt(n)
	require.ErrorContains(t, err, n)
	require.ErrorContains(t, err, `value "x" is not a decimal integer`)

	_, err = hostfs.ReadString(r.Sys("nope"))
	require.ErrorIs(t, err, os.ErrNotExist)
	var pe *hostfs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, r.Sys("nope"), pe.Path)
	assert.True(t, hostfs.Exists(p))
	assert.False(t, hostfs.Exists(r.Sys("nope")))
}

func TestReadRealProc(t *testing.T) {
	b, err := hostfs.ReadAttr(hostfs.Default().Sys("devices/system/cpu/online"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no sysfs on this machine")
	}
	require.NoError(t, err)
	assert.NotEmpty(t, hostfs.Trim(string(b)))
	whole, err := hostfs.ReadFile(hostfs.Default().Proc("interrupts"))
	require.NoError(t, err)
	assert.Contains(t, string(whole), "CPU0")
}

func TestWriteAttrFixture(t *testing.T) {
	dir := t.TempDir()
	r, err := hostfs.New(dir)
	require.NoError(t, err)
	p := r.Proc("sys/net/ipv4/tcp_max_tw_buckets")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("65536\n"), 0o644))
	require.NoError(t, r.WriteAttr(p, "0"))
	s, err := hostfs.ReadString(p)
	require.NoError(t, err)
	assert.Equal(t, "0", s, "fixture writes replace the whole value")

	// Never creates a file.
	err = r.WriteAttr(r.Sys("devices/system/cpu/cpu9/online"), "1")
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.EqualError(t, err, `write "1" to `+r.Sys("devices/system/cpu/cpu9/online")+`: no such file or directory`)
	assert.False(t, hostfs.Exists(r.Sys("devices/system/cpu/cpu9/online")))

	// Injected kernel refusals keep the file untouched and map errnos.
	busy := r.WithWriteFunc(func(path, value string) error {
		if value == "0" {
			return syscall.EBUSY
		}
		return nil
	})
	err = busy.WriteAttr(p, "0")
	require.ErrorIs(t, err, syscall.EBUSY)
	require.NoError(t, busy.WriteAttr(p, "7"))
	s, _ = hostfs.ReadString(p)
	assert.Equal(t, "7", s)

	for _, tc := range []struct {
		errno  syscall.Errno
		target error
	}{
		{syscall.EPERM, os.ErrPermission},
		{syscall.EACCES, os.ErrPermission},
		{syscall.ENODEV, os.ErrNotExist},
		{syscall.ENOENT, os.ErrNotExist},
	} {
		e := r.WithWriteFunc(func(string, string) error { return tc.errno }).WriteAttr(p, "1")
		assert.ErrorIs(t, e, tc.target, tc.errno.Error())
		assert.ErrorIs(t, e, tc.errno)
	}
}

func TestWriteAttrHostRefusesOrdinaryFile(t *testing.T) {
	// On the host root, a write to a file outside sysfs/procfs is refused
	// before it is opened, so the file keeps its content.
	f := filepath.Join(t.TempDir(), "grub")
	require.NoError(t, os.WriteFile(f, []byte("keep\n"), 0o644))
	err := hostfs.Default().WriteAttr(f, "0")
	require.ErrorContains(t, err, "not on sysfs or procfs")
	b, _ := os.ReadFile(f)
	assert.Equal(t, "keep\n", string(b))
}
