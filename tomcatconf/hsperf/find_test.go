package hsperf_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tomcatconf/hsperf"
)

// fixtureJVM writes, under root, the /proc of a process pid of uid whose
// PID in its own namespace is nspid, and its hsperfdata file in each of
// users' folders of its /tmp; it returns the files' paths.
func fixtureJVM(t *testing.T, root string, pid, uid, nspid int, users ...string) []string {
	t.Helper()
	proc := filepath.Join(root, "proc", fmt.Sprint(pid))
	require.NoError(t, os.MkdirAll(proc, 0o755))
	status := fmt.Sprintf("Name:\tjava\nTgid:\t%d\nPid:\t%d\nUid:\t%d\t%d\t%d\t%d\nGid:\t0\t0\t0\t0\nNSpid:\t%d\t%d\n", pid, pid, uid, uid, uid, uid, pid, nspid)
	require.NoError(t, os.WriteFile(filepath.Join(proc, "status"), []byte(status), 0o644))
	var paths []string
	for _, u := range users {
		dir := filepath.Join(proc, "root", "tmp", "hsperfdata_"+u)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		p := filepath.Join(dir, fmt.Sprint(nspid))
		require.NoError(t, os.WriteFile(p, realFile(t), 0o600))
		paths = append(paths, p)
	}
	return paths
}

// TestFindInContainer: a JVM in a container (its own PID namespace) is
// found by the PID it has there, the last NSpid of its status.
func TestFindInContainer(t *testing.T) {
	root := t.TempDir()
	want := fixtureJVM(t, root, 4242, os.Getuid(), 12, "tomcat")
	got, err := hsperf.Find(4242, &hsperf.Options{Root: root})
	require.NoError(t, err)
	assert.Equal(t, want[0], got)
	s, err := hsperf.Read(4242, &hsperf.Options{Root: root})
	require.NoError(t, err)
	n, _ := mustFigures(t, s).GC()
	assert.Equal(t, int64(530+5+185), n)

	// A kernel without NSpid: the PID is the file's name.
	old := t.TempDir()
	fixtureJVM(t, old, 77, os.Getuid(), 77, "tomcat")
	status := filepath.Join(old, "proc", "77", "status")
	require.NoError(t, os.WriteFile(status, []byte("Name:\tjava\nUid:\t0\t0\t0\t0\n"), 0o644))
	_, err = hsperf.Find(77, &hsperf.Options{Root: old})
	assert.NoError(t, err)

	require.NoError(t, os.WriteFile(status, []byte("Name:\tjava\n"), 0o644))
	_, err = hsperf.Find(77, &hsperf.Options{Root: old})
	assert.ErrorContains(t, err, "proc/77/status: no Uid line")
	_, err = hsperf.Find(78, &hsperf.Options{Root: old})
	assert.ErrorContains(t, err, "hsperf: process 78")
}

// TestFindOwner: of two users' files with the JVM's PID, the one owned by
// the JVM's user is its file; none of them owned by it is an error.
func TestFindOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("skipped: giving a file to another user needs root")
	}
	root := t.TempDir()
	paths := fixtureJVM(t, root, 500, 107, 500, "aaa", "tomcat")
	require.NoError(t, os.Chown(paths[1], 107, 107))
	got, err := hsperf.Find(500, &hsperf.Options{Root: root})
	require.NoError(t, err)
	assert.Equal(t, paths[1], got)

	require.NoError(t, os.Chown(paths[1], 0, 0))
	_, err = hsperf.Find(500, &hsperf.Options{Root: root})
	assert.ErrorContains(t, err, "process 500 (uid 107): 2 files match")
}

func mustFigures(t *testing.T, s *hsperf.Snapshot) hsperf.Figures {
	t.Helper()
	f, err := s.Figures()
	require.NoError(t, err)
	return f
}
