package nspawn

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultCacheDir holds the cached root file systems and the lock files.
const DefaultCacheDir = "/var/cache/nettune/nspawn"

// Bounds on the waits of this package.
const (
	// DefaultBuildTimeout bounds one debootstrap run (about a minute on
	// a good mirror).
	DefaultBuildTimeout = 15 * time.Minute
	// DefaultBootTimeout bounds Boot: from starting systemd-nspawn until
	// `systemctl is-system-running` says running or degraded.
	DefaultBootTimeout = 2 * time.Minute
	// DefaultStopTimeout bounds each step of Stop (a clean power-off,
	// then SIGKILL).
	DefaultStopTimeout = 60 * time.Second
	// lockWait bounds the wait for the build or boot lock; a whole
	// tuning study in a container can hold the boot lock for minutes.
	lockWait = 20 * time.Minute
)

// Image says what debootstrap installs.
type Image struct {
	Suite string // Debian suite, e.g. "bookworm"
	// Mirror is the archive debootstrap downloads from. Default "": the
	// one the host's apt sources give for Suite (HostMirror), or else
	// debootstrap's own default. It does not shape the tree, so it is not
	// part of Name.
	Mirror  string
	Variant string   // debootstrap --variant, e.g. "minbase"
	Include []string // debootstrap --include, in order
}

// TomcatImage is Debian bookworm with systemd as PID 1, curl for HTTP
// checks inside, Debian's tomcat10 with its examples (tomcat10.service
// enabled, Tomcat answering on 127.0.0.1:8080 after boot), and tuned
// (tuned.service enabled) with ethtool and iproute2. tuned needs polkitd,
// which needs a logind: debootstrap does not resolve the virtual package
// (default-logind | logind), so libpam-systemd, which provides it, is
// named.
var TomcatImage = Image{
	Suite:   "bookworm",
	Variant: "minbase",
	Include: []string{"systemd", "systemd-sysv", "dbus", "procps", "curl", "tomcat10", "tomcat10-examples",
		"libpam-systemd", "tuned", "ethtool", "iproute2"},
}

// Name is the image's directory name under the cache: the suite, the
// variant and a hash of everything that shapes the tree (not the mirror).
func (im Image) Name() string {
	sum := sha256.Sum256([]byte(strings.Join(append([]string{im.Suite, im.Variant}, im.Include...), "\n")))
	return im.Suite + "-" + im.Variant + "-" + hex.EncodeToString(sum[:6])
}

// DebootstrapArgs returns debootstrap's arguments to build the image in
// dir, from im.Mirror when it is set and with no mirror argument (its own
// default) when not; Ensure fills in the host's mirror first.
func (im Image) DebootstrapArgs(dir string) []string {
	args := []string{"--variant=" + im.Variant}
	if len(im.Include) > 0 {
		args = append(args, "--include="+strings.Join(im.Include, ","))
	}
	args = append(args, im.Suite, dir)
	if im.Mirror != "" {
		args = append(args, im.Mirror)
	}
	return args
}

// BuildResult says what Ensure did.
type BuildResult struct {
	Dir   string        // the complete root file system
	Built bool          // false when it was already cached
	Took  time.Duration // the debootstrap run; 0 when cached
}

// Ensure returns the root file system of im under cacheDir, building it
// with debootstrap when it is not there (see the package documentation).
// debootstrap's output goes to log (nil: discarded) and, on failure, its
// last lines into the error. Without im.Mirror it downloads from the
// host's apt source for im.Suite (HostMirror of "/"), or debootstrap's
// default when the host has none. It needs root and network access to
// the mirror; it writes only under cacheDir.
func Ensure(ctx context.Context, cacheDir string, im Image, log io.Writer) (BuildResult, error) {
	if im.Mirror == "" {
		im.Mirror = HostMirror("/", im.Suite)
	}
	final := filepath.Join(cacheDir, im.Name())
	res := BuildResult{Dir: final}
	if isDir(final) {
		return res, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return res, fmt.Errorf("nspawn: cache directory: %w", err)
	}
	unlock, err := Lock(ctx, filepath.Join(cacheDir, "."+im.Name()+".lock"), lockWait)
	if err != nil {
		return res, err
	}
	defer unlock()
	if isDir(final) { // another process built it while we waited
		return res, nil
	}
	// We hold the lock: a build directory left here is from a build that
	// crashed.
	stale, _ := filepath.Glob(filepath.Join(cacheDir, "."+im.Name()+".build-*"))
	for _, d := range stale {
		if err := os.RemoveAll(d); err != nil {
			return res, fmt.Errorf("nspawn: remove a crashed build %s: %w", d, err)
		}
	}
	tmp, err := os.MkdirTemp(cacheDir, "."+im.Name()+".build-")
	if err != nil {
		return res, fmt.Errorf("nspawn: %w", err)
	}
	// It becomes the container's "/": MkdirTemp's 0700 would keep every
	// service user (tomcat) out of the whole tree.
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return res, fmt.Errorf("nspawn: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultBuildTimeout)
	defer cancel()
	var out tailBuffer
	w := io.Writer(&out)
	if log != nil {
		w = io.MultiWriter(&out, log)
	}
	cmd := exec.CommandContext(ctx, "debootstrap", im.DebootstrapArgs(tmp)...)
	cmd.Stdout, cmd.Stderr = w, w
	t0 := time.Now()
	err = cmd.Run()
	res.Took = time.Since(t0)
	if err != nil {
		rmErr := os.RemoveAll(tmp)
		return res, fmt.Errorf("nspawn: debootstrap %s: %w (build directory removed: %v)\n%s",
			strings.Join(im.DebootstrapArgs(tmp), " "), err, rmErr, out.String())
	}
	if err := os.Rename(tmp, final); err != nil {
		return res, fmt.Errorf("nspawn: rename the built root file system %s to %s: %w", tmp, final, err)
	}
	res.Built = true
	return res, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Lock takes an exclusive flock(2) on the file p (created if missing),
// polling until it is free, ctx ends or wait passes, and returns its
// release.
func Lock(ctx context.Context, p string, wait time.Duration) (release func(), err error) {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("nspawn: lock: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) || ctx.Err() != nil {
			f.Close()
			return nil, fmt.Errorf("nspawn: lock %s: %w (gave up at %s)", p, err, time.Now().Format(time.TimeOnly))
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Container is one boot of a root file system. Build it with New, place
// files in Upper, then Boot, Run and Stop.
type Container struct {
	// Machine is the container's name (systemd-nspawn --machine).
	Machine string
	// Upper is the overlay's upper directory: a file written at
	// Upper/etc/x before Boot is /etc/x in the container. Writes inside
	// the container land here too, never in the cached tree.
	Upper string
	// Interfaces are network interfaces of this process's namespace that
	// systemd-nspawn moves into the container at Boot
	// (--network-interface=), and moves back out when the container
	// stops (a device keeps what was set on it inside).
	// Without udev on the host, Boot makes /sys read-only for
	// systemd-nspawn (in its own mount namespace), or it would wait for
	// udev to initialise them.
	Interfaces []string
	// LockWait is how long the last Boot waited for the boot lock, held
	// by another container's boot until it stopped.
	LockWait time.Duration

	rootfs, work, merged string

	cmd     *exec.Cmd
	waited  chan struct{} // closed when cmd.Wait returned
	waitErr error
	console *tailBuffer
	unlock  func()

	leader  int    // host PID of the container's PID 1
	pidNS   string // readlink of /proc/leader/ns/pid
	lockDir string // Boot's lockDir, for Reboot
}

// New prepares a container of the root file system rootfs in dir (an empty
// directory the caller owns and removes afterwards): it creates dir/upper,
// dir/work and dir/merged.
func New(rootfs, dir string) (*Container, error) {
	if !isDir(filepath.Join(rootfs, "usr")) {
		return nil, fmt.Errorf("nspawn: %s is not a root file system (no usr/)", rootfs)
	}
	c := &Container{
		Machine: "nettune-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10),
		Upper:   filepath.Join(dir, "upper"),
		rootfs:  rootfs,
		work:    filepath.Join(dir, "work"),
		merged:  filepath.Join(dir, "merged"),
		console: &tailBuffer{},
	}
	for _, d := range []string{c.Upper, c.work, c.merged} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("nspawn: %w", err)
		}
	}
	return c, nil
}

// Boot starts systemd-nspawn on the overlay, finds the container's PID 1
// and waits until `systemctl is-system-running --wait` inside says running
// or degraded, at most timeout (0: DefaultBootTimeout). It takes the boot
// lock under lockDir (see the package documentation), which Stop releases.
// It returns how long the boot took. On error the container is stopped.
//
// A container that was stopped can be booted again: the same overlay, so
// what the last boot wrote is still there, as after a reboot.
func (c *Container) Boot(ctx context.Context, lockDir string, timeout time.Duration) (time.Duration, error) {
	if c.cmd != nil {
		if c.exited() == nil {
			return 0, errors.New("nspawn: container already booted")
		}
		c.cmd, c.waited, c.waitErr, c.leader, c.pidNS = nil, nil, nil, 0, ""
	}
	c.lockDir = lockDir
	if timeout == 0 {
		timeout = DefaultBootTimeout
	}
	tl := time.Now()
	unlock, err := Lock(ctx, filepath.Join(lockDir, ".boot.lock"), lockWait)
	if err != nil {
		return 0, err
	}
	c.unlock = unlock
	t0 := time.Now()
	c.LockWait = t0.Sub(tl)
	// The overlay is mounted in the shell's new, private mount namespace,
	// which systemd-nspawn inherits by exec: it goes away with them.
	script := `mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4" && shift 3 && exec systemd-nspawn -D "$@"`
	if len(c.Interfaces) > 0 && !udevRunning() {
		// systemd-nspawn moves an interface only once udev has
		// initialised it, and takes udev to be running whenever /sys is
		// writable (systemd's udev_available()). On a host without udev,
		// /sys goes read-only in this private mount namespace (a bind
		// remount: the host's mount is untouched), as in a container.
		script = `mount -o remount,bind,ro /sys && ` + script
	}
	args := []string{"-c", script, "sh", c.rootfs, c.Upper, c.work, c.merged,
		"-b", "--register=no", "--keep-unit", "--console=pipe", "--private-network",
		"--machine=" + c.Machine}
	for _, ifname := range c.Interfaces {
		args = append(args, "--network-interface="+ifname)
	}
	c.cmd = exec.Command("/bin/sh", args...)
	c.cmd.Stdout, c.cmd.Stderr = c.console, c.console
	if c.cmd.SysProcAttr, err = bootProcAttr(); err != nil {
		c.unlock()
		return 0, err
	}
	if err := c.cmd.Start(); err != nil {
		c.unlock()
		return 0, fmt.Errorf("nspawn: start systemd-nspawn: %w", err)
	}
	c.waited = make(chan struct{})
	go func() { c.waitErr = c.cmd.Wait(); close(c.waited) }()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(err error) (time.Duration, error) {
		serr := c.Stop(context.WithoutCancel(ctx))
		return time.Since(t0), fmt.Errorf("nspawn: boot %s: %w (stopped: %v)\n--- console ---\n%s", c.rootfs, err, serr, c.console.String())
	}
	if c.leader, err = c.findLeader(ctx); err != nil {
		return fail(err)
	}
	if c.pidNS, err = os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", c.leader)); err != nil {
		return fail(err)
	}
	last := ""
	for {
		tctx, tcancel := context.WithTimeout(ctx, 10*time.Second)
		out, _ := c.Run(tctx, nil, "systemctl", "is-system-running", "--wait")
		tcancel()
		state := strings.TrimSpace(string(out))
		if state == "running" || state == "degraded" {
			return time.Since(t0), nil
		}
		last = state
		if err := c.exited(); err != nil {
			return fail(err)
		}
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("systemctl is-system-running says %q after %s: %w", last, timeout, ctx.Err()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// udevRunning reports whether udev runs on this host: its control socket
// /run/udev/control exists.
func udevRunning() bool {
	_, err := os.Stat("/run/udev/control")
	return err == nil
}

// Reboot stops the container (Stop), calls between (nil: nothing) while
// it is down, and boots the same overlay again with Boot's lock directory
// and timeout (0: DefaultBootTimeout): what was written in the container
// before is there after, as after a reboot. between is where a test
// resets what a real reboot would (a NIC's channel counts).
func (c *Container) Reboot(ctx context.Context, timeout time.Duration, between func() error) (time.Duration, error) {
	if c.cmd == nil {
		return 0, errors.New("nspawn: container was never booted")
	}
	if err := c.Stop(ctx); err != nil {
		return 0, fmt.Errorf("nspawn: reboot: %w", err)
	}
	if between != nil {
		if err := between(); err != nil {
			return 0, fmt.Errorf("nspawn: reboot: %w", err)
		}
	}
	return c.Boot(ctx, c.lockDir, timeout)
}

// exited returns an error when systemd-nspawn has ended.
func (c *Container) exited() error {
	select {
	case <-c.waited:
		return fmt.Errorf("systemd-nspawn exited: %v", c.waitErr)
	default:
		return nil
	}
}

// findLeader waits for systemd-nspawn's child that is PID 1 of a new PID
// namespace (NSpid "HOSTPID 1" in /proc/PID/status).
func (c *Container) findLeader(ctx context.Context) (int, error) {
	nspawn := c.cmd.Process.Pid
	for {
		for _, pid := range children(nspawn) {
			if nsPIDs(pid) == fmt.Sprintf("%d 1", pid) {
				return pid, nil
			}
		}
		if err := c.exited(); err != nil {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no container PID 1 among the children of systemd-nspawn %d: %w", nspawn, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// children returns the PIDs in /proc/pid/task/*/children.
func children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var res []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				res = append(res, n)
			}
		}
	}
	return res
}

// nsPIDs returns the NSpid line of /proc/pid/status without its label.
func nsPIDs(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "NSpid:"); ok {
			return strings.Join(strings.Fields(rest), " ")
		}
	}
	return ""
}

// Leader returns the host PID of the container's PID 1 (systemd).
func (c *Container) Leader() int { return c.leader }

// NspawnPID returns the PID of the systemd-nspawn process.
func (c *Container) NspawnPID() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// Root returns the container's "/" as the host sees it,
// /proc/LEADER/root: its files, and its /proc with the container's PIDs.
func (c *Container) Root() string { return fmt.Sprintf("/proc/%d/root", c.leader) }

// Command returns the command line that runs args inside the container
// with nsenter, in all of PID 1's namespaces, with an environment of only
// PATH and env ("K=V").
func (c *Container) Command(env []string, args ...string) []string {
	cmd := []string{"nsenter", "-t", strconv.Itoa(c.leader), "-a",
		"/usr/bin/env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd = append(cmd, env...)
	return append(cmd, args...)
}

// Run runs args inside the container (see Command) and returns the
// combined output; a failure names the command and includes the output.
func (c *Container) Run(ctx context.Context, env []string, args ...string) ([]byte, error) {
	if c.leader == 0 {
		return nil, errors.New("nspawn: container not booted")
	}
	line := c.Command(env, args...)
	out, err := exec.CommandContext(ctx, line[0], line[1:]...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("nspawn: in %s: %s: %w: %s", c.Machine, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return out, nil
}

// Console returns the last 64 KiB of the container's console (PID 1's
// boot and shutdown messages) and of systemd-nspawn's own output.
func (c *Container) Console() string { return c.console.String() }

// Stop powers the container off: SIGTERM to systemd-nspawn, which asks
// systemd inside to halt; when that takes longer than DefaultStopTimeout,
// SIGKILL to systemd-nspawn and to the container's PID 1 (which ends every
// process in its PID namespace). It then checks /proc: an error lists any
// process left in the container's PID namespace. It releases the boot lock.
// Stopping a container that is not running is not an error.
func (c *Container) Stop(ctx context.Context) error {
	if c.cmd == nil || c.cmd.Process == nil {
		return nil
	}
	defer func() {
		if c.unlock != nil {
			c.unlock()
			c.unlock = nil
		}
	}()
	pid := c.cmd.Process.Pid
	if c.exited() == nil {
		// Only the process we started, by its PID (Process.Signal
		// refuses once it has been reaped).
		if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("nspawn: SIGTERM to systemd-nspawn %d: %w", pid, err)
		}
		select {
		case <-c.waited:
		case <-ctx.Done():
		case <-time.After(DefaultStopTimeout):
		}
	}
	var killed []string
	if c.exited() == nil {
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err == nil {
			killed = append(killed, fmt.Sprintf("systemd-nspawn %d", pid))
		}
	}
	if c.leader != 0 && len(c.Leftovers()) > 0 {
		if err := syscall.Kill(c.leader, syscall.SIGKILL); err == nil {
			killed = append(killed, fmt.Sprintf("container PID 1 (%d)", c.leader))
		}
	}
	// Bounded wait for the kernel to reap them.
	deadline := time.Now().Add(DefaultStopTimeout)
	for {
		left := c.Leftovers()
		if c.exited() != nil && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nspawn: %s: systemd-nspawn %d exited: %t; processes left in its PID namespace: %v",
				c.Machine, pid, c.exited() != nil, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(killed) > 0 {
		return fmt.Errorf("nspawn: %s did not power off within %s: sent SIGKILL to %s", c.Machine, DefaultStopTimeout, strings.Join(killed, " and "))
	}
	return nil
}

// Leftovers returns the host PIDs of the processes in the container's PID
// namespace, read from /proc/*/ns/pid; empty once the container is gone.
func (c *Container) Leftovers() []int {
	if c.pidNS == "" {
		return nil
	}
	des, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var res []int
	for _, d := range des {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil && ns == c.pidNS {
			res = append(res, pid)
		}
	}
	return res
}

// tailBuffer keeps the last tailMax bytes written to it; it is safe for
// concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 64 << 10

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailMax {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-tailMax:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
