//go:build linux

package remoteload

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// WorkerArg, as the only argument, runs the study's binary as a load
// worker (WorkerMain): the form in which -load-netns runs each load
// inside another network namespace, like the guide's separate client
// machine.
const WorkerArg = "load-worker"

// NetNSDir is where `ip netns add` keeps its named network namespaces.
const NetNSDir = "/run/netns"

// workerStopWait bounds the wait for a worker after its context ends: it
// gets SIGTERM, and SIGKILL if it has not exited by then.
const workerStopWait = 5 * time.Second

// WorkerMain is the worker mode: one load, described by a loadgen.Config
// in its wire form (loadgen.WriteConfigJSON) on standard input, its Result
// as loadgen's JSON on standard output (with the worker's own CPU use,
// Result.Generator). The end of standard input after the Config (the
// study's pipe or ssh session closed), SIGINT or SIGTERM ends the load.
// It returns the exit code.
func WorkerMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := RunWorker(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "tomcat-tuning %s: %v\n", WorkerArg, err)
		return 1
	}
	return 0
}

// ErrSessionEnded is the cause of a worker's load cut short because its
// standard input ended: the study that started it closed the pipe, or its
// ssh session ended (the study was killed, or the network cut).
var ErrSessionEnded = errors.New("the study's session ended (standard input closed)")

// RunWorker reads one Config from in (loadgen.ReadConfigJSON), runs it
// and writes the Result to out (report.WriteJSON): the worker's job.
// Once the Config is read it keeps reading in: its end (EOF or an error)
// cancels the load, so a worker never outlives the session that started
// it; the caller keeps in open until it has the Result.
func RunWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	cfg, err := loadgen.ReadConfigJSON(in)
	if err != nil {
		return fmt.Errorf("standard input: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		_, _ = io.Copy(io.Discard, in)
		cancel(ErrSessionEnded)
	}()
	res, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		// A load cut short measures nothing the study can use.
		return fmt.Errorf("load of %s stopped after %s: %w", cfg.URL, res.Elapsed.Round(time.Millisecond), context.Cause(ctx))
	}
	return report.WriteJSON(out, res)
}

// NetNSLoad runs loads in a worker process (the study's own binary in
// worker mode) inside a named network namespace, through `ip netns exec`,
// which enters the namespace, mounts its sysfs and execs the worker in
// place (its PID is the one started). Its Run is a loadgen.RunFunc.
type NetNSLoad struct {
	// NetNS is the namespace's name under /run/netns; "" runs the worker
	// in this process's namespace.
	NetNS string
	// Exe is the study's binary. Default: os.Executable().
	Exe string
}

// command returns the worker's command line.
func (l NetNSLoad) command() ([]string, error) {
	exe := l.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("load worker: the study's binary: %w", err)
		}
	}
	if l.NetNS == "" {
		return []string{exe, WorkerArg}, nil
	}
	return []string{"ip", "netns", "exec", l.NetNS, exe, WorkerArg}, nil
}

// where names the namespace for messages.
func (l NetNSLoad) where() string {
	if l.NetNS == "" {
		return "this network namespace"
	}
	return "network namespace " + l.NetNS
}

// Run runs cfg in a worker and returns its Result. The worker is this
// call's child: when ctx ends it gets SIGTERM and, workerStopWait later,
// SIGKILL (by its PID), and run returns only once it has been waited for;
// if the study itself dies, the kernel kills it (PR_SET_PDEATHSIG).
func (l NetNSLoad) Run(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	argv, err := l.command()
	if err != nil {
		return nil, err
	}
	return runWorkerCommand(ctx, argv, cfg, l.where())
}

// runWorkerCommand runs argv, a worker (here, in a namespace, or over
// ssh), hands it cfg on a pipe it keeps open until the worker exits (the
// pipe's end cancels the load: RunWorker), and reads its Result. When
// ctx ends the command gets SIGTERM, and SIGKILL workerStopWait later;
// if the study dies, the kernel kills it (PR_SET_PDEATHSIG) and the pipe
// closes.
func runWorkerCommand(ctx context.Context, argv []string, cfg loadgen.Config, where string) (*loadgen.Result, error) {
	var body bytes.Buffer
	if err := loadgen.WriteConfigJSON(&body, cfg); err != nil {
		return nil, fmt.Errorf("load worker: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("load worker: %w", err)
	}
	defer pr.Close()
	defer pw.Close()
	// The Config is far smaller than a pipe's buffer: written before the
	// worker starts, it cannot block.
	if _, err := pw.Write(body.Bytes()); err != nil {
		return nil, fmt.Errorf("load worker: %w", err)
	}
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4 << 10}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = pr
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = workerStopWait
	// PR_SET_PDEATHSIG fires when the thread that forked the worker ends,
	// not the process: fork from a thread kept for the worker's lifetime.
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- cmd.Run()
	}()
	err = <-done
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("load of %s in %s: %w", cfg.URL, where, cerr)
	}
	if err != nil {
		return nil, fmt.Errorf("load of %s in %s (%s): %w: %s", cfg.URL, where, strings.Join(argv, " "), err,
			cmp.Or(strings.TrimSpace(stderr.String()), "no message"))
	}
	res, err := report.ReadResultJSON(&stdout)
	if err != nil {
		return nil, fmt.Errorf("load of %s in %s: the worker's result: %w", cfg.URL, where, err)
	}
	return res, nil
}

// tailBuffer keeps the last max bytes written to it: a worker's error
// message, without holding an endless stream.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
