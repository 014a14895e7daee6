package nspawn_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/nspawn"
)

func TestImageName(t *testing.T) {
	a := nspawn.TomcatImage
	b := a
	b.Include = append(append([]string(nil), a.Include...), "strace")
	c := a
	c.Suite = "trixie"
	assert.Equal(t, a.Name(), nspawn.TomcatImage.Name(), "the name is a pure function of the image")
	assert.NotEqual(t, a.Name(), b.Name(), "another package list is another tree")
	assert.True(t, strings.HasPrefix(c.Name(), "trixie-minbase-"), c.Name())
	d := a
	d.Mirror = "http://mirror.example/debian"
	assert.Equal(t, a.Name(), d.Name(), "the mirror does not shape the tree")
	assert.Equal(t, []string{"--variant=minbase",
		"--include=systemd,systemd-sysv,dbus,procps,curl,tomcat10,tomcat10-examples,libpam-systemd,tuned,ethtool,iproute2",
		"bookworm", "/x"}, a.DebootstrapArgs("/x"), "no mirror named: debootstrap's default")
	assert.Equal(t, "http://mirror.example/debian", d.DebootstrapArgs("/x")[4])
}

// The mirror comes from the host's apt sources, in both of their forms and
// in apt's file order; disabled entries, deb-src, other suites, files apt
// does not read and sources without main are passed over.
func TestHostMirror(t *testing.T) {
	mk := func(t *testing.T, files map[string]string) string {
		root := t.TempDir()
		for p, s := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(s), 0o644))
		}
		return root
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"one-line with options", map[string]string{"etc/apt/sources.list": "# comment\ndeb-src http://src.example/debian bookworm main\n" +
			"deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://one.example/debian bookworm main contrib # x\n"}, "http://one.example/debian"},
		{"deb822, as Debian 12 installs it", map[string]string{"etc/apt/sources.list.d/debian.sources": "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\n" +
			"URIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n" +
			"Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\n"}, "http://deb.debian.org/debian"},
		{"disabled stanza, other suite, no main", map[string]string{
			"etc/apt/sources.list":                   "deb http://old.example/debian bullseye main\ndeb http://nf.example/debian bookworm non-free\n",
			"etc/apt/sources.list.d/a.sources":       "Enabled: no\nTypes: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\n",
			"etc/apt/sources.list.d/b.list.disabled": "deb http://ignored.example/debian bookworm main\n",
			"etc/apt/sources.list.d/c.sources":       "Types: deb deb-src\nURIs: https://c.example/debian\n  http://c2.example/debian\nSuites: bookworm\nComponents: main\n"},
			"https://c.example/debian"},
		{"cdrom and mirror+file are not for debootstrap", map[string]string{"etc/apt/sources.list": "deb cdrom:[Debian]/ bookworm main\ndeb mirror+file:/etc/apt/m.txt bookworm main\n"}, ""},
		{"none", map[string]string{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, nspawn.HostMirror(mk(t, tc.files), "bookworm"))
		})
	}
}

func TestEnsureCached(t *testing.T) {
	cache := t.TempDir()
	im := nspawn.Image{Suite: "none", Mirror: "http://127.0.0.1:1/", Variant: "minbase"}
	require.NoError(t, os.MkdirAll(filepath.Join(cache, im.Name(), "usr"), 0o755))
	// A cached tree is used as is: debootstrap is not run (it could not
	// succeed with this mirror).
	res, err := nspawn.Ensure(context.Background(), cache, im, nil)
	require.NoError(t, err)
	assert.False(t, res.Built)
	assert.Equal(t, filepath.Join(cache, im.Name()), res.Dir)
}

// The build's own steps around debootstrap, with a stand-in debootstrap
// first in PATH that makes a tree in its target and records its
// arguments: the tree is renamed into place, readable by every user (it
// becomes the container's "/"), and a second call reuses it.
func TestEnsureBuildsIntoPlace(t *testing.T) {
	bin, cache := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\nfor a; do last2=$last1; last1=$a; done\n" +
		"echo \"$@\" > " + filepath.Join(bin, "args") + "\nmkdir -p \"$last2/usr/bin\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "debootstrap"), []byte(script), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	im := nspawn.TomcatImage

	res, err := nspawn.Ensure(context.Background(), cache, im, nil)
	require.NoError(t, err)
	assert.True(t, res.Built)
	assert.Equal(t, filepath.Join(cache, im.Name()), res.Dir)
	assert.DirExists(t, filepath.Join(res.Dir, "usr", "bin"))
	fi, err := os.Stat(res.Dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	builds, _ := filepath.Glob(filepath.Join(cache, ".*.build-*"))
	assert.Empty(t, builds)
	args, err := os.ReadFile(filepath.Join(bin, "args"))
	require.NoError(t, err)
	assert.Contains(t, string(args), "--variant=minbase --include=systemd,systemd-sysv,dbus,procps,curl,tomcat10,tomcat10-examples,libpam-systemd,tuned,ethtool,iproute2 bookworm ")
	// The mirror is the host's (or none, debootstrap's default), never
	// one the code names.
	fields := strings.Fields(string(args))
	if m := nspawn.HostMirror("/", "bookworm"); m != "" {
		assert.Equal(t, m, fields[len(fields)-1], "the host's apt source")
	} else {
		assert.Contains(t, fields[len(fields)-1], ".build-", "no mirror argument")
	}

	require.NoError(t, os.Remove(filepath.Join(bin, "args")))
	res, err = nspawn.Ensure(context.Background(), cache, im, nil)
	require.NoError(t, err)
	assert.False(t, res.Built)
	assert.NoFileExists(t, filepath.Join(bin, "args"), "debootstrap is not run again")
}

// A failed build leaves neither the tree nor its build directory.
func TestEnsureFailedBuild(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: debootstrap needs root")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must install debootstrap: %v", err)
		}
		t.Skipf("skipped: debootstrap not installed: %v", err)
	}
	cache := t.TempDir()
	// Nothing listens on port 1 of loopback: debootstrap fails at once.
	im := nspawn.Image{Suite: "bookworm", Mirror: "http://127.0.0.1:1/debian", Variant: "minbase"}
	stale := filepath.Join(cache, "."+im.Name()+".build-crashed")
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "usr"), 0o755))
	_, err := nspawn.Ensure(context.Background(), cache, im, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "debootstrap")
	assert.NoDirExists(t, filepath.Join(cache, im.Name()), "no tree after a failed build")
	builds, _ := filepath.Glob(filepath.Join(cache, ".*.build-*"))
	assert.Empty(t, builds, "the failed and the crashed build directories are removed")
}

func TestLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "l.lock")
	release, err := nspawn.Lock(context.Background(), p, time.Second)
	require.NoError(t, err)
	// flock(2) locks belong to the open file: a second open conflicts even
	// in the same process.
	_, err = nspawn.Lock(context.Background(), p, 0)
	require.Error(t, err, "the lock is held")
	release()
	release2, err := nspawn.Lock(context.Background(), p, 0)
	require.NoError(t, err, "released")
	release2()
}

func TestNewRefusesNonRootfs(t *testing.T) {
	_, err := nspawn.New(t.TempDir(), t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a root file system")
}

func TestIntegrationBoot(t *testing.T) {
	c := nspawn.ForTest(t, func(upper string) error {
		if err := os.MkdirAll(filepath.Join(upper, "etc"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(upper, "etc", "nettune-probe"), []byte("from the host\n"), 0o644)
	})
	ctx := context.Background()

	out, err := c.Run(ctx, nil, "cat", "/etc/nettune-probe")
	require.NoError(t, err)
	assert.Equal(t, "from the host\n", string(out), "a file placed in Upper before Boot is in the container")

	out, err = c.Run(ctx, nil, "ps", "-o", "comm=", "-p", "1")
	require.NoError(t, err)
	assert.Equal(t, "systemd", strings.TrimSpace(string(out)), "PID 1 inside is systemd")

	out, err = c.Run(ctx, []string{"NETTUNE_X=42"}, "sh", "-c", `echo "$NETTUNE_X"`)
	require.NoError(t, err)
	assert.Equal(t, "42\n", string(out), "Run passes the environment it is given")

	// --private-network: the container has its own loopback only.
	dev, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c.Leader()), "net", "dev"))
	require.NoError(t, err)
	var ifaces []string
	for _, l := range strings.Split(string(dev), "\n")[2:] {
		if name, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			ifaces = append(ifaces, name)
		}
	}
	assert.Equal(t, []string{"lo"}, ifaces)

	// Writes inside land in the overlay, never in the cached tree.
	_, err = c.Run(ctx, nil, "sh", "-c", "echo changed > /etc/hostname-nettune-test")
	require.NoError(t, err)
	cached := filepath.Join(nspawn.DefaultCacheDir, nspawn.TomcatImage.Name(), "etc", "hostname-nettune-test")
	_, err = os.Stat(cached)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the cache is unchanged: %v", err)
	assert.FileExists(t, filepath.Join(c.Upper, "etc", "hostname-nettune-test"))

	// Stop powers off cleanly and leaves nothing; a second Stop is a no-op.
	require.NotEmpty(t, c.Leftovers())
	require.NoError(t, c.Stop(ctx))
	assert.Empty(t, c.Leftovers())
	require.NoError(t, c.Stop(ctx))
}
