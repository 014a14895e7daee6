package bootcfg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Runner runs a command and returns its combined output. Tests replace it
// with one that records the commands; ExecRunner runs them.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs commands with os/exec. The context's cancellation kills
// the command.
type ExecRunner struct {
	// Env is the environment; nil means the current process's.
	Env []string
}

// Run runs name with args and returns stdout and stderr together. A
// failure is a *CommandError carrying that output.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = r.Env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		return out.Bytes(), &CommandError{Args: append([]string{name}, args...), Output: out.String(), Err: err}
	}
	return out.Bytes(), nil
}

// CommandError is a command that failed, with what it printed.
type CommandError struct {
	Args   []string
	Output string
	Err    error
}

// Error gives the command, its exit status and (the end of) its output.
func (e *CommandError) Error() string {
	out := strings.TrimSpace(e.Output)
	if len(out) > 2000 {
		out = "..." + out[len(out)-2000:]
	}
	if out == "" {
		return fmt.Sprintf("bootcfg: %s: %v", strings.Join(e.Args, " "), e.Err)
	}
	return fmt.Sprintf("bootcfg: %s: %v: %s", strings.Join(e.Args, " "), e.Err, out)
}

// Unwrap returns the cause (an *exec.ExitError, context.Canceled ...).
func (e *CommandError) Unwrap() error { return e.Err }

// Bootloader tools, in the order Regenerate looks for them.
const (
	ToolGrubby       = "grubby"         // BLS systems with GRUB_ENABLE_BLSCFG=true (RHEL 8+, Fedora)
	ToolUpdateGrub   = "update-grub"    // Debian, Ubuntu
	ToolGrub2Mkconfg = "grub2-mkconfig" // RHEL, Fedora, SUSE
	ToolGrubMkconfig = "grub-mkconfig"  // upstream GRUB, Arch
)

var toolDirs = []string{"usr/sbin", "sbin", "usr/bin", "bin", "usr/local/sbin"}

// findTool returns the path of an executable tool under the root.
func (h *Host) findTool(name string) string {
	for _, d := range toolDirs {
		p := h.root.Path(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// RegenerateCommand returns the command that makes the bootloader use the
// edited defaults, found under the root:
//
//   - grubby --update-kernel=ALL --args="..." [--remove-args="..."], when
//     the defaults set GRUB_ENABLE_BLSCFG=true and grubby exists: on BLS
//     systems each kernel's options live in its entry under
//     /boot/loader/entries, which grub2-mkconfig does not rewrite;
//   - update-grub;
//   - grub2-mkconfig -o /boot/grub2/grub.cfg;
//   - grub-mkconfig -o /boot/grub/grub.cfg.
//
// plan gives grubby its arguments and may be nil for the others. None
// found is an error matching ErrNoTool.
func (h *Host) RegenerateCommand(cfg *Config, plan *Plan) ([]string, error) {
	bls := false
	if cfg != nil {
		if v := cfg.Lookup("GRUB_ENABLE_BLSCFG"); v.Known && v.Value == "true" {
			bls = true
		}
	}
	if p := h.findTool(ToolGrubby); bls && p != "" && plan != nil && (len(plan.Set) > 0 || len(plan.Remove) > 0) {
		args := []string{p, "--update-kernel=ALL"}
		if len(plan.Set) > 0 {
			var ss []string
			for _, s := range plan.Set {
				ss = append(ss, s.String())
			}
			args = append(args, "--args="+strings.Join(ss, " "))
		}
		if len(plan.Remove) > 0 {
			args = append(args, "--remove-args="+strings.Join(plan.Remove, " "))
		}
		return args, nil
	}
	if p := h.findTool(ToolUpdateGrub); p != "" {
		return []string{p}, nil
	}
	if p := h.findTool(ToolGrub2Mkconfg); p != "" {
		return []string{p, "-o", h.root.Path("boot", "grub2", "grub.cfg")}, nil
	}
	if p := h.findTool(ToolGrubMkconfig); p != "" {
		return []string{p, "-o", h.root.Path("boot", "grub", "grub.cfg")}, nil
	}
	return nil, fmt.Errorf("%w under %s: looked for %s, %s, %s and %s in %s", ErrNoTool, h.root.Dir(),
		ToolGrubby, ToolUpdateGrub, ToolGrub2Mkconfg, ToolGrubMkconfig, strings.Join(toolDirs, ", "))
}

// Regenerate runs the command from RegenerateCommand through r (nil:
// ExecRunner) and returns the command and its output. It is never called
// by an edit: run it after Plan.Apply. It needs root. A failing command
// returns a *CommandError with its output.
func (h *Host) Regenerate(ctx context.Context, r Runner, cfg *Config, plan *Plan) ([]string, []byte, error) {
	args, err := h.RegenerateCommand(cfg, plan)
	if err != nil {
		return nil, nil, err
	}
	if r == nil {
		r = ExecRunner{}
	}
	out, err := r.Run(ctx, args[0], args[1:]...)
	if err != nil {
		var ce *CommandError
		if !errors.As(err, &ce) {
			err = &CommandError{Args: args, Output: string(out), Err: err}
		}
		return args, out, err
	}
	return args, out, nil
}
