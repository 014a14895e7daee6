package bootcfg_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nettune/nettune/bootcfg"
)

// seedCmdlines are real command lines: this machine's, the guide's, a
// grubby entry, a BLS entry's options.
func seedCmdlines(f *testing.F) {
	if b, err := os.ReadFile("/proc/cmdline"); err == nil {
		f.Add(string(b))
	}
	f.Add("BOOT_IMAGE=/vmlinuz-6.14.0-1011-aws root=PARTUUID=1c3f3c20 ro iommu.strict=0 iommu.passthrough=1 console=tty1 nvme_core.io_timeout=4294967295 panic=-1")
	f.Add(`ro crashkernel=1G-4G:192M,4G-64G:256M rd.lvm.lv=rhel/root rd.lvm.lv=rhel/swap rhgb quiet`)
	f.Add(`root=/dev/mapper/rhel-root ro $tuned_params noapic dyndbg="file x.c +p" -- init -s`)
	f.Add(`"a b=c d" e="f g"h`)
}

// FuzzCmdline: parsing never panics; render(parse(x)) is x; Set and
// Remove leave a command line that parses and has what was asked, and the
// other parameters in order.
func FuzzCmdline(f *testing.F) {
	seedCmdlines(f)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := bootcfg.ParseCmdline(s)
		if err != nil {
			return
		}
		if c.String() != s {
			t.Fatalf("round trip: %q -> %q", s, c.String())
		}
		others := func(c *bootcfg.Cmdline) []bootcfg.Param {
			var ps []bootcfg.Param
			for _, p := range c.Params() {
				if !bootcfg.KeyEqual(p.Key, "iommu.strict") && !bootcfg.KeyEqual(p.Key, "iommu.passthrough") {
					ps = append(ps, p)
				}
			}
			return ps
		}
		before := others(c)
		init := c.Init()
		if _, err := c.Set(bootcfg.P("iommu.strict", "1"), bootcfg.P("iommu.passthrough", "0")); err != nil {
			t.Fatal(err)
		}
		again, err := bootcfg.ParseCmdline(c.String())
		if err != nil {
			t.Fatalf("after Set, %q does not parse: %v", c.String(), err)
		}
		if len(again.GetAll("iommu.strict")) != 1 || !again.Has(bootcfg.P("iommu.strict", "1")) || !again.Has(bootcfg.P("iommu.passthrough", "0")) {
			t.Fatalf("after Set: %q", c.String())
		}
		if got := others(again); !equalParams(got, before) {
			t.Fatalf("other parameters changed: %q -> %q", before, got)
		}
		if !slices.Equal(again.Init(), init) {
			t.Fatalf("init args changed: %q -> %q", init, again.Init())
		}
		again.Remove("iommu.strict")
		if _, ok := again.Get("iommu.strict"); ok {
			t.Fatalf("after Remove: %q", again)
		}
	})
}

func equalParams(a, b []bootcfg.Param) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func seedGrubFiles(f *testing.F) {
	if des, err := os.ReadDir("../../shared/corpus/grub"); err == nil {
		for _, d := range des {
			if b, err := os.ReadFile(filepath.Join("../../shared/corpus/grub", d.Name())); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("GRUB_CMDLINE_LINUX='a' X=\"b\\\"c\"\nGRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX iommu.strict=0\"\n"))
	f.Add([]byte("GRUB_CMDLINE_LINUX=a\\\n\"b c\"'d' # x\n"))
}

// FuzzGrubEdit: parsing never panics; positions are inside the file; a
// plan never fails its own check (re-parsing the edited file gives the
// planned value and leaves every other variable alone), and planning
// again on the result changes nothing.
func FuzzGrubEdit(f *testing.F) {
	seedGrubFiles(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := bootcfg.ParseFile("f", data)
		if err != nil {
			return
		}
		for _, a := range bootcfg.Assignments(file) {
			if a.Start < 0 || a.Start > a.ValueStart || a.ValueStart > a.End || a.End > len(data) {
				t.Fatalf("bad positions %d %d %d in %d bytes", a.Start, a.ValueStart, a.End, len(data))
			}
			if !a.Unset && string(data[a.Start:a.End]) != a.Text() {
				t.Fatalf("Text %q != file bytes %q", a.Text(), data[a.Start:a.End])
			}
		}
		cfg := &bootcfg.Config{Files: []*bootcfg.File{file}}
		for _, v := range []string{bootcfg.CmdlineLinux, bootcfg.CmdlineLinuxDefault} {
			// An empty edit renders the file unchanged.
			if noop, err := cfg.Plan(bootcfg.Edit{Var: v}); err == nil && noop.Changed() {
				t.Fatalf("empty edit changes the file:\n%s", noop.Diff())
			}
			plan, err := cfg.Plan(bootcfg.Edit{Var: v, Set: []bootcfg.Param{bootcfg.P("iommu.strict", "1"), bootcfg.P("dyndbg", `a $b "c`[:6])}})
			if err != nil {
				if strings.Contains(err.Error(), "internal error") {
					t.Fatal(err)
				}
				continue
			}
			if !plan.Changed() {
				continue
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg2, err := bootcfg.LoadConfig(p)
			if err != nil {
				t.Fatal(err)
			}
			plan2, err := cfg2.Plan(bootcfg.Edit{Var: v, Set: plan.Set})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := plan2.Apply(); err != nil {
				t.Fatal(err)
			}
			cfg3, err := bootcfg.LoadConfig(p)
			if err != nil {
				t.Fatalf("edited file does not parse: %v", err)
			}
			if got := cfg3.Lookup(v); got.Value != plan.After {
				t.Fatalf("%s reads %q, planned %q", v, got.Value, plan.After)
			}
			plan3, err := cfg3.Plan(bootcfg.Edit{Var: v, Set: plan.Set})
			if err != nil || plan3.Changed() {
				t.Fatalf("second plan: %v %s", err, plan3.Diff())
			}
		}
	})
}

// shellSafe keeps only bytes that cannot make /bin/sh run or write
// anything once we also require a file with no command word: no '$',
// backquote, redirection, glob, tilde or parenthesis.
func shellSafe(b []byte) []byte {
	var out []byte
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_= \t\n'\"\\#.,:-;&|", c) >= 0:
		default:
			continue
		}
		out = append(out, c)
	}
	if len(out) > 300 {
		out = out[:300]
	}
	return out
}

// FuzzShellValue: for files of assignments only (no command word) and
// values without shell expansions, our value equals what /bin/sh assigns.
func FuzzShellValue(f *testing.F) {
	f.Add([]byte(`X="a\"b\\c" Y='d'e\ f Z=g#h # c`))
	f.Add([]byte("X=\"a \\\nb\"\nX='o''p'\nY=1 && Z=2; W=3 &\n"))
	f.Add([]byte("GRUB_CMDLINE_LINUX=\"quiet splash\"\nGRUB_CMDLINE_LINUX_DEFAULT=''\n#GRUB_X=1\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		data := shellSafe(raw)
		file, err := bootcfg.ParseFile("f", data)
		if err != nil || len(bootcfg.Commands(file)) > 0 || len(bootcfg.Assignments(file)) == 0 {
			return
		}
		cfg := &bootcfg.Config{Files: []*bootcfg.File{file}}
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `set -a; . "$1"; exec /usr/bin/env -0`, "sh", p)
		cmd.Env = []string{}
		cmd.Dir = t.TempDir()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sh failed on a file we parsed (%q): %v: %s", data, err, stderr.String())
		}
		env := map[string]string{}
		for _, kv := range strings.Split(string(out), "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
		for _, name := range cfg.Names() {
			v := cfg.Lookup(name)
			if !v.Known || name == "PWD" || name == "PATH" || name == "SHLVL" || name == "_" {
				continue
			}
			if env[name] != v.Value {
				t.Fatalf("%s: we read %q, /bin/sh assigns %q, in %q", name, v.Value, env[name], data)
			}
		}
	})
}
