package bootcfg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nettune/nettune/internal/command"
)

// Runner runs a command and returns what it wrote to stdout and stderr
// together. Replace it to record the commands or to make a dry run; a nil
// Runner runs them for real.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Bootloader tools, in the order Regenerate looks for them.
const (
	toolGrubby        = "grubby"         // BLS systems with GRUB_ENABLE_BLSCFG=true (RHEL 8+, Fedora)
	toolUpdateGrub    = "update-grub"    // Debian, Ubuntu
	toolGrub2Mkconfig = "grub2-mkconfig" // RHEL, Fedora, SUSE
	toolGrubMkconfig  = "grub-mkconfig"  // upstream GRUB, Arch
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
	if p := h.findTool(toolGrubby); bls && p != "" && plan != nil && (len(plan.Set) > 0 || len(plan.Remove) > 0) {
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
	if p := h.findTool(toolUpdateGrub); p != "" {
		return []string{p}, nil
	}
	if p := h.findTool(toolGrub2Mkconfig); p != "" {
		return []string{p, "-o", h.root.Path("boot", "grub2", "grub.cfg")}, nil
	}
	if p := h.findTool(toolGrubMkconfig); p != "" {
		return []string{p, "-o", h.root.Path("boot", "grub", "grub.cfg")}, nil
	}
	return nil, fmt.Errorf("%w under %s: looked for %s, %s, %s and %s in %s", ErrNoTool, h.root.Dir(),
		toolGrubby, toolUpdateGrub, toolGrub2Mkconfig, toolGrubMkconfig, strings.Join(toolDirs, ", "))
}

// Regenerate runs the command from RegenerateCommand through r (nil: run
// it for real) and returns the command and its output. It is never called
// by an edit: run it after Plan.Apply. It needs root. The error of a
// failing command names the command and ends with its output.
func (h *Host) Regenerate(ctx context.Context, r Runner, cfg *Config, plan *Plan) ([]string, []byte, error) {
	args, err := h.RegenerateCommand(cfg, plan)
	if err != nil {
		return nil, nil, err
	}
	var out []byte
	if r == nil {
		out, err = command.Run(ctx, command.Spec{Path: args[0], Args: args[1:]})
	} else {
		out, err = r.Run(ctx, args[0], args[1:]...)
	}
	if err != nil {
		var ce *command.Error
		if !errors.As(err, &ce) {
			err = &command.Error{Args: args, Output: string(out), Err: err}
		}
		return args, out, fmt.Errorf("bootcfg: %w", err)
	}
	return args, out, nil
}
