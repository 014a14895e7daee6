package importer

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nettune/nettune/bootcfg"
)

// recorder is an importer's own Runner: it records the bootloader command
// instead of running it, as a dry run would.
type recorder struct{ ran [][]string }

func (r *recorder) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	r.ran = append(r.ran, append([]string{name}, args...))
	return []byte("Generating grub configuration file ...\ndone\n"), nil
}

// The Arm guide's IOMMU step on a host tree: read the defaults file, plan
// the parameters, write them, see the reboot pending, and regenerate
// through the importer's own Runner.
func TestBootcfg(t *testing.T) {
	root := writeTree(t, map[string]string{
		"etc/default/grub":     "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\nGRUB_CMDLINE_LINUX=\"\"\n",
		"proc/cmdline":         "BOOT_IMAGE=/boot/vmlinuz-6.1.0 root=UUID=1 ro quiet\n",
		"usr/sbin/update-grub": "#!/bin/sh\n",
	})
	if err := os.Chmod(filepath.Join(root, "usr/sbin/update-grub"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := bootcfg.New(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := h.DefaultGrub()
	if err != nil {
		t.Fatal(err)
	}
	set := bootcfg.IOMMUAlign(bootcfg.DefaultIOMMUStrict, bootcfg.DefaultIOMMUPassthrough)
	plan, err := cfg.Plan(bootcfg.Edit{Var: bootcfg.CmdlineLinux, Set: set})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Changed() || !strings.Contains(plan.Diff(), `+GRUB_CMDLINE_LINUX="iommu.strict=1 iommu.passthrough=0"`) {
		t.Fatalf("plan:\n%s", plan.Diff())
	}
	if _, err := plan.Apply(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "etc/default/grub"))
	if err != nil || !strings.Contains(string(b), `GRUB_CMDLINE_LINUX="iommu.strict=1 iommu.passthrough=0"`) {
		t.Fatalf("written file:\n%s %v", b, err)
	}

	again, err := h.DefaultGrub()
	if err != nil {
		t.Fatal(err)
	}
	file, err := again.BootCmdline()
	if err != nil {
		t.Fatal(err)
	}
	running, err := h.Cmdline()
	if err != nil {
		t.Fatal(err)
	}
	if p := bootcfg.PendingReboot(file, running, set, nil); !p.RebootRequired() || len(p.Set) != 2 {
		t.Fatalf("pending: %+v", p)
	}

	rec := &recorder{}
	args, out, err := h.Regenerate(context.Background(), rec, again, plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.ran) != 1 || !reflect.DeepEqual(rec.ran[0], args) || !strings.HasSuffix(args[0], "update-grub") || !strings.Contains(string(out), "done") {
		t.Fatalf("regenerate ran %q (returned %q, %q)", rec.ran, args, out)
	}

	cl, err := bootcfg.ParseCmdline(`ro quiet dyndbg="file x.c +p" iommu.strict=0`)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := cl.Set(bootcfg.P("iommu.strict", "1")); !changed || err != nil || cl.String() != `ro quiet dyndbg="file x.c +p" iommu.strict=1` {
		t.Fatalf("Cmdline.Set: %v %v %s", changed, err, cl)
	}
	st, err := bootcfg.ParseKernelLog(strings.NewReader("[    0.877401] iommu: Default domain type: Translated (set via kernel command line)\n"))
	if err != nil || st.Domain == "" {
		t.Fatalf("kernel log: %+v %v", st, err)
	}
}
