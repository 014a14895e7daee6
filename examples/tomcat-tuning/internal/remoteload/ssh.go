//go:build linux

package remoteload

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// KindRemoteDir is the journal record of the private directory the study
// made on a client (SSHClient.Dir): -revert removes it.
const KindRemoteDir = "ssh-worker-dir"

// StepLoadHost is the journal step of the worker put on a client.
const StepLoadHost = "load-host"

// sshTimeout bounds each ssh command of the set-up and clean-up (not the
// loads, which ctx and their Duration bound).
const sshTimeout = time.Minute

// workerName is the worker's file name in its directory on the client.
const workerName = "tomcat-tuning"

// SSHClient is a client machine that runs the study's loads, as the
// guide's wrk2 client does, reached through OpenSSH's own ssh (so the
// user's ~/.ssh/config, keys, agent and ProxyJump apply) with BatchMode
// (no password prompt) and StrictHostKeyChecking=yes (an unknown host key
// is refused, never accepted). Setup puts the study's own binary in a
// private temporary directory on it, checksum-verified; Run runs a load
// there in worker mode (RunWorker, loadgen's wire form of the Config);
// Cleanup removes the directory. Its JSON form is the journal record
// (KindRemoteDir) -revert removes the directory from.
type SSHClient struct {
	// Host is the client as given: [USER@]HOST[:PORT].
	Host string `json:"host"`
	// Config, when set, is passed as ssh -F (ssh reads ~/.ssh/config from
	// the passwd entry's home, not $HOME).
	Config string `json:"ssh_config,omitempty"`
	// Dir is the private directory made on the client ("" before Setup).
	Dir string `json:"dir,omitempty"`
	// Build, when not nil, builds a worker for the client's GOARCH when
	// the binary Setup is given is of another (WorkerBuilder.Build);
	// Built is then the binary Setup copied.
	Build func(ctx context.Context, goarch string) (string, error) `json:"-"`
	Built string                                                   `json:"-"`

	user, host, port string
}

// ParseLoadHost parses a -load-host value, [USER@]HOST[:PORT] (an IPv6
// address in brackets: [::1]:22), with the -ssh-config file.
func ParseLoadHost(s, config string) (*SSHClient, error) {
	c := &SSHClient{Host: s, Config: config}
	rest := s
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		c.user, rest = rest[:i], rest[i+1:]
		if c.user == "" {
			return nil, fmt.Errorf("-load-host %q: empty user before @: want [USER@]HOST[:PORT]", s)
		}
	}
	switch {
	case strings.HasPrefix(rest, "["):
		h, p, err := net.SplitHostPort(rest)
		if err != nil {
			return nil, fmt.Errorf("-load-host %q: %v: want [USER@]HOST[:PORT], an IPv6 address as [ADDR]:PORT", s, err)
		}
		c.host, c.port = h, p
	case strings.Count(rest, ":") == 1:
		c.host, c.port, _ = strings.Cut(rest, ":")
	default:
		c.host = rest
	}
	if c.host == "" || strings.HasPrefix(c.host, "-") || strings.ContainsAny(c.host+c.user, " \t\n'\"\\;&|$`") {
		return nil, fmt.Errorf("-load-host %q: want [USER@]HOST[:PORT]", s)
	}
	if c.port != "" {
		var n int
		if _, err := fmt.Sscanf(c.port, "%d", &n); err != nil || n < 1 || n > 65535 || fmt.Sprint(n) != c.port {
			return nil, fmt.Errorf("-load-host %q: port %q: want 1-65535", s, c.port)
		}
	}
	return c, nil
}

// sshArgs is the ssh command line that runs remote on the client.
func (c *SSHClient) sshArgs(remote string) []string {
	args := []string{"ssh"}
	if c.Config != "" {
		args = append(args, "-F", c.Config)
	}
	args = append(args, "-T", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")
	if c.port != "" {
		args = append(args, "-p", c.port)
	}
	if c.user != "" {
		args = append(args, "-l", c.user)
	}
	return append(args, "--", c.host, remote)
}

// where names the client for messages.
func (c *SSHClient) where() string { return "client " + c.Host + " (ssh)" }

// command runs remote on the client with stdin and returns its standard
// output; an error names the host, what failed and, for ssh's own
// failures, how to fix them.
func (c *SSHClient) command(ctx context.Context, what, remote string, stdin io.Reader) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, sshTimeout)
	defer cancel()
	argv := c.sshArgs(remote)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = stdin
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Run(); err != nil {
		return "", c.sshError(what, err, stderr.String())
	}
	return stdout.String(), nil
}

// Errors of ssh itself, told apart by its message, with the fix.
var (
	// ErrHostKey: the client's host key is unknown or changed.
	ErrHostKey = errors.New("host key not verified")
	// ErrAuth: no key or agent identity the client accepts.
	ErrAuth = errors.New("authentication failed")
	// ErrUnreachable: the host did not answer on its ssh port.
	ErrUnreachable = errors.New("host unreachable")
)

func (c *SSHClient) sshError(what string, err error, stderr string) error {
	msg := cmp.Or(strings.TrimSpace(stderr), "no message")
	var kind error
	var fix string
	switch {
	case strings.Contains(stderr, "Host key verification failed"), strings.Contains(stderr, "REMOTE HOST IDENTIFICATION HAS CHANGED"),
		strings.Contains(stderr, "No ED25519 host key is known"), strings.Contains(stderr, "host key is known"):
		kind = ErrHostKey
		port := c.port
		if port == "" {
			port = "22"
		}
		fix = fmt.Sprintf("the study never accepts an unknown host key: check the client's key and add it to known_hosts "+
			"(ssh-keyscan -p %s %s >> ~/.ssh/known_hosts, or the file your ssh config names); after a legitimate key change remove the old one with ssh-keygen -R %s",
			port, c.host, c.host)
	case strings.Contains(stderr, "Permission denied"), strings.Contains(stderr, "Too many authentication failures"):
		kind = ErrAuth
		fix = "ssh runs with BatchMode=yes (no password prompt): give the client a key the study's user holds (ssh-copy-id), an agent, or IdentityFile in -ssh-config"
	case strings.Contains(stderr, "Connection refused"), strings.Contains(stderr, "timed out"), strings.Contains(stderr, "No route to host"),
		strings.Contains(stderr, "Could not resolve hostname"), strings.Contains(stderr, "Network is unreachable"), strings.Contains(stderr, "Connection closed"):
		kind = ErrUnreachable
		fix = "check the host is up, runs sshd, and is reachable from here"
	}
	if kind != nil {
		return fmt.Errorf("%s: %s: %w (%s): %s: %v", c.where(), what, kind, msg, fix, err)
	}
	return fmt.Errorf("%s: %s: %w: %s", c.where(), what, err, msg)
}

// ELFArch returns the GOARCH of the ELF executable at path.
func ELFArch(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w (want an ELF executable)", path, err)
	}
	defer f.Close()
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_386:
		return "386", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_PPC64:
		if f.ByteOrder == binary.LittleEndian {
			return "ppc64le", nil
		}
		return "ppc64", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	case elf.EM_LOONGARCH:
		return "loong64", nil
	}
	return "", fmt.Errorf("%s: ELF machine %s: not an architecture Go builds for", path, f.Machine)
}

// goarchOf maps `uname -m` to GOARCH.
var goarchOf = map[string]string{
	"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64",
	"i386": "386", "i686": "386", "armv7l": "arm", "armv6l": "arm",
	"ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64", "loongarch64": "loong64",
}

// remoteDir is what mktemp -d may print: checked before it is used in a
// remote command line.
var remoteDir = regexp.MustCompile(`^/[A-Za-z0-9._/-]+$`)

// Setup reads the client's architecture (uname -m), refuses one that is
// not exe's unless Build builds a worker for it, makes a private directory (mktemp -d, mode 0700) and
// copies exe (the study's binary, or -load-worker's, of the client's
// architecture by its ELF header) into it, checking its SHA-256 on the
// client (sha256sum) against this copy's. onDir is called with the
// directory as soon as it exists, to journal it; when it fails, the
// directory is removed and its error returned.
func (c *SSHClient) Setup(ctx context.Context, exe string, onDir func(*SSHClient) error) error {
	out, err := c.command(ctx, "read its architecture (uname -m)", "uname -m", nil)
	if err != nil {
		return err
	}
	exe, built, err := workerFor(ctx, c.where(), strings.TrimSpace(out), exe, c.Build)
	if err != nil {
		return err
	}
	if built {
		c.Built = exe
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		return fmt.Errorf("%s: the worker binary to copy: %w", c.where(), err)
	}
	sum := sha256.Sum256(bin)
	want := hex.EncodeToString(sum[:])
	out, err = c.command(ctx, "make a private directory (mktemp -d)", "mktemp -d \"${TMPDIR:-/tmp}/tomcat-tuning-worker.XXXXXXXX\"", nil)
	if err != nil {
		return err
	}
	dir := strings.TrimSpace(out)
	if !remoteDir.MatchString(dir) || strings.Contains(dir, "..") {
		return fmt.Errorf("%s: mktemp -d printed %q: want an absolute path", c.where(), dir)
	}
	c.Dir = dir
	if onDir != nil {
		if err := onDir(c); err != nil {
			return errors.Join(err, c.Cleanup(context.WithoutCancel(ctx)))
		}
	}
	path := dir + "/" + workerName
	out, err = c.command(ctx, "copy the study's binary", fmt.Sprintf("umask 077 && cat > %s && chmod 700 %s && sha256sum %s", path, path, path), bytes.NewReader(bin))
	if err == nil {
		if got, _, _ := strings.Cut(strings.TrimSpace(out), " "); got != want {
			err = fmt.Errorf("%s: the copied worker %s has SHA-256 %q, this binary %s: the copy is corrupt", c.where(), path, got, want)
		}
	}
	if err != nil {
		return errors.Join(err, c.Cleanup(context.WithoutCancel(ctx)))
	}
	return nil
}

// Exe is the worker's path on the client.
func (c *SSHClient) Exe() string { return c.Dir + "/" + workerName }

// Run runs cfg on the client in worker mode and returns its Result: a
// loadgen.RunFunc. The ssh session's stdin stays open until the result;
// when ctx ends ssh gets SIGTERM, the session ends, and the worker, which
// watches its stdin, stops.
func (c *SSHClient) Run(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	if c.Dir == "" {
		return nil, fmt.Errorf("%s: no worker on the client (Setup not run)", c.where())
	}
	res, err := runWorkerCommand(ctx, c.sshArgs(c.Exe()+" "+WorkerArg), cfg, c.where())
	if err != nil && ctx.Err() == nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 255 {
			return nil, fmt.Errorf("%w (ssh failed: the session or the connection ended)", err)
		}
	}
	return res, err
}

// Cleanup removes the client's directory (rm -rf); a directory already
// gone is not an error.
func (c *SSHClient) Cleanup(ctx context.Context) error {
	if c.Dir == "" {
		return nil
	}
	if !remoteDir.MatchString(c.Dir) || strings.Contains(c.Dir, "..") {
		return fmt.Errorf("%s: refusing to remove %q: not a directory the study made", c.where(), c.Dir)
	}
	if _, err := c.command(ctx, "remove "+c.Dir, "rm -rf -- "+c.Dir, nil); err != nil {
		return err
	}
	return nil
}

// Register adds KindRemoteDir's revert to rev and its check to ver
// (either may be nil): a journal of a run with load hosts then reverts
// and verifies with the study's other kinds.
func Register(rev tuning.Reverters, ver persist.Verifiers) {
	if rev != nil {
		rev[KindRemoteDir] = revertRemoteDir
	}
	if ver != nil {
		ver[KindRemoteDir] = verifyRemoteDir
	}
}

// verifyRemoteDir is the Verifiers entry of KindRemoteDir: a worker
// directory left on a client is a leftover -revert removes, not a
// setting the host holds.
func verifyRemoteDir(_ context.Context, data json.RawMessage) (string, error) {
	var c SSHClient
	if err := json.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("%w: journal record %s: %v", persist.ErrNotVerifiable, KindRemoteDir, err)
	}
	return "the load worker's directory " + c.Dir + " on " + c.Host,
		fmt.Errorf("%w: a run's leftover on the client %s, not a setting of this host: -revert removes it", persist.ErrNotVerifiable, c.Host)
}

// revertRemoteDir is the Reverters entry of KindRemoteDir.
func revertRemoteDir(ctx context.Context, data json.RawMessage) error {
	var c SSHClient
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("journal record %s: %w", KindRemoteDir, err)
	}
	cc, err := ParseLoadHost(c.Host, c.Config)
	if err != nil {
		return err
	}
	cc.Dir = c.Dir
	return cc.Cleanup(ctx)
}
