//go:build linux

package study

import (
	"context"
	"fmt"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/tuning"
)

// iommuKind is the guide's first step, planned only: the IOMMU boot
// parameters need a reboot.
func iommuKind() Kind {
	return Kind{Name: StepIOMMU, Title: title("IOMMU boot settings iommu.strict=1 iommu.passthrough=0"), Baseline: true,
		Plan: (*planner).iommu, Needs: Needs{Persist: persistIOMMU}}
}

// iommu plans the Arm guide's IOMMU parameters in GRUB_CMDLINE_LINUX.
// It is always skipped: the change needs a reboot, and the study never
// edits the boot configuration (examples/grubiommu does).
func (p *planner) iommu(context.Context) (*tuning.Change, error) {
	b := p.h.Boot
	if b.Grub == nil {
		return &tuning.Change{Skip: fmt.Sprintf("no GRUB defaults file to plan against (%v)", b.Err)}, nil
	}
	want := bootcfg.IOMMUAlign(bootcfg.DefaultIOMMUStrict, bootcfg.DefaultIOMMUPassthrough)
	plan, err := b.Grub.Plan(bootcfg.Edit{Var: bootcfg.CmdlineLinux, Set: want})
	if err != nil {
		return &tuning.Change{Skip: fmt.Sprintf("cannot plan the edit: %v", err)}, nil
	}
	if plan.Changed() {
		return &tuning.Change{Describe: plan.Diff(),
			Skip: "reboot required: apply with `grubiommu -strict -apply -update`, reboot, then run the study"}, nil
	}
	boot, err := b.Grub.BootCmdline()
	if err == nil && b.Running != nil && bootcfg.PendingReboot(boot, b.Running, want, nil).RebootRequired() {
		return &tuning.Change{Describe: b.GrubPath + " already has " + paramsText(want),
			Skip: "reboot required: the running kernel does not have these parameters yet"}, nil
	}
	return &tuning.Change{Describe: "the file and the running kernel already have " + paramsText(want)}, nil
}

// persistIOMMU keeps the guide's IOMMU parameters through tuned's
// [bootloader], or says why it cannot. tuned writes the parameters into
// GRUB's configuration: without a GRUB defaults file (a container, a host
// booted another way) it has nowhere to put them, and `tuned-adm verify`
// of the profile would fail on every boot.
func persistIOMMU(pp *persistPlan) error {
	h, p := pp.h, pp.p
	want := paramsText(bootcfg.IOMMUAlign(bootcfg.DefaultIOMMUStrict, bootcfg.DefaultIOMMUPassthrough))
	switch {
	case h.Boot.Grub == nil:
		p.Notes = append(p.Notes, fmt.Sprintf("the IOMMU parameters (%s) are not made persistent: no GRUB defaults file to carry them (%v)", want, h.Boot.Err))
	case p.Tuned:
		p.Profile.Cmdline = want
		p.Notes = append(p.Notes, "the IOMMU parameters ("+want+") apply at the next boot: reboot pending")
	default:
		p.Notes = append(p.Notes, fmt.Sprintf("the IOMMU parameters (%s) are not made persistent without tuned: write them to %s with `grubiommu -strict -apply -update`, then reboot", want, h.Boot.GrubPath))
	}
	return nil
}
