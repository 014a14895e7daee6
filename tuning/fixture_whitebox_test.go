package tuning

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
)

// fixture describes a host tree built by the test.
type fixture struct {
	cpus       int           // cpu0..cpu(cpus-1), all present and possible
	possible   int           // possible ids; defaults to cpus
	notHotplug cpuset.Set    // CPUs without cpuN/online
	online     cpuset.Set    // initially online; defaults to all
	nodeOf     func(int) int // NUMA node of a CPU; nil = no node directory
	nodes      int
	twBuckets  string // net.ipv4.tcp_max_tw_buckets; "" = none
}

// seedsHost is the seeds' Graviton4 host: 192 CPUs, two nodes of 96,
// every CPU hot-pluggable (arm64 can offline cpu0).
func seedsHost() fixture {
	return fixture{cpus: 192, nodes: 2, nodeOf: func(id int) int { return id / 96 }, twBuckets: "65536"}
}

// thisMachineShape is this 2-CPU x86 machine: cpu0 has no online file.
func thisMachineShape() fixture {
	return fixture{cpus: 2, nodes: 1, notHotplug: cpuset.Of(0), nodeOf: func(int) int { return 0 }, twBuckets: "65536"}
}

func writeFile(t testing.TB, p, s string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
}

// build writes the tree under t.TempDir() and returns its root.
func (f fixture) build(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	sys := filepath.Join(dir, "sys", "devices", "system")
	online := f.online
	if online.IsEmpty() {
		online = cpuset.Range(0, f.cpus-1)
	}
	possible := f.possible
	if possible == 0 {
		possible = f.cpus
	}
	cpuDir := filepath.Join(sys, "cpu")
	writeFile(t, filepath.Join(cpuDir, "possible"), cpuset.Range(0, possible-1).String()+"\n")
	writeFile(t, filepath.Join(cpuDir, "present"), cpuset.Range(0, f.cpus-1).String()+"\n")
	writeFile(t, filepath.Join(cpuDir, "online"), online.String()+"\n")
	writeFile(t, filepath.Join(cpuDir, "offline"), cpuset.Range(0, possible-1).Difference(online).String()+"\n")
	for id := 0; id < f.cpus; id++ {
		d := filepath.Join(cpuDir, "cpu"+strconv.Itoa(id))
		require.NoError(t, os.MkdirAll(d, 0o755))
		writeFile(t, filepath.Join(d, "uevent"), "")
		if !f.notHotplug.Contains(id) {
			v := "0\n"
			if online.Contains(id) {
				v = "1\n"
			}
			writeFile(t, filepath.Join(d, "online"), v)
		}
		if f.nodeOf != nil {
			n := "node" + strconv.Itoa(f.nodeOf(id))
			require.NoError(t, os.Symlink(filepath.Join("..", "..", "node", n), filepath.Join(d, n)))
		}
	}
	for n := 0; n < f.nodes; n++ {
		var ids []int
		for _, id := range online.IDs() {
			if f.nodeOf(id) == n {
				ids = append(ids, id)
			}
		}
		writeFile(t, filepath.Join(sys, "node", "node"+strconv.Itoa(n), "cpulist"), cpuset.Of(ids...).String()+"\n")
	}
	if f.twBuckets != "" {
		writeFile(t, filepath.Join(dir, "proc", "sys", "net", "ipv4", "tcp_max_tw_buckets"), f.twBuckets+"\n")
	}
	return dir
}

// kernel simulates what the kernel does on a cpuN/online write in a
// fixture tree: it updates the online and offline lists and the nodes'
// cpulists, and fails the CPUs listed in fail with their errno.
type kernel struct {
	t      testing.TB
	dir    string
	mu     sync.Mutex
	fail   map[int]error // cpu -> errno returned for a write to it
	writes []string      // "cpuN=V" in order
	ignore bool          // accept writes but do not change the lists
}

func (k *kernel) write(path, value string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	base := filepath.Base(filepath.Dir(path))
	if filepath.Base(path) != "online" || !strings.HasPrefix(base, "cpu") {
		return nil
	}
	id, err := strconv.Atoi(strings.TrimPrefix(base, "cpu"))
	if err != nil {
		return nil
	}
	k.writes = append(k.writes, base+"="+value)
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err != nil {
		return nil // the real write fails the same way
	} else {
		f.Close()
	}
	if e, ok := k.fail[id]; ok {
		return e
	}
	if value != "0" && value != "1" {
		return syscall.EINVAL
	}
	if k.ignore {
		return nil
	}
	cpuDir := filepath.Join(k.dir, "sys", "devices", "system", "cpu")
	read := func(name string) cpuset.Set {
		s, err := hostfs.ReadString(filepath.Join(cpuDir, name))
		require.NoError(k.t, err)
		return cpuset.MustParse(s)
	}
	online, possible := read("online"), read("possible")
	if value == "1" {
		online = online.With(id)
	} else {
		online = online.Without(id)
	}
	writeFile(k.t, filepath.Join(cpuDir, "online"), online.String()+"\n")
	writeFile(k.t, filepath.Join(cpuDir, "offline"), possible.Difference(online).String()+"\n")
	nodes, _ := numbered(filepath.Join(cpuDir, base), "node")
	for _, n := range nodes {
		p := filepath.Join(k.dir, "sys", "devices", "system", "node", "node"+strconv.Itoa(n), "cpulist")
		s, err := hostfs.ReadString(p)
		require.NoError(k.t, err)
		set := cpuset.MustParse(s)
		if value == "1" {
			set = set.With(id)
		} else {
			set = set.Without(id)
		}
		writeFile(k.t, p, set.String()+"\n")
	}
	return nil
}

// newFixtureHost builds f and returns a Host on it whose writes go
// through a simulated kernel.
func newFixtureHost(t testing.TB, f fixture) (*Host, *kernel) {
	t.Helper()
	dir := f.build(t)
	h, err := New(dir)
	require.NoError(t, err)
	k := &kernel{t: t, dir: dir, fail: map[int]error{}}
	h.root = h.root.WithWriteFunc(k.write)
	return h, k
}
