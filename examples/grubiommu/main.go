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
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"

	"github.com/nettune/nettune/bootcfg"
)

func main() {
	root := flag.String("root", "/", "host root directory (a mounted image, a container's /host)")
	file := flag.String("file", "", "GRUB defaults file, its drop-ins in FILE.d/*.cfg (default: ROOT/etc/default/grub)")
	strict := flag.Bool("strict", false, "set the IOMMU parameters (-strict-value, -passthrough-value)")
	strictVal := flag.String("strict-value", bootcfg.DefaultIOMMUStrict, "value for iommu.strict with -strict")
	passVal := flag.String("passthrough-value", bootcfg.DefaultIOMMUPassthrough, "value for iommu.passthrough with -strict")
	variable := flag.String("var", bootcfg.CmdlineLinux, "variable to edit: "+bootcfg.CmdlineLinux+" or "+bootcfg.CmdlineLinuxDefault)
	apply := flag.Bool("apply", false, "write the change (default: dry run, print the diff)")
	update := flag.Bool("update", false, "regenerate the bootloader config (update-grub, grub2-mkconfig or grubby) after -apply")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := options{root: *root, file: *file, variable: *variable, strict: *strict,
		strictVal: *strictVal, passVal: *passVal, apply: *apply, update: *update}
	if err := run(ctx, os.Stdout, o); err != nil {
		log.Fatal(err)
	}
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
