// Package testutil holds helpers nettune's tests share: privilege gates for
// tests that touch the real host, the location of the shared corpus of
// real-world inputs, and extraction of captured sysfs archives into a
// temporary directory.
package testutil

import (
	"archive/tar"
	"compress/bzip2"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// HostTestsEnv is the environment variable that, set to 1, allows tests
// that change the running host (CPU hotplug, sysctls, IRQ affinity). They
// still restore what they change, in t.Cleanup.
const HostTestsEnv = "NETTUNE_HOST_TESTS"

// RequireRoot skips the test unless it runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (run the integration tests as root, see README)")
	}
}

// RequireHostTests skips the test unless it runs as root with
// NETTUNE_HOST_TESTS=1: the gate for tests that change the running host.
func RequireHostTests(t testing.TB) {
	t.Helper()
	RequireRoot(t)
	if os.Getenv(HostTestsEnv) != "1" {
		t.Skipf("skipped: changes the running host; set %s=1 to run it (it restores what it changes)", HostTestsEnv)
	}
}

// RepoRoot returns the module's root directory (the one holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testutil: go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// CorpusDir returns ../shared/corpus beside the repository, the real-world
// inputs every parser is tested on. Without it the test is skipped, except
// under CI (CI=true), where a missing corpus is a failure.
func CorpusDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(RepoRoot(t)), "shared", "corpus")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("corpus %s missing: CI runs with ../shared beside the clone", dir)
		}
		t.Skipf("skipped: corpus %s not present beside the repository", dir)
	}
	return dir
}

// CorpusFile returns the path of a file under the corpus, e.g.
// CorpusFile(t, "grub", "fedora-Guru-25.grub").
func CorpusFile(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{CorpusDir(t)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("corpus file: %v", err)
	}
	return p
}

// ExtractSysroot extracts a captured tree archive (.tar.gz, .tgz, .tar.bz2
// or .tar) and returns the directory that holds its sys/ (the archive's
// top folder when it has one).
//
// Extraction is cached by the archive's content under the user's cache
// directory (as the Go build cache is), so the large corpus trees are
// decompressed once per machine; each call gets its own copy of the tree
// in t.TempDir(), which the test may change.
func ExtractSysroot(t testing.TB, archive string) string {
	t.Helper()
	cached, err := cachedExtract(archive)
	if err != nil {
		t.Fatalf("extract %s: %v", archive, err)
	}
	dest := t.TempDir()
	if err := copyTree(cached, dest); err != nil {
		t.Fatalf("copy extracted %s: %v", archive, err)
	}
	if _, err := os.Stat(filepath.Join(dest, "sys")); err == nil {
		return dest
	}
	des, err := os.ReadDir(dest)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range des {
		if _, err := os.Stat(filepath.Join(dest, d.Name(), "sys")); err == nil {
			return filepath.Join(dest, d.Name())
		}
	}
	t.Fatalf("extract %s: no sys/ directory in the archive", archive)
	return ""
}

// extractVersion is part of the cache key: bump it when extract changes.
const extractVersion = "2"

func cachedExtract(archive string) (string, error) {
	data, err := os.ReadFile(archive)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(extractVersion), data...))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	parent := filepath.Join(base, "nettune-test-sysroots")
	final := filepath.Join(parent, hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(final); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, ".extract-")
	if err != nil {
		return "", err
	}
	if err := extract(archive, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another test process finished the same extraction first.
		os.RemoveAll(tmp)
		if _, serr := os.Stat(final); serr != nil {
			return "", err
		}
	}
	return final, nil
}

// copyTree copies the regular files, directories and symlinks under src
// into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
		return nil
	})
}

func extract(archive, dest string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(archive, ".gz"), strings.HasSuffix(archive, ".tgz"):
		gz, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		defer gz.Close()
		r = gz
	case strings.HasSuffix(archive, ".bz2"):
		r = bzip2.NewReader(f)
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || strings.HasPrefix(name, "..") {
			return fmt.Errorf("unsafe path %q in archive", h.Name)
		}
		p := filepath.Join(dest, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, p); err != nil && !os.IsExist(err) {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
	}
}

// LockHotplug serialises the tests that hotplug CPUs across test
// processes (go test runs packages in parallel) and keeps them apart from
// the tests that called StableCPUs: it holds the CPU lock exclusively
// until t.Cleanup. Tests waiting in StableCPUs queue behind a waiting
// hotplug test, so it is not starved.
func LockHotplug(t testing.TB) {
	t.Helper()
	lockCPUs(t, true)
}

// StableCPUs makes the set of online CPUs hold still until t.Cleanup: the
// test shares the CPU lock with other such tests and no test that calls
// LockHotplug takes a CPU offline meanwhile. Tests that compare two views
// of the CPUs taken at different times (ours and numactl's or lscpu's, a
// process's affinity before and after) or time work against the CPU count
// call it; a test must not call both.
func StableCPUs(t testing.TB) {
	t.Helper()
	lockCPUs(t, false)
}

// cpuLockWait bounds the wait for the CPU lock; the longest holder is a
// tuning-study test that measures Tomcat for about a minute.
const cpuLockWait = 5 * time.Minute

// lockCPUs is a readers–writer lock across processes from two flock(2)
// files in $TMPDIR. A turnstile, held exclusively for a moment by readers
// and for the whole test by a writer, gives a waiting writer precedence;
// the CPU lock itself is held shared by readers and exclusively by the
// writer.
func lockCPUs(t testing.TB, exclusive bool) {
	t.Helper()
	release, err := lockCPUsIn(os.TempDir(), exclusive, cpuLockWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}

// lockCPUsIn takes the CPU lock in dir and returns its release.
func lockCPUsIn(dir string, exclusive bool, wait time.Duration) (release func(), err error) {
	deadline := time.Now().Add(wait)
	turnstile, err := flock(filepath.Join(dir, "nettune-cpu-turnstile.lock"), syscall.LOCK_EX, deadline)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	cpus, err := flock(filepath.Join(dir, "nettune-cpu-hotplug.lock"), how, deadline)
	if err != nil || !exclusive {
		turnstile.Close() // closing releases the lock
	}
	if err != nil {
		return nil, err
	}
	return func() {
		cpus.Close()
		if exclusive {
			turnstile.Close()
		}
	}, nil
}

// flock opens the lock file p and takes lock how on it, polling until
// deadline.
func flock(p string, how int, deadline time.Time) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("CPU lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if err != syscall.EWOULDBLOCK || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("CPU lock %s: %w (gave up waiting at %s)", p, err, deadline.Format(time.TimeOnly))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Debian's tomcat10 layout, which the Tomcat tests copy from.
const (
	debianTomcatHome = "/usr/share/tomcat10"
	debianTomcatBase = "/var/lib/tomcat10"
	// debianTomcatShipped holds the package's own copies of the files it
	// installs in /etc/tomcat10 (server.xml, web.xml, …).
	debianTomcatShipped = "/usr/share/tomcat10/etc"
)

// DebianTomcatBase copies Debian's tomcat10 instance (conf from
// /etc/tomcat10 through /var/lib/tomcat10/conf with the files as the
// package ships them from /usr/share/tomcat10/etc, the ROOT webapp, the
// examples context) into a new temporary CATALINA_BASE and returns it. It
// needs root (/etc/tomcat10 is root:tomcat 0640) and the tomcat10 and
// tomcat10-examples packages; the copy is owned as Debian's instance is
// (conf root:tomcat, logs, temp, work and webapps tomcat), so Tomcat runs
// from it as user tomcat. Without the packages the test is skipped, or
// fails under CI, which must install them.
func DebianTomcatBase(t testing.TB) string {
	t.Helper()
	RequireRoot(t)
	for _, p := range []string{
		filepath.Join(debianTomcatHome, "bin", "catalina.sh"),
		filepath.Join(debianTomcatBase, "conf", "server.xml"),
		"/usr/share/tomcat10-examples/examples",
	} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI must install tomcat10 and tomcat10-examples (.ci/setup): %v", err)
			}
			t.Skipf("skipped: Debian tomcat10 + tomcat10-examples not installed: %v", err)
		}
	}
	base := t.TempDir()
	for _, d := range []string{"logs", "temp", "work", "webapps"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range [][]string{
		{"cp", "-rL", filepath.Join(debianTomcatBase, "conf") + "/.", filepath.Join(base, "conf")},
		// Tests of the packaged instance edit /etc/tomcat10/server.xml
		// (the study comments out its access log) while other packages'
		// tests copy it: the files as the package ships them come from
		// /usr/share/tomcat10/etc, which nothing changes.
		{"cp", "-rL", debianTomcatShipped + "/.", filepath.Join(base, "conf")},
		{"cp", "-rL", filepath.Join(debianTomcatBase, "webapps", "ROOT"), filepath.Join(base, "webapps")},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", c, err, out)
		}
	}
	ownAsDebian(t, base)
	return base
}

// ownAsDebian gives a copied CATALINA_BASE Debian's ownership: conf/
// root:tomcat, the folders Tomcat writes owned by tomcat, and the path to
// base traversable, so the copy runs as user tomcat as the packaged
// instance does (tomcatconf runs an instance as the owner of logs/ when
// root owns conf/), never as root.
func ownAsDebian(t testing.TB, base string) {
	t.Helper()
	for _, c := range [][]string{
		{"chgrp", "-R", "tomcat", filepath.Join(base, "conf")},
		{"chown", "-R", "tomcat:tomcat", filepath.Join(base, "logs"), filepath.Join(base, "temp"),
			filepath.Join(base, "work"), filepath.Join(base, "webapps")},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v (Debian's tomcat10 package creates user tomcat): %v: %s", c, err, out)
		}
	}
	// t.TempDir makes base and its parent 0700.
	for _, d := range []string{base, filepath.Dir(base)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// packagedTomcatWait bounds the wait for the packaged-Tomcat lock: a
// whole tuning study against /var/lib/tomcat10 can hold it for minutes.
const packagedTomcatWait = 15 * time.Minute

// LockPackagedTomcat serialises, across test processes, the tests that
// start, stop or reconfigure Debian's installed tomcat10 itself
// (/var/lib/tomcat10, port 8080, the tomcat10 unit), so two packages never
// fight for its port or its files. It holds an exclusive flock(2) on a file
// in $TMPDIR until t.Cleanup. Call it before the test looks at the
// instance, and register cleanups that stop JVMs after it, so they run
// before the lock is released. The installed tomcat10 is a service of
// this host: the test is skipped without NETTUNE_HOST_TESTS=1
// (RequireHostTests), so `go test ./...` as root on a developer's machine
// leaves it alone.
func LockPackagedTomcat(t testing.TB) {
	t.Helper()
	RequireHostTests(t)
	f, err := flock(filepath.Join(os.TempDir(), "nettune-packaged-tomcat.lock"), syscall.LOCK_EX,
		time.Now().Add(packagedTomcatWait))
	if err != nil {
		t.Fatalf("packaged Tomcat lock: %v", err)
	}
	t.Cleanup(func() { f.Close() })
}

// RequirePackagedTomcat skips the test unless it runs as root with
// Debian's tomcat10 and tomcat10-examples installed (its unit file, its
// CATALINA_HOME and CATALINA_BASE, and the examples webapp); under CI
// (CI=true) missing packages fail the test instead, since CI must install
// them.
func RequirePackagedTomcat(t testing.TB) {
	t.Helper()
	RequireRoot(t)
	for _, p := range []string{
		filepath.Join(debianTomcatHome, "bin", "catalina.sh"),
		filepath.Join(debianTomcatBase, "conf", "server.xml"),
		"/usr/share/tomcat10-examples/examples",
		PackagedTomcatUnit,
		PackagedTomcatStart,
	} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI must install tomcat10 and tomcat10-examples (.ci/setup): %v", err)
			}
			t.Skipf("skipped: Debian tomcat10 + tomcat10-examples not installed: %v", err)
		}
	}
	if _, err := user.Lookup(PackagedTomcatUser); err != nil {
		t.Fatalf("tomcat10 is installed but its user %q is missing: %v", PackagedTomcatUser, err)
	}
}

// Debian's tomcat10 as its package runs it.
const (
	// PackagedTomcatUnit is the package's systemd unit file.
	PackagedTomcatUnit = "/lib/systemd/system/tomcat10.service"
	// PackagedTomcatStart is the script the unit's ExecStart= runs
	// with /bin/sh; it ends in `exec catalina.sh run`.
	PackagedTomcatStart = "/usr/libexec/tomcat10/tomcat-start.sh"
	// PackagedTomcatUser is the unit's User= and Group=.
	PackagedTomcatUser = "tomcat"
	// PackagedTomcatURL is the examples' HelloWorld servlet on the
	// package's Connector.
	PackagedTomcatURL = "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample"
)

// packagedTomcatEnv is the unit's Environment= as Debian 12's tomcat10
// ships it, written out here so that a test starts Tomcat the unit's way
// without nettune's unit-file parser.
var packagedTomcatEnv = []string{
	"CATALINA_HOME=" + debianTomcatHome,
	"CATALINA_BASE=" + debianTomcatBase,
	"CATALINA_TMPDIR=/tmp",
	"JAVA_OPTS=-Djava.awt.headless=true",
}

// StartPackagedTomcatAsUnit starts Debian's installed tomcat10 the way its
// systemd unit does, without nettune: /bin/sh tomcat-start.sh as user
// tomcat (setuid, setgid, its groups), with the unit's environment, in its
// own session, no PID file; its output goes to a file in t.TempDir(). It
// waits (at most 3 minutes) until PackagedTomcatURL answers 200 and
// returns the PID, which is the JVM's (the script execs catalina.sh run,
// which execs java). t.Cleanup stops the JVM if it still runs (SIGTERM,
// then SIGKILL) and reaps it. Call LockPackagedTomcat first.
func StartPackagedTomcatAsUnit(t testing.TB) int {
	t.Helper()
	u, err := user.Lookup(PackagedTomcatUser)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	var groups []uint32
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if n, err := strconv.ParseUint(id, 10, 32); err == nil {
				groups = append(groups, uint32(n))
			}
		}
	}
	out, err := os.CreateTemp(t.TempDir(), "tomcat10-unit-*.out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("/bin/sh", PackagedTomcatStart)
	cmd.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
		"HOME=" + u.HomeDir, "USER=" + u.Username, "LOGNAME=" + u.Username}, packagedTomcatEnv...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true,
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s as %s: %v", PackagedTomcatStart, u.Username, err)
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
			return
		default:
		}
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-done
		}
	})
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(3 * time.Minute); ; {
		select {
		case <-done:
			log, _ := os.ReadFile(out.Name())
			t.Fatalf("tomcat10 started the unit's way exited: %s", log)
		default:
		}
		if resp, err := client.Get(PackagedTomcatURL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return pid
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(out.Name())
			t.Fatalf("tomcat10 started the unit's way (PID %d) did not answer %s within 3 minutes: %s", pid, PackagedTomcatURL, log)
		}
		time.Sleep(200 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// RootOwnedFiles returns the files and directories under dirs (links
// followed at the top only) that belong to root, for a test to compare
// before and after it ran Tomcat: the package's folders
// (/var/log/tomcat10, /var/cache/tomcat10) hold only the tomcat user's.
func RootOwnedFiles(t testing.TB, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, d := range dirs {
		top, err := filepath.EvalSymlinks(d)
		if err != nil {
			t.Fatal(err)
		}
		err = filepath.WalkDir(top, func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				if os.IsNotExist(err) {
					return nil // removed meanwhile (a rotated log)
				}
				return err
			}
			if fi.Sys().(*syscall.Stat_t).Uid == 0 && p != top {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// UserEmulated reports whether this process runs under a user-mode
// emulator (qemu-user, as .ci/test runs the arm64 tests). It is read from
// /proc/self/stat: the kernel always prints the state as a letter (R, S,
// D, …), while qemu-user answers with its own made-up stat whose state is
// "0". The check needs no variable from the script, so it cannot be set
// by mistake on a real arm64 machine.
func UserEmulated() bool {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	c := b[i+2]
	return !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z')
}

// SkipUnderUserEmulation skips the test under a user-mode emulator (see
// UserEmulated), saying why it cannot run there.
func SkipUnderUserEmulation(t testing.TB, why string) {
	t.Helper()
	if UserEmulated() {
		t.Skipf("skipped under user-mode emulation (/proc/self/stat is qemu's, state not a letter): %s", why)
	}
}

// TestJVMOptions are the JVM options SetTestJVMOptions gives the JVMs a
// package's tests start: C1 only. Such tests assert properties (a change
// undone, a JVM restarted, a file as found), never a figure's size, and
// on a 2-CPU host C2's compilations were most of a test JVM's CPU.
const TestJVMOptions = "-XX:TieredStopAtLevel=1"

// SetTestJVMOptions sets JDK_JAVA_OPTIONS to TestJVMOptions in this
// process's environment, unless it is set already (then it is kept as
// it is), for a package's TestMain. The java launcher reads it, so every
// JVM the tests start gets it, also through Debian's tomcat-start.sh,
// which assigns JAVA_OPTS afresh; a container of nspawn.ForTest passes
// it to its services. It does not show in /proc/PID/cmdline, where the
// study checks a jvm: step's option.
func SetTestJVMOptions() {
	if _, ok := os.LookupEnv("JDK_JAVA_OPTIONS"); !ok {
		os.Setenv("JDK_JAVA_OPTIONS", TestJVMOptions)
	}
}
