// Package command runs external commands (update-grub, catalina.sh,
// systemctl, …) with their output captured for error messages. The public
// packages keep their own Runner interfaces, which tests and dry runs
// replace; this is what those interfaces do when nothing replaces them.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
)

// Spec is one command to run.
type Spec struct {
	Path string
	Args []string // arguments after Path
	Env  []string // the complete environment; nil means this process's
	Dir  string   // working directory; "" means this process's
	// Cred runs the command as another user (which needs root); nil runs
	// it as this process.
	Cred *syscall.Credential
}

// String returns the command line, for messages.
func (s Spec) String() string { return strings.Join(append([]string{s.Path}, s.Args...), " ") }

// Run runs s and returns what it wrote to stdout and stderr together. A
// command that cannot start or exits non-zero is an *Error holding that
// output; when ctx ends the command is killed and ctx's error is joined
// into Error.Err.
func Run(ctx context.Context, s Spec) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.Path, s.Args...)
	cmd.Env, cmd.Dir = s.Env, s.Dir
	if s.Cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.Cred}
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		return out.Bytes(), &Error{Args: append([]string{s.Path}, s.Args...), Output: out.String(), Err: err}
	}
	return out.Bytes(), nil
}

// maxOutput is how much of a failed command's output an Error's message
// shows: the end, where the reason usually is.
const maxOutput = 2000

// Error is a command that failed, with what it printed.
type Error struct {
	Args   []string // the command line, Path first
	Output string   // stdout and stderr together
	Err    error    // *exec.ExitError, an exec error, or ctx's error joined
}

// Error gives the command line, the failure, and the end of the output,
// on one line when the output is one line.
func (e *Error) Error() string {
	out := strings.TrimSpace(e.Output)
	if len(out) > maxOutput {
		out = "..." + out[len(out)-maxOutput:]
	}
	if out == "" {
		return fmt.Sprintf("%s: %v", strings.Join(e.Args, " "), e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", strings.Join(e.Args, " "), e.Err, out)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
