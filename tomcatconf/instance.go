package tomcatconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nettune/nettune/internal/hostfs"
)

// Defaults for an Instance.
const (
	// DefaultHome and DefaultBase are where Debian's tomcat10 package puts
	// CATALINA_HOME and CATALINA_BASE.
	DefaultHome = "/usr/share/tomcat10"
	DefaultBase = "/var/lib/tomcat10"
	// DefaultNoFile is the open-files limit the JVM gets (the guide's
	// ulimit -n 65535).
	DefaultNoFile = 65535
	// DefaultReadyTimeout bounds the wait for the JVM to answer; a JVM
	// starts slowly on a small, shared machine.
	DefaultReadyTimeout = 90 * time.Second
	// DefaultStopTimeout bounds each way of stopping before the next.
	DefaultStopTimeout = 30 * time.Second
)

var (
	// ErrNotRunning: no JVM runs for this instance.
	ErrNotRunning = errors.New("tomcatconf: tomcat is not running")
	// ErrRunning: Start found a JVM of this instance already running.
	ErrRunning = errors.New("tomcatconf: tomcat is already running")
	// ErrStart: catalina.sh start failed, the JVM died, or it did not
	// answer in time. The error holds the tail of catalina.out.
	ErrStart = errors.New("tomcatconf: tomcat failed to start")
)

// Command is one command for a Runner.
type Command struct {
	Path string
	Args []string // arguments after Path
	Env  []string // the complete environment
	Dir  string
}

// String returns the command line, for messages.
func (c Command) String() string { return strings.Join(append([]string{c.Path}, c.Args...), " ") }

// Runner runs commands; tests and dry runs replace it. Run returns the
// combined output.
type Runner interface {
	Run(ctx context.Context, cmd Command) ([]byte, error)
}

// ExecRunner runs commands with os/exec.
type ExecRunner struct{}

// Run runs cmd and returns its combined output; a failure names the
// command and includes the output.
func (ExecRunner) Run(ctx context.Context, c Command) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", c, err, bytes.TrimSpace(out))
	}
	return out, nil
}

// Instance is one Tomcat installation: the binaries in Home
// (CATALINA_HOME) and the configuration, webapps and logs in Base
// (CATALINA_BASE).
type Instance struct {
	Home    string
	Base    string
	PIDFile string   // CATALINA_PID; default Base/temp/catalina.pid
	NoFile  uint64   // open-files limit for the JVM; default DefaultNoFile
	Env     []string // extra environment (JAVA_OPTS, CATALINA_OPTS, JAVA_HOME), added to the process's
	Runner  Runner   // default ExecRunner
	// Root is the host root holding /proc, where the JVM is looked up.
	// Default: "" (this host, "/").
	Root string
}

// FindInstance returns the instance named by $CATALINA_HOME and
// $CATALINA_BASE, or else Debian's (DefaultHome, DefaultBase), checking
// that Home/bin/catalina.sh and Base/conf/server.xml exist under root
// ("" or "/" for this host; a mounted image otherwise). It needs no
// privileges.
func FindInstance(root string) (*Instance, error) {
	host, err := hostRoot(root)
	if err != nil {
		return nil, err
	}
	home, base := os.Getenv("CATALINA_HOME"), os.Getenv("CATALINA_BASE")
	if home == "" {
		home = DefaultHome
	}
	if base == "" {
		base = home
		if os.Getenv("CATALINA_HOME") == "" {
			base = DefaultBase
		}
	}
	in := &Instance{Home: host.Path(home), Base: host.Path(base), Root: root}
	for _, p := range []string{in.catalinaSh(), in.ServerXML()} {
		if !hostfs.Exists(p) {
			return nil, fmt.Errorf("%w: no Tomcat instance: %s is missing (set CATALINA_HOME and CATALINA_BASE)", ErrNotFound, p)
		}
	}
	return in, nil
}

// ServerXML returns Base/conf/server.xml.
func (in *Instance) ServerXML() string { return filepath.Join(in.Base, "conf", "server.xml") }

// CatalinaOut returns Base/logs/catalina.out, where catalina.sh start
// sends the JVM's output.
func (in *Instance) CatalinaOut() string { return filepath.Join(in.Base, "logs", "catalina.out") }

func (in *Instance) catalinaSh() string { return filepath.Join(in.Home, "bin", "catalina.sh") }

func (in *Instance) pidFile() string {
	if in.PIDFile != "" {
		return in.PIDFile
	}
	return filepath.Join(in.Base, "temp", "catalina.pid")
}

func (in *Instance) runner() Runner {
	if in.Runner != nil {
		return in.Runner
	}
	return ExecRunner{}
}

func (in *Instance) env() []string {
	env := append(os.Environ(), in.Env...)
	return append(env,
		"CATALINA_HOME="+in.Home,
		"CATALINA_BASE="+in.Base,
		"CATALINA_PID="+in.pidFile(),
		"CATALINA_OUT="+in.CatalinaOut())
}

// StartOptions tune Start. A nil *StartOptions means the defaults.
type StartOptions struct {
	// ReadyURL is polled until it answers with a status below 400.
	// Default: "" (return once catalina.sh has started the JVM).
	ReadyURL string
	// ReadyTimeout bounds that wait. Default: DefaultReadyTimeout.
	ReadyTimeout time.Duration
}

// StartResult says what Start did.
type StartResult struct {
	PID     int
	NoFile  uint64        // the JVM's soft open-files limit, read from /proc/PID/limits; 0 when unreadable
	Ready   time.Duration // from the start command to the first good answer from ReadyURL
	Command string        // the command that ran
}

// Start starts the instance with `catalina.sh start` (run by /bin/sh
// after `ulimit -n NoFile`; when the hard limit is lower and cannot be
// raised, the hard limit is used, and StartResult.NoFile says what the JVM
// got), reads the JVM's PID from CATALINA_PID and, with a ReadyURL, polls
// it until it answers, the JVM exits, or ReadyTimeout passes. A failure is
// compatible with errors.Is(err, ErrStart) and includes the tail of
// catalina.out; a JVM that started but did not become ready is stopped.
// It needs write access to Base/logs, Base/temp and Base/work.
func (in *Instance) Start(ctx context.Context, opts *StartOptions) (StartResult, error) {
	var o StartOptions
	if opts != nil {
		o = *opts
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if pid, err := in.PID(); err == nil {
		return StartResult{}, fmt.Errorf("%w: PID %d (%s)", ErrRunning, pid, in.pidFile())
	}
	// A stale PID file makes catalina.sh refuse to start.
	if err := os.Remove(in.pidFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return StartResult{}, fmt.Errorf("tomcatconf: remove stale %s: %w", in.pidFile(), err)
	}
	nofile := in.NoFile
	if nofile == 0 {
		nofile = DefaultNoFile
	}
	cmd := Command{
		Path: "/bin/sh",
		Args: []string{"-c", `ulimit -n "$1" 2>/dev/null || ulimit -n "$(ulimit -H -n)"; exec "$2" start`,
			"sh", strconv.FormatUint(nofile, 10), in.catalinaSh()},
		Env: in.env(),
		Dir: in.Base,
	}
	res := StartResult{Command: fmt.Sprintf("ulimit -n %d && %s start", nofile, in.catalinaSh())}
	t0 := time.Now()
	if _, err := in.runner().Run(ctx, cmd); err != nil {
		return res, in.startError(fmt.Errorf("catalina.sh start: %w", err))
	}
	pid, err := in.startedPID(ctx)
	if err != nil {
		return res, in.startError(err)
	}
	res.PID = pid
	if n, err := in.openFilesLimit(pid); err == nil {
		res.NoFile = n
	}
	if o.ReadyURL == "" {
		return res, nil
	}
	if err := in.waitReady(ctx, pid, o.ReadyURL, o.ReadyTimeout); err != nil {
		if _, serr := in.Stop(context.WithoutCancel(ctx), nil); serr != nil && !errors.Is(serr, ErrNotRunning) {
			err = fmt.Errorf("%w (and stopping it: %v)", err, serr)
		}
		return res, in.startError(err)
	}
	res.Ready = time.Since(t0)
	return res, nil
}

func (in *Instance) startError(err error) error {
	data, rerr := os.ReadFile(in.CatalinaOut())
	if rerr != nil {
		return fmt.Errorf("%w: %w (no catalina.out: %v)", ErrStart, err, rerr)
	}
	first := severe(string(data), 5)
	if first != "" {
		first = "\n--- SEVERE in " + in.CatalinaOut() + " ---\n" + first
	}
	return fmt.Errorf("%w: %w%s\n--- last lines of %s ---\n%s", ErrStart, err, first, in.CatalinaOut(), tail(string(data), 20))
}

// severe returns the first max SEVERE log records of catalina.out, each
// with the "Caused by:" lines of its stack trace, which name the cause (a
// port in use, a bad attribute) that the last lines often do not.
func severe(out string, max int) string {
	lines := strings.Split(out, "\n")
	var res []string
	records := 0
	for i, l := range lines {
		if !strings.Contains(l, " SEVERE ") && !strings.HasPrefix(l, "SEVERE:") {
			continue
		}
		if records++; records > max {
			break
		}
		res = append(res, l)
		causes := 0
		for _, next := range lines[i+1:] {
			t := strings.TrimSpace(next)
			if t != "" && !strings.HasPrefix(t, "at ") && !strings.HasPrefix(t, "...") && !strings.HasPrefix(t, "Caused by:") && !strings.HasPrefix(next, "\t") {
				break // the next log record
			}
			if strings.HasPrefix(t, "Caused by:") && causes < 3 {
				res = append(res, next)
				causes++
			}
		}
	}
	return strings.Join(res, "\n")
}

// waitReady polls url until it answers below 400, the JVM exits, or the
// timeout passes.
func (in *Instance) waitReady(ctx context.Context, pid int, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		if !in.alive(pid) {
			return fmt.Errorf("JVM %d exited before %s answered", pid, url)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("ready URL %q: %w", url, err)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 400 {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer within %s (last: %s)", url, timeout, last)
		case <-tick.C:
		}
	}
}

// startedPID waits, at most 15 s, for the process catalina.sh start wrote
// to CATALINA_PID to become this instance's JVM: catalina.sh records the PID
// of a background shell that only then execs java, so on a loaded machine
// the first look can still see the shell. A process that is gone ends the
// wait at once.
func (in *Instance) startedPID(ctx context.Context) (int, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		pid, err := in.PID()
		if err == nil {
			return pid, nil
		}
		if p, perr := in.pidFromFile(); perr != nil || !in.exists(p) || time.Now().After(deadline) {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pidFromFile reads CATALINA_PID without checking the process.
func (in *Instance) pidFromFile() (int, error) {
	data, err := os.ReadFile(in.pidFile())
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// exists reports whether a process pid exists and is not a zombie.
func (in *Instance) exists(pid int) bool {
	host, err := hostRoot(in.Root)
	if err != nil {
		return false
	}
	stat, err := os.ReadFile(host.Proc(strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// PID returns the PID in CATALINA_PID if that process is this instance's
// JVM (its command line holds -Dcatalina.base=Base), or an error
// compatible with errors.Is(err, ErrNotRunning). It reads /proc/PID.
func (in *Instance) PID() (int, error) {
	data, err := os.ReadFile(in.pidFile())
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNotRunning, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%w: %s holds %q, want a PID", ErrNotRunning, in.pidFile(), bytes.TrimSpace(data))
	}
	if !in.alive(pid) {
		return 0, fmt.Errorf("%w: PID %d from %s is not this instance's JVM", ErrNotRunning, pid, in.pidFile())
	}
	return pid, nil
}

// alive reports whether pid runs (not a zombie) and is this instance's JVM,
// so a recycled PID is never signalled.
func (in *Instance) alive(pid int) bool {
	if !in.exists(pid) {
		return false
	}
	host, err := hostRoot(in.Root)
	if err != nil {
		return false
	}
	cmdline, err := os.ReadFile(host.Proc(strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if string(arg) == "-Dcatalina.base="+in.Base {
			return true
		}
	}
	return false
}

func (in *Instance) openFilesLimit(pid int) (uint64, error) {
	host, err := hostRoot(in.Root)
	if err != nil {
		return 0, err
	}
	data, err := os.ReadFile(host.Proc(strconv.Itoa(pid), "limits"))
	if err != nil {
		return 0, err
	}
	return parseOpenFiles(data)
}

// parseOpenFiles returns the soft "Max open files" limit from
// /proc/PID/limits.
func parseOpenFiles(data []byte) (uint64, error) {
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "Max open files"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			if f[0] == "unlimited" {
				return ^uint64(0), nil
			}
			return strconv.ParseUint(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no \"Max open files\" line")
}

// StopMethod says how Stop stopped the JVM.
type StopMethod string

// Ways Stop can end the JVM.
const (
	StopShutdownPort StopMethod = "catalina.sh stop" // through the Server's shutdown port
	StopSIGTERM      StopMethod = "SIGTERM"          // the JVM's shutdown hook stops Tomcat cleanly
	StopSIGKILL      StopMethod = "SIGKILL"
)

// StopOptions tune Stop. A nil *StopOptions means the defaults.
type StopOptions struct {
	// Timeout bounds each way of stopping. Default: DefaultStopTimeout.
	Timeout time.Duration
}

// StopResult says how the JVM was stopped.
type StopResult struct {
	PID    int
	Method StopMethod
	Took   time.Duration
}

// Stop stops the JVM: with `catalina.sh stop` when server.xml enables the
// shutdown port (Debian ships <Server port="-1">, which disables it), else
// or when that does not end it in time, with SIGTERM to the PID, and with
// SIGKILL as a last resort; each way waits up to Timeout. It returns the
// way that worked. No running JVM is an error compatible with
// errors.Is(err, ErrNotRunning). Signalling needs the JVM's user or root.
//
// When ctx ends while Stop waits, it stops waiting and does not escalate:
// the error wraps ctx's error and says what was sent (pass
// context.WithoutCancel(ctx) to stop a JVM during shutdown).
func (in *Instance) Stop(ctx context.Context, opts *StopOptions) (StopResult, error) {
	var o StopOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultStopTimeout
	}
	pid, err := in.PID()
	if err != nil {
		return StopResult{}, err
	}
	res := StopResult{PID: pid}
	t0 := time.Now()
	done := func(m StopMethod) (StopResult, error) {
		res.Method, res.Took = m, time.Since(t0)
		if err := os.Remove(in.pidFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, fmt.Errorf("tomcatconf: stopped PID %d but cannot remove %s: %w", pid, in.pidFile(), err)
		}
		return res, nil
	}
	if in.shutdownPortEnabled() {
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		_, err := in.runner().Run(cctx, Command{Path: in.catalinaSh(), Args: []string{"stop"}, Env: in.env(), Dir: in.Base})
		cancel()
		if err == nil && in.waitExit(ctx, pid, o.Timeout) {
			return done(StopShutdownPort)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return res, fmt.Errorf("tomcatconf: SIGTERM to JVM %d: %w", pid, err)
	}
	if in.waitExit(ctx, pid, o.Timeout) {
		return done(StopSIGTERM)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("tomcatconf: stopping JVM %d: sent SIGTERM, stopped waiting: %w", pid, context.Cause(ctx))
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return res, fmt.Errorf("tomcatconf: SIGKILL to JVM %d: %w", pid, err)
	}
	if in.waitExit(ctx, pid, o.Timeout) {
		return done(StopSIGKILL)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("tomcatconf: stopping JVM %d: sent SIGKILL, stopped waiting: %w", pid, context.Cause(ctx))
	}
	return res, fmt.Errorf("tomcatconf: JVM %d still runs %s after SIGKILL", pid, o.Timeout)
}

// shutdownPortEnabled reports whether conf/server.xml has a usable
// <Server port>: not -1 and not a placeholder.
func (in *Instance) shutdownPortEnabled() bool {
	c, err := Load(in.ServerXML())
	if err != nil {
		return false
	}
	port := c.doc.Root().SelectAttrValue("port", "8005")
	n, err := strconv.Atoi(port)
	return err == nil && n > 0
}

// waitExit polls /proc until pid is gone, ctx ends or timeout passes.
func (in *Instance) waitExit(ctx context.Context, pid int, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if !in.alive(pid) {
			return true
		}
		select {
		case <-ctx.Done():
			return !in.alive(pid)
		case <-tick.C:
		}
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// hostRoot returns the hostfs root for dir ("" is this host).
func hostRoot(dir string) (hostfs.Root, error) {
	if dir == "" || dir == hostfs.DefaultRoot {
		return hostfs.Default(), nil
	}
	r, err := hostfs.New(dir)
	if err != nil {
		return hostfs.Root{}, fmt.Errorf("tomcatconf: %w", err)
	}
	return r, nil
}
