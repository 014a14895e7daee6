//go:build linux

// Command grubiommu aligns the IOMMU kernel parameters in the GRUB
// defaults file, the way the Arm Neoverse Tomcat guide does by hand
// (GRUB_CMDLINE_LINUX="iommu.strict=1 iommu.passthrough=0"), but changing
// only that assignment and keeping every other parameter.
//
// Without flags it shows the file's and the running kernel's IOMMU
// parameters and state. -strict plans the change and prints the diff;
// -apply writes it (with a backup); -update regenerates the bootloader
// configuration.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/cliflag"
)

const synopsis = `usage: grubiommu [-root DIR] [-file PATH]     show the file's and the running kernel's IOMMU parameters
       grubiommu -strict [-strict-value 1] [-passthrough-value 0] [-var GRUB_CMDLINE_LINUX|GRUB_CMDLINE_LINUX_DEFAULT]
                 [-apply [-update]] [-root DIR] [-file PATH]
-strict is a dry run that prints the diff without -apply. Exit status: 0 done, 1 failed, 2 a bad command line.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := runArgs(ctx, os.Args[1:], os.Stdout)
	stop()
	cliflag.Exit("grubiommu", err)
}

// runArgs parses the command line, refusing contradictory or pointless
// flag combinations, then runs it.
func runArgs(ctx context.Context, args []string, w io.Writer) error {
	fs := cliflag.New("grubiommu", synopsis, w)
	var o options
	fs.StringVar(&o.root, "root", "/", "host root directory (a mounted image, a container's /host)")
	fs.StringVar(&o.file, "file", "", "GRUB defaults file, its drop-ins in FILE.d/*.cfg (default: ROOT/etc/default/grub)")
	fs.BoolVar(&o.strict, "strict", false, "set the IOMMU parameters (-strict-value, -passthrough-value)")
	fs.StringVar(&o.strictVal, "strict-value", bootcfg.DefaultIOMMUStrict, "value for iommu.strict with -strict")
	fs.StringVar(&o.passVal, "passthrough-value", bootcfg.DefaultIOMMUPassthrough, "value for iommu.passthrough with -strict")
	fs.StringVar(&o.variable, "var", bootcfg.CmdlineLinux, "with -strict: the variable to edit, "+bootcfg.CmdlineLinux+" or "+bootcfg.CmdlineLinuxDefault)
	fs.BoolVar(&o.apply, "apply", false, "with -strict: write the change (default: dry run, print the diff)")
	fs.BoolVar(&o.update, "update", false, "with -apply: regenerate the bootloader config (update-grub, grub2-mkconfig or grubby)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	given := fs.Given()
	for _, f := range []struct{ flag, needs string }{
		{"strict-value", "strict"}, {"passthrough-value", "strict"}, {"var", "strict"}, {"apply", "strict"}, {"update", "apply"},
	} {
		if given[f.flag] && !given[f.needs] {
			return cliflag.Usagef("-%s goes with -%s: give -%s too", f.flag, f.needs, f.needs)
		}
	}
	return run(ctx, w, o)
}

type options struct {
	root, file, variable string
	strict               bool
	strictVal, passVal   string
	apply, update        bool
}

func run(ctx context.Context, w io.Writer, o options) error {
	root, file, variable, strict, strictVal, passVal, apply, update := o.root, o.file, o.variable, o.strict, o.strictVal, o.passVal, o.apply, o.update
	host, err := bootcfg.New(root)
	if err != nil {
		return err
	}
	if file == "" {
		file = host.DefaultGrubPath()
	}
	cfg, err := bootcfg.LoadConfig(file)
	if err != nil {
		return err
	}
	for _, name := range []string{bootcfg.CmdlineLinux, bootcfg.CmdlineLinuxDefault} {
		v := cfg.Lookup(name)
		switch {
		case !v.Set:
			fmt.Fprintf(w, "%s: not set\n", name)
		case !v.Known:
			fmt.Fprintf(w, "%s: %v\n", name, v.Dynamic)
		default:
			cl, _ := bootcfg.ParseCmdline(v.Value)
			fmt.Fprintf(w, "%s (%s:%d): %q, IOMMU parameters: %s\n", name, v.File, v.Line, v.Value, params(bootcfg.IOMMUParams(cl)))
		}
	}
	running, err := host.Cmdline()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "running kernel: IOMMU parameters: %s\n", params(bootcfg.IOMMUParams(running)))
	if st, err := host.IOMMU(); err != nil {
		fmt.Fprintf(w, "running kernel: IOMMU state: %v\n", err)
	} else {
		fmt.Fprintf(w, "running kernel: IOMMU %s\n", st)
	}
	if !strict {
		return nil
	}

	want := bootcfg.IOMMUAlign(strictVal, passVal)
	plan, err := cfg.Plan(bootcfg.Edit{Var: variable, Set: want})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "editing %s: %q -> %q\n", plan.Var, plan.Before, plan.After)
	for _, p := range plan.Shadowed {
		fmt.Fprintf(w, "warning: %s has %s, which comes later on the boot line and wins\n", bootcfg.CmdlineLinuxDefault, p)
	}
	if !plan.Changed() {
		fmt.Fprintln(w, "no change: the file already has these parameters")
	}
	fmt.Fprint(w, plan.Diff())
	if plan.Changed() && !apply {
		fmt.Fprintln(w, "dry run: -apply writes the change")
		return nil
	}
	if apply {
		ws, err := plan.Apply()
		if err != nil {
			return err
		}
		for _, wr := range ws {
			fmt.Fprintf(w, "wrote %s (backup %s)\n", wr.Path, wr.Backup)
		}
	}
	if update {
		args, out, err := host.Regenerate(ctx, nil, cfg, plan)
		fmt.Fprintf(w, "ran %v\n%s", args, out)
		if err != nil && apply && plan.Changed() {
			// The bootloader did not take the edit: put the file back,
			// so that nothing is left half done.
			if uerr := plan.Undo(); uerr != nil {
				return errors.Join(err, uerr)
			}
			fmt.Fprintf(w, "put back %s: the regeneration failed\n", strings.Join(plan.Files(), ", "))
		}
		if err != nil {
			return err
		}
	}
	if cfg, err = bootcfg.LoadConfig(file); err != nil {
		return err
	}
	boot, err := cfg.BootCmdline()
	if errors.Is(err, bootcfg.ErrDynamic) {
		// The other variable is computed by the shell: judge from the
		// edited one alone, and say so.
		fmt.Fprintf(w, "note: %v; judging from %s alone\n", err, variable)
		boot, err = cfg.Cmdline(variable)
	}
	if err != nil {
		return err
	}
	if bootcfg.PendingReboot(boot, running, want, nil).RebootRequired() {
		fmt.Fprintln(w, "reboot required: the running kernel does not have these parameters yet")
	} else {
		fmt.Fprintln(w, "no reboot required: the running kernel already has these parameters")
	}
	return nil
}

func params(ps []bootcfg.Param) string {
	if len(ps) == 0 {
		return "none"
	}
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += " "
		}
		s += p.String()
	}
	return s
}
