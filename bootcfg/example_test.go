package bootcfg_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/nettune/nettune/bootcfg"
)

func ExampleParseCmdline() {
	cl, err := bootcfg.ParseCmdline(`ro quiet dyndbg="file x.c +p" iommu.strict=0 -- --init-flag`)
	if err != nil {
		log.Fatal(err)
	}
	p, _ := cl.Get("iommu.strict")
	fmt.Println(p.Key, "=", p.Value)
	d, _ := cl.Get("dyndbg")
	fmt.Printf("%q\n", d.Value)
	fmt.Println(cl.Init())
	// Output:
	// iommu.strict = 0
	// "file x.c +p"
	// [--init-flag]
}

func ExampleCmdline_Set() {
	cl, _ := bootcfg.ParseCmdline("ro iommu.strict=0 rd.lvm.lv=rhel/root quiet")
	changed, err := cl.Set(bootcfg.P("iommu.strict", "1"), bootcfg.P("iommu.passthrough", "0"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(changed, cl)
	// Output:
	// true ro iommu.strict=1 rd.lvm.lv=rhel/root quiet iommu.passthrough=0
}

func ExampleConfig_Plan() {
	src := `GRUB_DEFAULT=0
GRUB_DISTRIBUTOR=` + "`lsb_release -i -s 2> /dev/null || echo Debian`" + `
GRUB_CMDLINE_LINUX_DEFAULT="quiet"
GRUB_CMDLINE_LINUX="rd.lvm.lv=vg/root"
`
	f, err := bootcfg.ParseFile("/etc/default/grub", []byte(src))
	if err != nil {
		log.Fatal(err)
	}
	cfg := &bootcfg.Config{Files: []*bootcfg.File{f}}
	plan, err := cfg.Plan(bootcfg.Edit{
		Var: bootcfg.CmdlineLinux,
		Set: []bootcfg.Param{bootcfg.P("iommu.strict", "1"), bootcfg.P("iommu.passthrough", "0")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("editing", plan.Var)
	fmt.Print(plan.Diff())
	// Output:
	// editing GRUB_CMDLINE_LINUX
	// --- /etc/default/grub
	// +++ /etc/default/grub
	// @@ -1,4 +1,4 @@
	//  GRUB_DEFAULT=0
	//  GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`
	//  GRUB_CMDLINE_LINUX_DEFAULT="quiet"
	// -GRUB_CMDLINE_LINUX="rd.lvm.lv=vg/root"
	// +GRUB_CMDLINE_LINUX="rd.lvm.lv=vg/root iommu.strict=1 iommu.passthrough=0"
}

func ExampleConfig_Lookup() {
	main, _ := bootcfg.ParseFile("/etc/default/grub", []byte("GRUB_CMDLINE_LINUX=\"ro\"\nGRUB_DISTRIBUTOR=\"$(sed 's, release .*$,,g' /etc/system-release)\"\n"))
	dropin, _ := bootcfg.ParseFile("/etc/default/grub.d/40-hardening.cfg", []byte("GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX slab_nomerge\"\n"))
	cfg := &bootcfg.Config{Files: []*bootcfg.File{main, dropin}}
	v := cfg.Lookup(bootcfg.CmdlineLinux)
	fmt.Printf("%q from %s:%d\n", v.Value, v.File, v.Line)
	d := cfg.Lookup("GRUB_DISTRIBUTOR")
	fmt.Println(d.Known, d.Dynamic)
	// Output:
	// "ro slab_nomerge" from /etc/default/grub.d/40-hardening.cfg:1
	// false bootcfg: GRUB_DISTRIBUTOR is computed by the shell at /etc/default/grub:2 (command substitution $(sed 's, release .*$,,g' /etc/system-release)); edit that file by hand or remove the expansion
}

func ExampleParseKernelLog() {
	dmesg := `[    0.877401] iommu: Default domain type: Translated (set via kernel command line)
[    0.877404] iommu: DMA domain TLB invalidation policy: strict mode (set via kernel command line)
`
	st, err := bootcfg.ParseKernelLog(strings.NewReader(dmesg))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st)
	// Output:
	// domain Translated (set via kernel command line), flush policy strict (set via kernel command line) [from kernel log]
}

func ExamplePendingReboot() {
	file, _ := bootcfg.ParseCmdline("quiet iommu.strict=1 iommu.passthrough=0")
	running, _ := bootcfg.ParseCmdline("BOOT_IMAGE=/vmlinuz ro quiet\n")
	p := bootcfg.PendingReboot(file, running, []bootcfg.Param{bootcfg.P("iommu.strict", "1")}, nil)
	fmt.Println(p.RebootRequired(), p.Set)
	// Output:
	// true [iommu.strict=1]
}

// The whole job on the running host: read, plan, write, regenerate.
// Needs root; it does not run as a test.
func ExampleHost_Regenerate() {
	host := bootcfg.NewDefault()
	cfg, err := host.DefaultGrub()
	if err != nil {
		log.Fatal(err)
	}
	plan, err := cfg.Plan(bootcfg.Edit{Set: []bootcfg.Param{bootcfg.P("iommu.strict", "1"), bootcfg.P("iommu.passthrough", "0")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(plan.Diff())
	if _, err := plan.Apply(); err != nil {
		log.Fatal(err)
	}
	args, _, err := host.Regenerate(context.Background(), nil, cfg, plan)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ran", args)
}

// Where the running kernel's IOMMU state comes from depends on the host.
func ExampleHost_IOMMU() {
	st, err := bootcfg.NewDefault().IOMMU()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Domain, st.Policy, "from", st.Source)
}
