package bootcfg_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/testutil"
)

// grubSet is a defaults file and its drop-ins as a host has them.
type grubSet struct {
	name    string
	main    string            // corpus file used as /etc/default/grub
	dropins map[string]string // name in grub.d -> corpus file
}

func corpusSets() []grubSet {
	sets := []grubSet{
		{name: "ubuntu-cloudimg+dropin", main: "ubuntu2204-cloudimg-stock-ClementCastel-4842cec.grub",
			dropins: map[string]string{"50-cloudimg-settings.cfg": "ubuntu2204-cloudimg-50-cloudimg-settings.cfg"}},
		{name: "ubuntu-aws+2dropins", main: "ubuntu2204-aws-matsuu-isucon12q.grub",
			dropins: map[string]string{"40-force-partuuid.cfg": "ubuntu2204-aws-40-force-partuuid.cfg", "50-cloudimg-settings.cfg": "ubuntu-aws-50-cloudimg-settings.cfg"}},
		{name: "debian12+kicksecure", main: "debian12-grub2-common-2.06-13+deb12u2.default-grub",
			dropins: map[string]string{"40_kernel_hardening.cfg": "kicksecure-40_kernel_hardening.cfg", "41_quiet_boot.cfg": "kicksecure-41_quiet_boot.cfg"}},
	}
	return sets
}

// installSet copies a set into a fresh etc/default and returns the main
// file's path and the paths in source order.
func installSet(t *testing.T, s grubSet) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "etc", "default")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "grub.d"), 0o755))
	main := filepath.Join(dir, "grub")
	copyFile(t, testutil.CorpusFile(t, "grub", s.main), main)
	files := []string{main}
	var names []string
	for n := range s.dropins {
		names = append(names, n)
	}
	sortStrings(names)
	for _, n := range names {
		p := filepath.Join(dir, "grub.d", n)
		copyFile(t, testutil.CorpusFile(t, "grub", s.dropins[n]), p)
		files = append(files, p)
	}
	return main, files
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o644))
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// allSets is every corpus file alone, plus the real multi-file layouts.
func allSets(t *testing.T) []grubSet {
	des, err := os.ReadDir(filepath.Join(testutil.CorpusDir(t), "grub"))
	require.NoError(t, err)
	var sets []grubSet
	for _, d := range des {
		sets = append(sets, grubSet{name: d.Name(), main: d.Name()})
	}
	return append(sets, corpusSets()...)
}

// TestCorpusValuesMatchShell: for every file and layout, every value our
// parser says is known equals what /bin/sh assigns.
func TestCorpusValuesMatchShell(t *testing.T) {
	for _, s := range allSets(t) {
		t.Run(s.name, func(t *testing.T) {
			main, files := installSet(t, s)
			cfg, err := bootcfg.LoadConfig(main)
			require.NoError(t, err)
			require.Len(t, cfg.Files, len(files))
			env := shellEnv(t, files...)
			known := 0
			for _, name := range cfg.Names() {
				v := cfg.Lookup(name)
				if !v.Known {
					require.NotNil(t, v.Dynamic, name)
					continue
				}
				known++
				assert.Equal(t, env[name], v.Value, "%s (set at %s:%d)", name, v.File, v.Line)
			}
			assert.NotEmpty(t, cfg.Names())
			t.Logf("%d of %d variables known", known, len(cfg.Names()))
		})
	}
}

// guideParams are the IOMMU parameters the Arm Neoverse Tomcat tuning
// guide writes into GRUB_CMDLINE_LINUX.
var guideParams = []bootcfg.Param{bootcfg.P("iommu.strict", "1"), bootcfg.P("iommu.passthrough", "0")}

// TestCorpusSetIOMMU is the test: set the Arm guide's parameters in
// GRUB_CMDLINE_LINUX of every corpus file and layout, write, source the
// result with /bin/sh, and check that the variable is the old value plus
// the parameters exactly once, that every other variable is unchanged, and
// that the diff is one assignment.
func TestCorpusSetIOMMU(t *testing.T) {
	for _, s := range allSets(t) {
		t.Run(s.name, func(t *testing.T) {
			main, files := installSet(t, s)
			before := shellEnv(t, files...)
			cfg, err := bootcfg.LoadConfig(main)
			require.NoError(t, err)
			plan, err := cfg.Plan(bootcfg.Edit{Var: bootcfg.CmdlineLinux, Set: guideParams})
			require.NoError(t, err)
			require.Equal(t, bootcfg.CmdlineLinux, plan.Var)

			diff := plan.Diff()
			minus, plus := diffLines(diff)
			if plan.Changed() {
				require.Len(t, plan.Changes, 1, diff)
				assert.LessOrEqual(t, minus, 1, diff)
				assert.Equal(t, 1, plus, diff)
				for _, l := range strings.Split(diff, "\n") {
					if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
						assert.Contains(t, l, bootcfg.CmdlineLinux+"=")
						assert.NotContains(t, l, bootcfg.CmdlineLinuxDefault)
					}
				}
			} else {
				assert.Empty(t, diff)
			}
			old := readAll(t, files)
			w, err := plan.Apply()
			require.NoError(t, err)
			assert.Len(t, w, len(plan.Files()))
			after := shellEnv(t, files...)

			for k, v := range before {
				if k != bootcfg.CmdlineLinux {
					assert.Equal(t, v, after[k], "variable %s changed", k)
				}
			}
			for k := range after {
				assert.True(t, hasKey(before, k) || k == bootcfg.CmdlineLinux, "new variable %s", k)
			}

			oldCl, err := bootcfg.ParseCmdline(before[bootcfg.CmdlineLinux])
			require.NoError(t, err)
			newCl, err := bootcfg.ParseCmdline(after[bootcfg.CmdlineLinux])
			require.NoError(t, err)
			for _, p := range guideParams {
				got := newCl.GetAll(p.Key)
				require.Len(t, got, 1, "%s in %q", p.Key, newCl)
				assert.Equal(t, p, got[0])
			}
			oldRest, newRest := oldCl.Clone(), newCl.Clone()
			oldRest.Remove("iommu.strict", "iommu.passthrough")
			newRest.Remove("iommu.strict", "iommu.passthrough")
			assert.Equal(t, oldRest.Params(), newRest.Params())

			// The files not in the plan are byte-identical.
			now := readAll(t, files)
			for i, f := range files {
				if !contains(plan.Files(), f) {
					assert.Equal(t, old[i], now[i], f)
				}
			}
			// A second plan is a no-op.
			cfg2, err := bootcfg.LoadConfig(main)
			require.NoError(t, err)
			plan2, err := cfg2.Plan(bootcfg.Edit{Set: guideParams})
			require.NoError(t, err)
			assert.False(t, plan2.Changed(), plan2.Diff())

			// Undo puts every file back byte for byte, and again is a no-op.
			require.NoError(t, plan.Undo())
			assert.Equal(t, old, readAll(t, files))
			require.NoError(t, plan.Undo())
			assert.Equal(t, old, readAll(t, files))
		})
	}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func readAll(t *testing.T, files []string) []string {
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// diffLines counts removed and added lines in a unified diff.
func diffLines(d string) (minus, plus int) {
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			minus++
		case strings.HasPrefix(l, "+"):
			plus++
		}
	}
	return minus, plus
}

// TestCorpusCRLFRefused converts every real grub file of the corpus to DOS
// line endings. Before, Plan put the CR inside the new value's quotes
// (GRUB_CMDLINE_LINUX="… iommu.passthrough=0\r") and the line then ended
// in LF alone; now the file is refused, naming its first CR LF line and the
// fix, and nothing is written.
func TestCorpusCRLFRefused(t *testing.T) {
	ents, err := os.ReadDir(filepath.Join(testutil.CorpusDir(t), "grub"))
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			b, err := os.ReadFile(testutil.CorpusFile(t, "grub", e.Name()))
			require.NoError(t, err)
			lf := string(b)
			require.NotContains(t, lf, "\r")
			p := filepath.Join(t.TempDir(), "grub")
			crlf := strings.ReplaceAll(lf, "\n", "\r\n")
			require.NoError(t, os.WriteFile(p, []byte(crlf), 0o644))
			cfg, err := bootcfg.LoadConfig(p)
			if err == nil {
				// Only a file without a line ending could pass.
				plan, perr := cfg.Plan(bootcfg.Edit{Set: bootcfg.IOMMUAlign(bootcfg.DefaultIOMMUStrict, bootcfg.DefaultIOMMUPassthrough)})
				if perr == nil {
					_, perr = plan.Apply()
				}
				t.Fatalf("a CR LF file was read (plan error %v); it now reads %q", perr, readString(t, p))
			}
			require.ErrorIs(t, err, bootcfg.ErrSyntax)
			assert.ErrorContains(t, err, p+":1: line ends in CR LF", "the first line is the first to end in CR LF")
			assert.ErrorContains(t, err, "dos2unix")
			assert.Equal(t, crlf, readString(t, p), "not written")
		})
		n++
	}
	require.NotZero(t, n, "no grub file in the corpus")
}

// TestPlanEmptyFileRefused: a 0-byte /etc/default/grub is not turned into
// a one-line file without a word (issue 24).
func TestPlanEmptyFileRefused(t *testing.T) {
	for _, content := range []string{"", "\n\n"} {
		p := filepath.Join(t.TempDir(), "grub")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		cfg, err := bootcfg.LoadConfig(p)
		require.NoError(t, err, "an empty file reads: nothing is set")
		_, err = cfg.Plan(bootcfg.Edit{Set: bootcfg.IOMMUAlign(bootcfg.DefaultIOMMUStrict, bootcfg.DefaultIOMMUPassthrough)})
		require.Error(t, err)
		assert.ErrorContains(t, err, p+" is empty ("+strconv.Itoa(len(content))+" bytes), so GRUB_CMDLINE_LINUX is not set anywhere: it is not written as a one-line file")
		assert.Equal(t, content, readString(t, p))
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
