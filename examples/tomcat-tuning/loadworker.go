//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/nettune/nettune/loadgen"
)

// loadWorkerArg, as the only argument, runs the study's binary as a load
// worker (loadWorkerMain): the form in which -load-netns runs each load
// inside another network namespace, like the guide's separate client
// machine.
const loadWorkerArg = "load-worker"

// netnsDir is where `ip netns add` keeps its named network namespaces.
const netnsDir = "/run/netns"

// workerStopWait bounds the wait for a worker after its context ends: it
// gets SIGTERM, and SIGKILL if it has not exited by then.
const workerStopWait = 5 * time.Second

// loadRequest is what a worker gets of a loadgen.Config: every field but
// Pacer and OnInterval, a schedule object and a callback that cannot
// cross a process boundary.
type loadRequest struct {
	URL              string           `json:"url"`
	Method           string           `json:"method,omitempty"`
	Headers          []loadgen.Header `json:"headers,omitempty"`
	Body             []byte           `json:"body,omitempty"`
	Connections      int              `json:"connections,omitempty"`
	Threads          int              `json:"threads,omitempty"`
	Rate             float64          `json:"rate,omitempty"`
	Shard            int              `json:"shard,omitempty"`
	Shards           int              `json:"shards,omitempty"`
	StartAt          time.Time        `json:"start_at,omitzero"`
	Slack            time.Duration    `json:"slack_ns,omitempty"`
	Duration         time.Duration    `json:"duration_ns,omitempty"`
	Requests         int64            `json:"requests,omitempty"`
	Warmup           time.Duration    `json:"warmup_ns,omitempty"`
	DisableKeepAlive bool             `json:"disable_keep_alive,omitempty"`
	Timeout          time.Duration    `json:"timeout_ns,omitempty"`
	Interval         time.Duration    `json:"interval_ns,omitempty"`
}

// newLoadRequest returns cfg's request; a Pacer or OnInterval cannot be
// sent and is an error.
func newLoadRequest(cfg loadgen.Config) (loadRequest, error) {
	if cfg.Pacer != nil {
		return loadRequest{}, fmt.Errorf("load worker: a Config with a Pacer (%s) cannot be sent to another process: use Rate", cfg.Pacer)
	}
	if cfg.OnInterval != nil {
		return loadRequest{}, errors.New("load worker: a Config with OnInterval cannot be sent to another process")
	}
	return loadRequest{
		URL: cfg.URL, Method: cfg.Method, Headers: cfg.Headers, Body: cfg.Body,
		Connections: cfg.Connections, Threads: cfg.Threads, Rate: cfg.Rate,
		Shard: cfg.Shard, Shards: cfg.Shards, StartAt: cfg.StartAt, Slack: cfg.Slack,
		Duration: cfg.Duration, Requests: cfg.Requests, Warmup: cfg.Warmup,
		DisableKeepAlive: cfg.DisableKeepAlive, Timeout: cfg.Timeout, Interval: cfg.Interval,
	}, nil
}

// config returns the loadgen.Config the request describes.
func (r loadRequest) config() loadgen.Config {
	return loadgen.Config{
		URL: r.URL, Method: r.Method, Headers: r.Headers, Body: r.Body,
		Connections: r.Connections, Threads: r.Threads, Rate: r.Rate,
		Shard: r.Shard, Shards: r.Shards, StartAt: r.StartAt, Slack: r.Slack,
		Duration: r.Duration, Requests: r.Requests, Warmup: r.Warmup,
		DisableKeepAlive: r.DisableKeepAlive, Timeout: r.Timeout, Interval: r.Interval,
	}
}

// loadWorkerMain is the worker mode: one load, described by a loadRequest
// as JSON on standard input, its Result as loadgen's JSON on standard
// output. SIGINT or SIGTERM ends the load. It returns the exit code.
func loadWorkerMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := loadWorker(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "tomcat-tuning %s: %v\n", loadWorkerArg, err)
		return 1
	}
	return 0
}

// loadWorker reads one loadRequest from in, runs it and writes the Result
// to out (loadgen.WriteJSON).
func loadWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	var req loadRequest
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("read the load request (JSON) on standard input: %w", err)
	}
	res, err := loadgen.Run(ctx, req.config())
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		// A load cut short measures nothing the study can use.
		return fmt.Errorf("load of %s stopped after %s: %w", req.URL, res.Elapsed.Round(time.Millisecond), err)
	}
	return loadgen.WriteJSON(out, res)
}

// netnsLoad runs loads in a worker process (the study's own binary in
// worker mode) inside a named network namespace, through `ip netns exec`,
// which enters the namespace, mounts its sysfs and execs the worker in
// place (its PID is the one started).
type netnsLoad struct {
	// netns is the namespace's name under /run/netns; "" runs the worker
	// in this process's namespace.
	netns string
	// exe is the study's binary. Default: os.Executable().
	exe string
}

// command returns the worker's command line.
func (l netnsLoad) command() ([]string, error) {
	exe := l.exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("load worker: the study's binary: %w", err)
		}
	}
	if l.netns == "" {
		return []string{exe, loadWorkerArg}, nil
	}
	return []string{"ip", "netns", "exec", l.netns, exe, loadWorkerArg}, nil
}

// where names the namespace for messages.
func (l netnsLoad) where() string {
	if l.netns == "" {
		return "this network namespace"
	}
	return "network namespace " + l.netns
}

// run runs cfg in a worker and returns its Result. The worker is this
// call's child: when ctx ends it gets SIGTERM and, workerStopWait later,
// SIGKILL (by its PID), and run returns only once it has been waited for;
// if the study itself dies, the kernel kills it (PR_SET_PDEATHSIG).
func (l netnsLoad) run(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	req, err := newLoadRequest(cfg)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("load worker: encode the request: %w", err)
	}
	argv, err := l.command()
	if err != nil {
		return nil, err
	}
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4 << 10}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(body)
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
		return nil, fmt.Errorf("load of %s in %s: %w", cfg.URL, l.where(), cerr)
	}
	if err != nil {
		return nil, fmt.Errorf("load of %s in %s (%s): %w: %s", cfg.URL, l.where(), strings.Join(argv, " "), err,
			firstNonEmpty(strings.TrimSpace(stderr.String()), "no message"))
	}
	res, err := loadgen.ReadResultJSON(&stdout)
	if err != nil {
		return nil, fmt.Errorf("load of %s in %s: the worker's result: %w", cfg.URL, l.where(), err)
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

// checkLoadNetNS checks -load-netns: a name `ip netns` knows, and a local
// load (not -remote-load).
func checkLoadNetNS(o options) error {
	name := o.loadNetNS
	if name == "" {
		return nil
	}
	if o.remote {
		return errors.New("-load-netns runs the load here, from a network namespace; -remote-load waits for a load from elsewhere: give one of them")
	}
	if name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("-load-netns %q: want the name of a namespace in %s (as `ip netns list` shows it)", name, netnsDir)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("-load-netns %q runs the load through `ip netns exec`: %w (install iproute2)", name, err)
	}
	if _, err := os.Stat(filepath.Join(netnsDir, name)); err != nil {
		return fmt.Errorf("-load-netns %q: %w (create it with `ip netns add %s`, with a route to the URL's host)", name, err, name)
	}
	return nil
}
