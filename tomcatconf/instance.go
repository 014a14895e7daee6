package tomcatconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nettune/nettune/internal/command"
	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/httpready"
	"github.com/nettune/nettune/internal/procstat"
	"github.com/nettune/nettune/internal/rlimit"
)

// DefaultHome and DefaultBase are where Debian's tomcat10 package puts
// CATALINA_HOME and CATALINA_BASE.
const (
	DefaultHome = "/usr/share/tomcat10"
	DefaultBase = "/var/lib/tomcat10"
)

const (
	// defaultReadyTimeout bounds the wait for the JVM to answer; a JVM
	// starts slowly on a small, shared machine.
	defaultReadyTimeout = 90 * time.Second
	// defaultStopTimeout bounds each way of stopping before the next.
	defaultStopTimeout = 30 * time.Second
	// execTimeout bounds the wait for a started command to become the
	// JVM (its command line to hold -Dcatalina.base).
	execTimeout = 30 * time.Second
)

var (
	// ErrNotRunning: no JVM runs for this instance.
	ErrNotRunning = errors.New("tomcatconf: tomcat is not running")
	// ErrRunning: Start found a JVM of this instance already running.
	ErrRunning = errors.New("tomcatconf: tomcat is already running")
	// ErrStart: the JVM could not be started, died, or did not answer in
	// time. The error holds what the JVM wrote to catalina.out meanwhile.
	ErrStart = errors.New("tomcatconf: tomcat failed to start")
)

// Command is one command for a Runner.
type Command struct {
	Path string
	Args []string // arguments after Path
	Env  []string // the complete environment; nil means this process's
	Dir  string
	// As runs the command as this user (its UID, GID and supplementary
	// groups, which needs root). Default nil: as this process.
	As *Account
}

// String returns the command line, for messages.
func (c Command) String() string { return command.Spec{Path: c.Path, Args: c.Args}.String() }

// Runner runs commands (catalina.sh, systemctl, journalctl, jcmd) and
// returns their combined output. Tests and dry runs replace it, and so
// does a caller that reaches another host's systemd (nsenter, ssh). A nil
// Runner runs the commands on this host.
type Runner interface {
	Run(ctx context.Context, cmd Command) ([]byte, error)
}

// execRunner is the nil Runner: it runs commands with internal/command.
type execRunner struct{}

// Run runs c (as c.As, when set) and returns its combined output; a
// failure names the command and includes the end of the output.
func (execRunner) Run(ctx context.Context, c Command) ([]byte, error) {
	s := command.Spec{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir}
	if c.As != nil {
		cred, err := c.As.credential()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
		s.Cred = cred
	}
	return command.Run(ctx, s)
}

// runnerOr returns r, or the exec runner when r is nil.
func runnerOr(r Runner) Runner {
	if r != nil {
		return r
	}
	return execRunner{}
}

// Instance is one Tomcat installation: the binaries in Home
// (CATALINA_HOME) and the configuration, webapps and logs in Base
// (CATALINA_BASE), and how it is run: as which user, with which
// environment and command.
//
// Start runs the JVM as User (Account says who that is) with a PID this
// program holds: by default as a child in its own session, through
// RunCommand (a foreground command such as `catalina.sh run`, which execs
// the JVM, so the child's PID is the JVM's), as systemd runs Debian's
// tomcat10 unit. Stop, PID and JVMs find JVMs in /proc by
// -Dcatalina.base=Base, so they also work for a JVM started elsewhere and
// need no PID file. When a systemd unit runs the instance (Control,
// DetectControl), Start, Stop, StopAll and Restart go through that unit
// with systemctl instead, so systemd keeps tracking the JVM.
//
// An Instance marshals to JSON with every field but Runner, so a journal
// can record how to run it again (RestartChange).
type Instance struct {
	Home string `json:"home"`
	Base string `json:"base"`
	// User and Group are the account the JVM runs as, like a unit's User=
	// and Group=. Default "": the owner of Base/conf (see Account).
	User  string `json:"user,omitempty"`
	Group string `json:"group,omitempty"`
	// RunCommand is the foreground command Start runs in Base as User; it
	// must end by exec'ing the JVM. Debian's unit runs
	// ["/bin/sh", "/usr/libexec/tomcat10/tomcat-start.sh"]. Default nil:
	// Home/bin/catalina.sh run.
	RunCommand []string `json:"run_command,omitempty"`
	// Service is the systemd unit whose settings UseService applied, ""
	// when none: the instance is then run as that unit runs it.
	Service string `json:"service,omitempty"`
	// Control says whether Start, Stop, StopAll and Restart go through
	// Service with systemctl (ControlSystemd) or run the JVM as a process
	// this program holds (ControlProcess). Default ControlAuto: decided
	// by DetectControl at each call.
	Control Control `json:"control,omitempty"`
	// Daemon starts the JVM with `catalina.sh start` and CATALINA_PID
	// through Runner, as upstream's startup.sh does, instead of as a held
	// child. Default false.
	Daemon  bool   `json:"daemon,omitempty"`
	PIDFile string `json:"pid_file,omitempty"` // CATALINA_PID with Daemon; default Base/temp/catalina.pid
	// NoFile is the open-files limit for the JVM. Default 0: 65535, the
	// Arm Neoverse Tomcat tuning guide's ulimit -n.
	NoFile uint64 `json:"nofile,omitempty"`
	// CPUs, when set, are the CPUs a foreground start (not Daemon) runs
	// its command on from the first instruction: the JVM sizes itself
	// (its collector, its GC and compiler thread counts) by the CPUs it
	// sees at start, so a JVM pinned only once started keeps the choices
	// of the CPUs it was launched on. Default: the CPUs this process may
	// use.
	CPUs []int    `json:"cpus,omitempty"`
	Env  []string `json:"env,omitempty"` // extra environment (JAVA_OPTS, CATALINA_OPTS, JAVA_HOME), added to the process's
	// Runner runs catalina.sh start (Daemon) and catalina.sh stop.
	// Default nil: run them on this host.
	Runner Runner `json:"-"`
	// Root is the host root holding /proc, where the JVM is looked up.
	// Default: "" (this host, "/").
	Root string `json:"root,omitempty"`
}

// child is a process Start launched and reaps: a goroutine waits for it,
// so that it does not linger as a zombie once it exits.
type child struct {
	pid    int
	done   chan struct{}
	err    error        // Wait's, once done is closed
	stderr bytes.Buffer // the wrapper shell's own errors, before its output goes to catalina.out
}

// FindInstance returns the instance named by $CATALINA_HOME and
// $CATALINA_BASE, or else Debian's (DefaultHome, DefaultBase), checking
// that Home/bin/catalina.sh and Base/conf/server.xml exist under root
// ("" or "/" for this host; a mounted image otherwise). When the systemd
// unit DefaultService runs that CATALINA_BASE, the instance is set up to
// run as the unit does (UseService). It needs read access to the unit
// file and no other privileges.
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
	if _, err := in.UseService(DefaultService); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return in, nil
}

// UseService sets in up to run as the systemd service unit name (e.g.
// DefaultService) runs it, when the unit's CATALINA_BASE (or, unset, its
// CATALINA_HOME) is in.Base: as its User= and Group=, with its
// environment (Environment=, then the files of EnvironmentFile=) before
// in.Env, and its ExecStart= as RunCommand. It reports whether it did.
// The unit is read as systemd finds it under in.Root: the first of
// /etc/systemd/system, /run/systemd/system, /usr/local/lib/systemd/system,
// /lib/systemd/system and /usr/lib/systemd/system that holds it, with the
// drop-ins NAME.d/*.conf of all of them. A missing or masked unit is an
// error compatible with errors.Is(err, ErrNotFound). It needs read access
// to the files only.
func (in *Instance) UseService(name string) (bool, error) {
	sf, err := readServiceFile(in.Root, name)
	if err != nil {
		return false, err
	}
	return in.useServiceFile(sf)
}

// useServiceFile is UseService with the unit already read.
func (in *Instance) useServiceFile(sf *serviceFile) (bool, error) {
	host, err := hostRoot(in.Root)
	if err != nil {
		return false, err
	}
	env, err := sf.Env(in.Root)
	if err != nil {
		return false, err
	}
	base := ""
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == "CATALINA_BASE" || (k == "CATALINA_HOME" && base == "") {
			base = v
		}
	}
	if base == "" || filepath.Clean(host.Path(base)) != filepath.Clean(in.Base) {
		return false, nil
	}
	in.User, in.Group = sf.User, sf.Group
	in.RunCommand = append([]string(nil), sf.ExecStart...)
	in.Env = append(env, in.Env...)
	in.Service = sf.Name
	return true, nil
}

// ServerXML returns Base/conf/server.xml.
func (in *Instance) ServerXML() string { return filepath.Join(in.Base, "conf", "server.xml") }

// CatalinaOut returns Base/logs/catalina.out, where the JVM's output goes.
func (in *Instance) CatalinaOut() string { return filepath.Join(in.Base, "logs", "catalina.out") }

func (in *Instance) catalinaSh() string { return filepath.Join(in.Home, "bin", "catalina.sh") }

func (in *Instance) pidFile() string {
	if in.PIDFile != "" {
		return in.PIDFile
	}
	return filepath.Join(in.Base, "temp", "catalina.pid")
}

func (in *Instance) runner() Runner { return runnerOr(in.Runner) }

// env is the environment of catalina.sh start and stop. CATALINA_PID is
// set with Daemon only: catalina.sh stop aborts when it names no file.
func (in *Instance) env() []string {
	env := append(os.Environ(), in.Env...)
	env = append(env,
		"CATALINA_HOME="+in.Home,
		"CATALINA_BASE="+in.Base,
		"CATALINA_OUT="+in.CatalinaOut())
	if in.Daemon {
		env = append(env, "CATALINA_PID="+in.pidFile())
	}
	return env
}

// runEnv is the environment of the foreground command run as a: this
// process's, without its CATALINA_ locations and login variables, then
// a's login variables (as systemd sets them for User=), in.Env and the
// instance's locations.
func (in *Instance) runEnv(a Account) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CATALINA_HOME", "CATALINA_BASE", "CATALINA_PID", "CATALINA_OUT", "CATALINA_TMPDIR",
			"HOME", "USER", "LOGNAME", "SHELL":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+a.Home, "USER="+a.Name, "LOGNAME="+a.Name, "SHELL="+a.Shell)
	env = append(env, in.Env...)
	return append(env, "CATALINA_HOME="+in.Home, "CATALINA_BASE="+in.Base)
}

// StartOptions tune Start. A nil *StartOptions means the defaults.
type StartOptions struct {
	// ReadyURL is polled until it answers with a status below 400.
	// Default: "" (return once the JVM runs).
	ReadyURL string
	// ReadyTimeout bounds that wait. Default: 90 s.
	ReadyTimeout time.Duration
	// DieWithParent has the kernel kill the JVM (SIGKILL, through
	// PR_SET_PDEATHSIG) when this program dies, even by kill -9: for a
	// temporary instance that must not outlive the program (a study's
	// copy). It applies to a held child (not Daemon, not a unit). Default
	// false: the JVM outlives the program, as a server should.
	DieWithParent bool
}

// StartResult says what Start did.
type StartResult struct {
	PID     int
	User    string        // the account the JVM runs as
	NoFile  uint64        // the JVM's soft open-files limit, read from /proc/PID/limits; 0 when unreadable
	Ready   time.Duration // from the start command to the first good answer from ReadyURL
	Command string        // the command that ran
	Log     string        // where the JVM's output goes
	// Control is how the JVM was started: ControlProcess or
	// ControlSystemd.
	Control Control
	// Unit is the systemd unit that runs the JVM (ControlSystemd), "" otherwise.
	Unit string
	// CPUs the JVM may run on, from /proc/PID/status (ControlSystemd).
	CPUs []int
	// DropIn is the runtime drop-in that set LimitNOFILE to NoFile
	// (ControlSystemd with a NoFile), with what it held before, for
	// Unit.RestoreDropIn; Capped says systemd's own hard limit lowered
	// the value. Nil when none was written.
	DropIn *DropInResult
}

// Start starts the instance's JVM as Account (setuid/setgid, which needs
// root unless this process is that user) and returns its PID, refusing
// (ErrRunning) when a JVM of Base already runs or is being launched
// (Launches), and (ErrStart) when another process listens on a
// Connector's port of server.xml.
//
// By default it runs RunCommand (or `catalina.sh run`) in Base as a child
// in a new session, so a JVM that is kept outlives this program, with its
// output appended to Base/logs/catalina.out, which the command opens as the
// JVM's user (the file is never created by root). With Daemon, it runs
// `catalina.sh start` with CATALINA_PID instead, and a JVM that started
// but whose PID was not written is found in /proc and stopped.
//
// The open-files limit (NoFile) is raised while still privileged and
// inherited: soft and hard to NoFile when allowed (a hard limit above the
// current one needs CAP_SYS_RESOURCE), else the soft limit to NoFile or
// the hard limit, whichever is lower; StartResult.NoFile says what the JVM
// got, read from /proc/PID/limits. With a ReadyURL, Start polls it
// until it answers, the JVM exits, or ReadyTimeout passes.
//
// A failure is compatible with errors.Is(err, ErrStart) and includes what
// the JVM wrote to catalina.out during this start; every process Start
// launched is stopped before it returns the error.
//
// Under ControlSystemd (DetectControl) Start instead runs `systemctl start
// Service`, refusing (ErrRunning) an active unit or a JVM of Base beside
// it: a NoFile other than 0 is first written as LimitNOFILE= into the
// unit's runtime drop-in (Unit.SetDropIn, keeping its CPUAffinity=;
// capped at systemd's own hard limit, see StartResult.DropIn), and 0
// leaves the unit's limit as it is. PID is the unit's MainPID once the
// start script has exec'd the JVM (its command line holds
// -Dcatalina.base=Base); NoFile and CPUs are what /proc says it got. A
// failed start gives ErrStart with the unit's journal, and leaves the
// drop-in as it was and the unit stopped. It needs root.
func (in *Instance) Start(ctx context.Context, opts *StartOptions) (StartResult, error) {
	var o StartOptions
	if opts != nil {
		o = *opts
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = defaultReadyTimeout
	}
	c, err := in.control(ctx)
	if err != nil {
		return StartResult{}, err
	}
	if c == ControlSystemd {
		return in.startUnit(ctx, &o, false)
	}
	jvms, err := in.JVMs()
	if err != nil {
		return StartResult{}, err
	}
	if len(jvms) > 0 {
		return StartResult{}, fmt.Errorf("%w: PID %s (user %s) has -Dcatalina.base=%s", ErrRunning, pidList(jvms), jvms[0].User, in.Base)
	}
	if pending, err := in.pendingLaunches(); err == nil && len(pending) > 0 {
		return StartResult{}, fmt.Errorf("%w: PID %d, launched by Start for %s, has not exec'd its JVM yet (StopAll waits for it)", ErrRunning, pending[0], in.Base)
	}
	acct, err := in.Account()
	if err != nil {
		return StartResult{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	if _, err := acct.credential(); err != nil {
		return StartResult{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	if err := in.checkPorts(); err != nil {
		return StartResult{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	var logOff int64
	if fi, err := os.Stat(in.CatalinaOut()); err == nil {
		logOff = fi.Size()
	}
	nofile := in.NoFile
	if nofile == 0 {
		nofile = rlimit.DefaultNoFile
	}
	res := StartResult{User: acct.Name, Log: in.CatalinaOut(), Control: ControlProcess}
	t0 := time.Now()
	var pid int
	if in.Daemon {
		pid, err = in.startDaemon(ctx, acct, nofile, &res)
	} else {
		pid, err = in.startChild(ctx, acct, nofile, o.DieWithParent, &res)
	}
	if err != nil {
		return res, in.startError(err, logOff)
	}
	res.PID = pid
	if n, err := in.openFilesLimit(pid); err == nil {
		res.NoFile = n
	}
	if o.ReadyURL == "" {
		return res, nil
	}
	alive := func() error {
		if !in.alive(pid) {
			return fmt.Errorf("JVM %d exited before %s answered", pid, o.ReadyURL)
		}
		return nil
	}
	if err := httpready.Wait(ctx, o.ReadyURL, o.ReadyTimeout, alive); err != nil {
		if serr := in.stopLaunched(pid); serr != nil {
			err = fmt.Errorf("%w (and stopping it: %v)", err, serr)
		}
		return res, in.startError(err, logOff)
	}
	res.Ready = time.Since(t0)
	return res, nil
}

// startChild runs the foreground command as a and waits until the child
// has exec'd the JVM.
func (in *Instance) startChild(ctx context.Context, a Account, nofile uint64, dieWithParent bool, res *StartResult) (int, error) {
	cred, err := a.credential()
	if err != nil {
		return 0, err
	}
	argv := in.RunCommand
	if len(argv) == 0 {
		argv = []string{in.catalinaSh(), "run"}
	}
	// The shell runs as the JVM's user: it opens the log, so the log is
	// that user's, then execs the command, which execs the JVM.
	cmd := exec.Command("/bin/sh", append([]string{"-c", `exec >>"$1" 2>&1 || exit 126; shift; exec "$@"`, "sh", in.CatalinaOut()}, argv...)...)
	cmd.Dir = in.Base
	cmd.Env = append(in.runEnv(a), launchEnv+"="+filepath.Clean(in.Base))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred}
	ch := &child{done: make(chan struct{})}
	cmd.Stderr = &ch.stderr
	res.Command = fmt.Sprintf("%s (as %s, ulimit -n %d, output >> %s)", strings.Join(argv, " "), a.Name, nofile, in.CatalinaOut())
	started := make(chan error, 1)
	go func() {
		if dieWithParent {
			// PR_SET_PDEATHSIG fires when the thread that forked the child
			// ends, not the process: fork from a thread kept until the
			// child has exited (the goroutine ends locked, and the thread
			// with it).
			setPdeathsig(cmd.SysProcAttr)
			runtime.LockOSThread()
		}
		if len(in.CPUs) > 0 {
			// The child inherits the forking thread's affinity: fork from
			// a thread of its own set to the CPUs; it ends with the
			// goroutine, locked, and no other goroutine runs on it.
			runtime.LockOSThread()
			if err := setThreadCPUs(in.CPUs); err != nil {
				started <- fmt.Errorf("run on CPUs %v: %w", in.CPUs, err)
				return
			}
		}
		if err := rlimit.WithNoFile(nofile, cmd.Start); err != nil {
			started <- err
			return
		}
		ch.pid = cmd.Process.Pid
		started <- nil
		ch.err = cmd.Wait()
		close(ch.done)
	}()
	if err := <-started; err != nil {
		return 0, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}

	deadline := time.NewTimer(execTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if in.alive(ch.pid) {
			return ch.pid, nil
		}
		select {
		case <-ch.done:
			return 0, fmt.Errorf("%s exited before it became the JVM: %v %s", strings.Join(argv, " "), ch.err, bytes.TrimSpace(ch.stderr.Bytes()))
		case <-ctx.Done():
			return 0, errors.Join(fmt.Errorf("waiting for %s to exec the JVM: %w", strings.Join(argv, " "), context.Cause(ctx)), in.stopLaunched(ch.pid))
		case <-deadline.C:
			return 0, errors.Join(fmt.Errorf("%s did not exec a JVM with -Dcatalina.base=%s within %s", strings.Join(argv, " "), in.Base, execTimeout), in.stopLaunched(ch.pid))
		case <-tick.C:
		}
	}
}

// startDaemon runs catalina.sh start as a and returns the PID it wrote to
// CATALINA_PID; JVMs it left without a PID are stopped.
func (in *Instance) startDaemon(ctx context.Context, a Account, nofile uint64, res *StartResult) (int, error) {
	// A stale PID file makes catalina.sh refuse to start.
	if err := os.Remove(in.pidFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("remove stale %s: %w", in.pidFile(), err)
	}
	// The limit is raised in this process around the start, so
	// catalina.sh and the JVM inherit it.
	cmd := Command{
		Path: in.catalinaSh(),
		Args: []string{"start"},
		Env:  append(in.env(), launchEnv+"="+filepath.Clean(in.Base)),
		Dir:  in.Base,
		As:   &a,
	}
	res.Command = fmt.Sprintf("%s start (as %s, ulimit -n %d)", in.catalinaSh(), a.Name, nofile)
	var out []byte
	err := rlimit.WithNoFile(nofile, func() error {
		var err error
		out, err = in.runner().Run(ctx, cmd)
		return err
	})
	if err != nil {
		return 0, errors.Join(fmt.Errorf("catalina.sh start: %w", err), in.stopAll())
	}
	pid, err := in.startedPID(ctx, out)
	if err != nil {
		return 0, errors.Join(err, in.stopAll())
	}
	return pid, nil
}

// stopAll stops every JVM of Base: after a failed catalina.sh start,
// which Start only runs when none ran before, they are what it launched.
func (in *Instance) stopAll() error {
	jvms, err := in.JVMs()
	if err != nil {
		return err
	}
	var errs []error
	for _, j := range jvms {
		errs = append(errs, in.stopLaunched(j.PID))
	}
	return errors.Join(errs...)
}

// stopLaunched ends a process Start launched: SIGTERM, a bounded wait,
// then SIGKILL, to its whole process group when it leads one (a child in
// its own session), and waits until it is gone.
func (in *Instance) stopLaunched(pid int) error {
	target := pid
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		target = -pid
	}
	ctx := context.Background()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if err := syscall.Kill(target, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("tomcatconf: %v to %d: %w", sig, target, err)
		}
		if in.waitGone(ctx, pid, defaultStopTimeout) {
			return nil
		}
	}
	return fmt.Errorf("tomcatconf: process %d still runs %s after SIGKILL", pid, defaultStopTimeout)
}

// checkPorts returns an error naming the first Connector port of
// server.xml that another process holds, found by binding it for a moment.
// An unreadable server.xml is left for Tomcat to report.
func (in *Instance) checkPorts() error {
	if host, err := hostRoot(in.Root); err != nil || !host.IsHost() {
		return nil
	}
	c, err := Load(in.ServerXML())
	if err != nil {
		return nil
	}
	for _, cn := range c.Connectors() {
		if p, err := strconv.Atoi(cn.Port); err != nil || p <= 0 {
			continue
		}
		l, err := net.Listen("tcp", ":"+cn.Port)
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("port %s of Connector %s (%s:%d) is taken by another process: %w", cn.Port, cn.Name(), in.ServerXML(), cn.Line, err)
			}
			continue
		}
		if err := l.Close(); err != nil {
			return fmt.Errorf("port %s: %w", cn.Port, err)
		}
	}
	return nil
}

func (in *Instance) startError(err error, logOff int64) error {
	data, rerr := os.ReadFile(in.CatalinaOut())
	if rerr != nil {
		return fmt.Errorf("%w: %w (no catalina.out: %v)", ErrStart, err, rerr)
	}
	if logOff > 0 && logOff <= int64(len(data)) {
		data = data[logOff:]
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

// startedPID waits, at most 15 s, for the process catalina.sh start wrote
// to CATALINA_PID to become this instance's JVM: catalina.sh records the PID
// of a background shell that only then execs java, so on a loaded machine
// the first look can still see the shell. A process that is gone ends the
// wait at once. When there is no PID file (catalina.sh could not write it,
// and still exits 0), a JVM of Base that appears in /proc ends the wait
// with an error naming it, for the caller to stop.
func (in *Instance) startedPID(ctx context.Context, out []byte) (int, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		p, perr := in.pidFromFile()
		switch {
		case perr == nil && in.alive(p):
			return p, nil
		case perr == nil && !in.exists(p):
			return 0, fmt.Errorf("PID %d from %s is not this instance's JVM (it is gone)", p, in.pidFile())
		case perr != nil:
			if jvms, err := in.JVMs(); err == nil && len(jvms) > 0 {
				return 0, fmt.Errorf("catalina.sh start wrote no PID to %s (%v; output: %s), though JVM %s started",
					in.pidFile(), perr, bytes.TrimSpace(out), pidList(jvms))
			}
		}
		if time.Now().After(deadline) {
			if perr != nil {
				return 0, fmt.Errorf("no JVM after catalina.sh start: %s: %w (its output: %s)", in.pidFile(), perr, bytes.TrimSpace(out))
			}
			return 0, fmt.Errorf("PID %d from %s is not this instance's JVM", p, in.pidFile())
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("waiting for the JVM of catalina.sh start: %w", context.Cause(ctx))
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
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s holds %q: want a PID", in.pidFile(), bytes.TrimSpace(data))
	}
	return pid, nil
}

// openFilesLimit returns the soft open-files limit of pid from
// /proc/PID/limits.
func (in *Instance) openFilesLimit(pid int) (uint64, error) {
	host, err := hostRoot(in.Root)
	if err != nil {
		return 0, err
	}
	data, err := os.ReadFile(host.Proc(strconv.Itoa(pid), "limits"))
	if err != nil {
		return 0, err
	}
	soft, _, err := parseLimitsNoFile(data)
	return soft, err
}

// StopAll stops every JVM of Base (JVMs) with Stop, after waiting, up to
// the Timeout, for the processes Start launched for Base that have not
// exec'd their JVM yet (Launches; left by a program killed during a
// start): those still not a JVM by then are killed with SIGKILL, with
// their process group when they lead one. It returns how each JVM was
// stopped; no JVM is not an error. It needs root, or the JVMs' user.
// Under ControlSystemd it first stops the unit with `systemctl stop`,
// then any JVM of Base left beside it as above.
func (in *Instance) StopAll(ctx context.Context, opts *StopOptions) ([]StopResult, error) {
	var o StopOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout == 0 {
		o.Timeout = defaultStopTimeout
	}
	c, err := in.control(ctx)
	if err != nil {
		return nil, err
	}
	var res []StopResult
	if c == ControlSystemd {
		if res, err = in.unitStopAll(ctx, o.Timeout); err != nil {
			return nil, err
		}
	}
	var pending []int
	in.poll(ctx, o.Timeout, func() bool {
		var err error
		pending, err = in.pendingLaunches()
		return err != nil || len(pending) == 0
	})
	for _, pid := range pending {
		target := pid
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
			target = -pid
		}
		if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return nil, fmt.Errorf("tomcatconf: SIGKILL to launch %d of %s, not a JVM after %s: %w", pid, in.Base, o.Timeout, err)
		}
	}
	jvms, err := in.JVMs()
	if err != nil {
		return nil, err
	}
	for _, j := range jvms {
		o.PID = j.PID
		r, err := in.stopProcess(ctx, o)
		if err != nil && !errors.Is(err, ErrNotRunning) {
			return res, err
		}
		if err == nil {
			res = append(res, r)
		}
	}
	return res, nil
}

// launchEnv is the environment variable Start sets, to Base, for the
// command it launches. Inherited through the start scripts into the JVM,
// it marks a launch in /proc/PID/environ before the JVM's command line
// shows -Dcatalina.base.
const launchEnv = "NETTUNE_CATALINA_BASE"

// Launches lists, by PID, the running processes Start (of this or
// another program) launched for this instance: those whose environment
// holds NETTUNE_CATALINA_BASE=Base, which Start sets, and whose parent's
// does not (a JVM's or a script's child is not a launch). Each is the JVM, or a start script that has not
// exec'd it yet. Reading another user's /proc/PID/environ needs root; a
// process whose environment cannot be read is left out.
func (in *Instance) Launches() ([]int, error) {
	host, err := hostRoot(in.Root)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(host.Proc())
	if err != nil {
		return nil, fmt.Errorf("tomcatconf: list processes: %w", err)
	}
	mark := []byte(launchEnv + "=" + filepath.Clean(in.Base))
	parent := map[int]int{}
	var marked []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		env, err := os.ReadFile(host.Proc(e.Name(), "environ"))
		if err != nil || !in.exists(pid) || !in.sameBase(host, pid) {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, mark) {
				marked = append(marked, pid)
				if status, err := os.ReadFile(host.Proc(e.Name(), "status")); err == nil {
					parent[pid] = statusID(status, "PPid:")
				}
				break
			}
		}
	}
	var pids []int
	for _, p := range marked {
		if _, child := parent[parent[p]]; !child {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// pendingLaunches returns the Launches that are not JVMs of Base.
func (in *Instance) pendingLaunches() ([]int, error) {
	pids, err := in.Launches()
	if err != nil {
		return nil, err
	}
	var pending []int
	for _, p := range pids {
		if !in.alive(p) {
			pending = append(pending, p)
		}
	}
	return pending, nil
}

// The ways Stop ends the JVM, as StopResult.Method gives them.
const (
	stopShutdownPort = "catalina.sh stop" // through the Server's shutdown port
	stopSIGTERM      = "SIGTERM"          // the JVM's shutdown hook stops Tomcat cleanly
	stopSIGKILL      = "SIGKILL"
	stopSystemctl    = "systemctl stop" // the unit's main process, through systemd
)

// StopOptions tune Stop. A nil *StopOptions means the defaults.
type StopOptions struct {
	// Timeout bounds each way of stopping. Default: 30 s.
	Timeout time.Duration
	// PID is the JVM to stop, one of JVMs(). Default 0: the instance's
	// only JVM (PID).
	PID int
}

// StopResult says how the JVM was stopped.
type StopResult struct {
	PID int
	// Method is the way that ended the JVM: "catalina.sh stop" (the
	// Server's shutdown port), "SIGTERM", "SIGKILL" or "systemctl stop".
	Method string
	Took   time.Duration
}

// Stop stops the instance's JVM, found in /proc (PID, or StopOptions.PID),
// whoever started it: with `catalina.sh stop` when server.xml enables the
// shutdown port (Debian ships <Server port="-1">, which disables it), else
// or when that does not end it in time, with SIGTERM to the PID, and with
// SIGKILL as a last resort; each way waits up to Timeout. It returns the
// way that worked, and removes a CATALINA_PID file that names the JVM. No
// running JVM is an error compatible with errors.Is(err, ErrNotRunning);
// several, without StopOptions.PID, ErrAmbiguous. Signalling needs the
// JVM's user or root.
//
// When ctx ends while Stop waits, it stops waiting and does not escalate:
// the error wraps ctx's error and says what was sent (pass
// context.WithoutCancel(ctx) to stop a JVM during shutdown).
//
// Under ControlSystemd (DetectControl) the unit's main process is stopped
// with `systemctl stop Service` (Method "systemctl stop"), so systemd does not start
// it again; a StopOptions.PID that is not the main process is a JVM
// beside the unit and is stopped as above. A unit that is inactive or
// failed is ErrNotRunning.
func (in *Instance) Stop(ctx context.Context, opts *StopOptions) (StopResult, error) {
	var o StopOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout == 0 {
		o.Timeout = defaultStopTimeout
	}
	c, err := in.control(ctx)
	if err != nil {
		return StopResult{}, err
	}
	if c == ControlSystemd {
		return in.stopUnit(ctx, o)
	}
	return in.stopProcess(ctx, o)
}

// stopProcess is Stop without systemd, with o's defaults set.
func (in *Instance) stopProcess(ctx context.Context, o StopOptions) (StopResult, error) {
	pid := o.PID
	if pid == 0 {
		var err error
		if pid, err = in.PID(); err != nil {
			return StopResult{}, err
		}
	} else if !in.alive(pid) {
		return StopResult{}, fmt.Errorf("%w: PID %d is not a JVM with -Dcatalina.base=%s", ErrNotRunning, pid, in.Base)
	}
	res := StopResult{PID: pid}
	started, err := in.startTime(pid)
	if err != nil {
		return res, fmt.Errorf("%w: JVM %d exited: %v", ErrNotRunning, pid, err)
	}
	t0 := time.Now()
	done := func(m string) (StopResult, error) {
		res.Method, res.Took = m, time.Since(t0)
		if p, err := in.pidFromFile(); err == nil && p == pid {
			if err := os.Remove(in.pidFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
				return res, fmt.Errorf("tomcatconf: stopped PID %d but cannot remove %s: %w", pid, in.pidFile(), err)
			}
		}
		return res, nil
	}
	if in.shutdownPortEnabled() {
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		var as *Account
		if a, err := in.Account(); err == nil {
			as = &a
		}
		_, err := in.runner().Run(cctx, Command{Path: in.catalinaSh(), Args: []string{"stop"}, Env: in.env(), Dir: in.Base, As: as})
		cancel()
		if err == nil && in.waitExit(ctx, pid, started, o.Timeout) {
			return done(stopShutdownPort)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return res, fmt.Errorf("tomcatconf: SIGTERM to JVM %d: %w", pid, err)
	}
	if in.waitExit(ctx, pid, started, o.Timeout) {
		return done(stopSIGTERM)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("tomcatconf: stopping JVM %d: sent SIGTERM, stopped waiting: %w", pid, context.Cause(ctx))
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return res, fmt.Errorf("tomcatconf: SIGKILL to JVM %d: %w", pid, err)
	}
	if in.waitExit(ctx, pid, started, o.Timeout) {
		return done(stopSIGKILL)
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

// waitExit polls /proc until the process pid, identified as this
// instance's JVM with the start time started, has exited (gone or a zombie), ctx
// ends or timeout passes. It does not ask whether pid is still the JVM:
// while a process exits, the kernel takes away its command line and its
// root directory before the process is gone, so that question says "no"
// too early. A PID reused by another process during the wait has another
// start time and ends the wait.
func (in *Instance) waitExit(ctx context.Context, pid int, started uint64, timeout time.Duration) bool {
	return in.poll(ctx, timeout, func() bool {
		if !in.exists(pid) {
			return true
		}
		now, err := in.startTime(pid)
		return err != nil || now != started
	})
}

// startTime returns the process's start time in clock ticks after boot
// (field 22 of /proc/PID/stat): with the PID it names one process for
// good.
func (in *Instance) startTime(pid int) (uint64, error) {
	host, err := hostRoot(in.Root)
	if err != nil {
		return 0, err
	}
	st, err := procstat.Read(host.Proc(strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("tomcatconf: %w", err)
	}
	if st.StartTime == 0 {
		return 0, fmt.Errorf("tomcatconf: %s: no start time", host.Proc(strconv.Itoa(pid), "stat"))
	}
	return st.StartTime, nil
}

// waitGone polls /proc until pid is gone (or a zombie), ctx ends or
// timeout passes.
func (in *Instance) waitGone(ctx context.Context, pid int, timeout time.Duration) bool {
	return in.poll(ctx, timeout, func() bool { return !in.exists(pid) })
}

func (in *Instance) poll(ctx context.Context, timeout time.Duration, done func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if done() {
			return true
		}
		select {
		case <-ctx.Done():
			return done()
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
