package bootcfg_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/bootcfg"
)

// writeConfig writes a main file and drop-ins (name -> content) and
// returns the main file's path.
func writeConfig(t *testing.T, main string, dropins map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "grub")
	require.NoError(t, os.WriteFile(p, []byte(main), 0o644))
	if len(dropins) > 0 {
		require.NoError(t, os.Mkdir(p+".d", 0o755))
		for n, c := range dropins {
			require.NoError(t, os.WriteFile(filepath.Join(p+".d", n), []byte(c), 0o644))
		}
	}
	return p
}

func planFor(t *testing.T, path string, e bootcfg.Edit) (*bootcfg.Plan, error) {
	t.Helper()
	cfg, err := bootcfg.LoadConfig(path)
	require.NoError(t, err)
	return cfg.Plan(e)
}

func TestPlanEdits(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		edit  bootcfg.Edit
		out   string
		after string
	}{
		{
			name:  "LINUX, never LINUX_DEFAULT (the regex trap)",
			in:    "GRUB_CMDLINE_LINUX_DEFAULT=\"iommu.strict=0 quiet\"\nGRUB_CMDLINE_LINUX=\"ro\"\n",
			edit:  bootcfg.Edit{Set: guideParams},
			out:   "GRUB_CMDLINE_LINUX_DEFAULT=\"iommu.strict=0 quiet\"\nGRUB_CMDLINE_LINUX=\"ro iommu.strict=1 iommu.passthrough=0\"\n",
			after: "ro iommu.strict=1 iommu.passthrough=0",
		},
		{
			name:  "LINUX_DEFAULT when asked",
			in:    "GRUB_CMDLINE_LINUX_DEFAULT=\"iommu.strict=0 quiet\"\nGRUB_CMDLINE_LINUX=\"iommu.strict=0\"\n",
			edit:  bootcfg.Edit{Var: bootcfg.CmdlineLinuxDefault, Set: guideParams[:1]},
			out:   "GRUB_CMDLINE_LINUX_DEFAULT=\"iommu.strict=1 quiet\"\nGRUB_CMDLINE_LINUX=\"iommu.strict=0\"\n",
			after: "iommu.strict=1 quiet",
		},
		{
			name: "single quotes kept",
			in:   "GRUB_CMDLINE_LINUX='quiet' # hand-written\n",
			edit: bootcfg.Edit{Set: guideParams[:1]},
			out:  "GRUB_CMDLINE_LINUX='quiet iommu.strict=1' # hand-written\n",
		},
		{
			name: "unquoted kept when possible",
			in:   "GRUB_CMDLINE_LINUX=quiet\n",
			edit: bootcfg.Edit{Set: guideParams[:1], Remove: []string{"quiet"}},
			out:  "GRUB_CMDLINE_LINUX=iommu.strict=1\n",
		},
		{
			name: "unquoted gains double quotes for a space",
			in:   "GRUB_CMDLINE_LINUX=quiet\n",
			edit: bootcfg.Edit{Set: guideParams[:1]},
			out:  "GRUB_CMDLINE_LINUX=\"quiet iommu.strict=1\"\n",
		},
		{
			name: "mixed quoting becomes double",
			in:   "GRUB_CMDLINE_LINUX=a\"b c\"\n",
			edit: bootcfg.Edit{Set: guideParams[:1]},
			out:  "GRUB_CMDLINE_LINUX=\"ab c iommu.strict=1\"\n",
		},
		{
			name: "quoted parameter value escaped in double quotes",
			in:   "GRUB_CMDLINE_LINUX=\"\"\n",
			edit: bootcfg.Edit{Set: []bootcfg.Param{bootcfg.P("dyndbg", "file $x +p")}},
			out:  "GRUB_CMDLINE_LINUX=\"dyndbg=\\\"file \\$x +p\\\"\"\n",
		},
		{
			name: "continuation lines joined in the one assignment",
			in:   "A=1\nGRUB_CMDLINE_LINUX=\"ro \\\n  quiet\" # c\nB=2\n",
			edit: bootcfg.Edit{Set: guideParams[:1]},
			out:  "A=1\nGRUB_CMDLINE_LINUX=\"ro   quiet iommu.strict=1\" # c\nB=2\n",
		},
		{
			name: "repeated assignment: the last is edited",
			in:   "GRUB_CMDLINE_LINUX=\"a\"\nGRUB_CMDLINE_LINUX=\"b\"\n",
			edit: bootcfg.Edit{Set: guideParams[:1]},
			out:  "GRUB_CMDLINE_LINUX=\"a\"\nGRUB_CMDLINE_LINUX=\"b iommu.strict=1\"\n",
		},
		{
			name: "remove",
			in:   "GRUB_CMDLINE_LINUX=\"iommu.strict=1 quiet iommu.passthrough=0\"\n",
			edit: bootcfg.Edit{Remove: []string{"iommu.strict", "iommu.passthrough"}},
			out:  "GRUB_CMDLINE_LINUX=\"quiet\"\n",
		},
		{
			name: "not set: a line is added",
			in:   "GRUB_TIMEOUT=5",
			edit: bootcfg.Edit{Set: guideParams},
			out:  "GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX=\"iommu.strict=1 iommu.passthrough=0\"\n",
		},
		{
			name: "export kept",
			in:   "export GRUB_CMDLINE_LINUX=\"ro\"\n",
			edit: bootcfg.Edit{Set: guideParams[:1]},
			out:  "export GRUB_CMDLINE_LINUX=\"ro iommu.strict=1\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeConfig(t, tt.in, nil)
			plan, err := planFor(t, p, tt.edit)
			require.NoError(t, err)
			require.True(t, plan.Changed())
			if tt.after != "" {
				assert.Equal(t, tt.after, plan.After)
			}
			_, err = plan.Apply()
			require.NoError(t, err)
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, tt.out, string(got))
			backup, err := os.ReadFile(p + ".nettune.bak")
			require.NoError(t, err)
			assert.Equal(t, tt.in, string(backup))
			// The shell reads what the plan says.
			want := plan.After
			assert.Equal(t, want, shellEnv(t, p)[plan.Var])
		})
	}
}

func TestPlanShadowed(t *testing.T) {
	p := writeConfig(t, "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet iommu.strict=0\"\nGRUB_CMDLINE_LINUX=\"\"\n", nil)
	plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams})
	require.NoError(t, err)
	assert.Equal(t, []bootcfg.Param{bootcfg.P("iommu.strict", "0")}, plan.Shadowed, "_DEFAULT comes last on the boot line and wins")
	plan, err = planFor(t, p, bootcfg.Edit{Var: bootcfg.CmdlineLinuxDefault, Set: guideParams})
	require.NoError(t, err)
	assert.Empty(t, plan.Shadowed)
}

func TestPlanDiff(t *testing.T) {
	p := writeConfig(t, "1\n2\n3\n4\nGRUB_CMDLINE_LINUX=\"\"\n6\n7\n8\n9\n", nil)
	plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams})
	require.NoError(t, err)
	want := "--- " + p + "\n+++ " + p + "\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-GRUB_CMDLINE_LINUX=\"\"\n+GRUB_CMDLINE_LINUX=\"iommu.strict=1 iommu.passthrough=0\"\n 6\n 7\n 8\n"
	assert.Equal(t, want, plan.Diff())
	// patch(1) agrees: applying our diff with it gives the planned file.
	bin := lookPatch(t)
	dir := t.TempDir()
	cp := filepath.Join(dir, "grub")
	copyFile(t, p, cp)
	cmd := exec.Command(bin, "-s", cp)
	cmd.Stdin = strings.NewReader(plan.Diff())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	_, err = plan.Apply()
	require.NoError(t, err)
	a, err := os.ReadFile(cp)
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(a))
}

// lookPatch finds patch(1). Without it the test is skipped with a message,
// except under CI (CI set), which must install it: there a missing patch
// fails the test instead of silently dropping the comparison.
func lookPatch(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("patch")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("patch(1) not found, and CI must install it (apt-get install patch): %v", err)
		}
		t.Skipf("skipped: patch(1) not installed (apt-get install patch), so the diff is not checked against it: %v", err)
	}
	return bin
}

func TestPlanDropIns(t *testing.T) {
	t.Run("override in a drop-in is edited there", func(t *testing.T) {
		p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"main\"\n", map[string]string{"50-x.cfg": "GRUB_CMDLINE_LINUX=\"dropin\"\n"})
		plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams})
		require.NoError(t, err)
		require.Len(t, plan.Changes, 1)
		assert.Equal(t, filepath.Join(p+".d", "50-x.cfg"), plan.Changes[0].Path)
		assert.Equal(t, []string{filepath.Join(p+".d", "50-x.cfg")}, plan.Files())
	})
	t.Run("append chain: the assignment holding the key", func(t *testing.T) {
		d := filepath.Join("grub.d", "40-a.cfg")
		p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"iommu.strict=0 ro\"\n", map[string]string{"40-a.cfg": "GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX quiet\"\n"})
		_ = d
		plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams[:1]})
		require.NoError(t, err)
		require.Len(t, plan.Changes, 1)
		assert.Equal(t, p, plan.Changes[0].Path)
		assert.Equal(t, "iommu.strict=1 ro quiet", plan.After)
		// A new key goes to the end of the chain, in the drop-in.
		plan, err = planFor(t, p, bootcfg.Edit{Set: guideParams[1:]})
		require.NoError(t, err)
		require.Len(t, plan.Changes, 1)
		assert.Equal(t, filepath.Join(p+".d", "40-a.cfg"), plan.Changes[0].Path)
		assert.Equal(t, `GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX quiet iommu.passthrough=0"`, plan.Changes[0].New)
		_, err = plan.Apply()
		require.NoError(t, err)
		assert.Equal(t, "iommu.strict=0 ro quiet iommu.passthrough=0", shellEnv(t, p, filepath.Join(p+".d", "40-a.cfg"))[bootcfg.CmdlineLinux])
	})
	t.Run("glued append is kept glued", func(t *testing.T) {
		p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"a=1\"\nGRUB_CMDLINE_LINUX=\"${GRUB_CMDLINE_LINUX},2\"\nGRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX\"\n", nil)
		plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams[:1]})
		require.NoError(t, err)
		require.Len(t, plan.Changes, 1)
		assert.Equal(t, `GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX iommu.strict=1"`, plan.Changes[0].New)
		assert.Equal(t, "a=1,2 iommu.strict=1", plan.After)
		_, err = plan.Apply()
		require.NoError(t, err)
		assert.Equal(t, "a=1,2 iommu.strict=1", shellEnv(t, p)[bootcfg.CmdlineLinux])
	})
	t.Run("a parameter split across assignments is refused", func(t *testing.T) {
		p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"a=1\"\nGRUB_CMDLINE_LINUX=\"${GRUB_CMDLINE_LINUX},2\"\n", nil)
		_, err := planFor(t, p, bootcfg.Edit{Set: []bootcfg.Param{bootcfg.P("a", "5")}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "split across the assignments at "+p+":2")
	})
	t.Run("duplicates across files: two assignments, both written", func(t *testing.T) {
		p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"iommu.strict=0\"\n", map[string]string{"40-a.cfg": "GRUB_CMDLINE_LINUX=\"${GRUB_CMDLINE_LINUX} iommu.strict=0\"\n"})
		plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams[:1]})
		require.NoError(t, err)
		require.Len(t, plan.Changes, 2)
		assert.Equal(t, "iommu.strict=1", plan.After)
		_, err = plan.Apply()
		require.NoError(t, err)
		assert.Equal(t, "iommu.strict=1", shellEnv(t, p, filepath.Join(p+".d", "40-a.cfg"))[bootcfg.CmdlineLinux])
	})
	t.Run("a drop-in the shell must evaluate is refused, naming it", func(t *testing.T) {
		p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"ro\"\n", map[string]string{"60-dyn.cfg": "# x\nGRUB_CMDLINE_LINUX=\"$(cat /etc/extra) $GRUB_CMDLINE_LINUX\"\n"})
		before, _ := os.ReadFile(p)
		_, err := planFor(t, p, bootcfg.Edit{Set: guideParams})
		require.ErrorIs(t, err, bootcfg.ErrDynamic)
		var de *bootcfg.DynamicError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, filepath.Join(p+".d", "60-dyn.cfg"), de.File)
		assert.Equal(t, 2, de.Line)
		assert.Contains(t, err.Error(), "60-dyn.cfg:2")
		assert.Contains(t, err.Error(), "$(cat /etc/extra)")
		after, _ := os.ReadFile(p)
		assert.Equal(t, before, after)
	})
}

func TestPlanNoChangeNoWrite(t *testing.T) {
	p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"iommu.strict=1  iommu.passthrough=0\"\n", nil)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams})
	require.NoError(t, err)
	assert.False(t, plan.Changed())
	assert.Empty(t, plan.Diff())
	w, err := plan.Apply()
	require.NoError(t, err)
	assert.Empty(t, w)
	fi2, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, fi.ModTime(), fi2.ModTime())
	assert.NoFileExists(t, p+".nettune.bak")
}

func TestApplyKeepsModeAndFirstBackup(t *testing.T) {
	p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"\"\n", nil)
	require.NoError(t, os.Chmod(p, 0o600))
	plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams[:1]})
	require.NoError(t, err)
	w, err := plan.Apply()
	require.NoError(t, err)
	require.Len(t, w, 1)
	assert.Equal(t, p+".nettune.bak", w[0].Backup)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	// A second change keeps the admin's original as the backup.
	plan, err = planFor(t, p, bootcfg.Edit{Set: guideParams[1:]})
	require.NoError(t, err)
	w, err = plan.Apply()
	require.NoError(t, err)
	assert.Empty(t, w[0].Backup)
	b, _ := os.ReadFile(p + ".nettune.bak")
	assert.Equal(t, "GRUB_CMDLINE_LINUX=\"\"\n", string(b))
}

func TestBadInput(t *testing.T) {
	t.Run("unterminated quote", func(t *testing.T) {
		src := "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX=\"quiet\nGRUB_TIMEOUT=5\n"
		p := writeConfig(t, src, nil)
		_, err := bootcfg.LoadConfig(p)
		require.ErrorIs(t, err, bootcfg.ErrSyntax)
		assert.Contains(t, err.Error(), p+":2: unterminated double quote")
		b, _ := os.ReadFile(p)
		assert.Equal(t, src, string(b))
	})
	t.Run("unterminated quote in a drop-in", func(t *testing.T) {
		p := writeConfig(t, "X=1\n", map[string]string{"a.cfg": "Y='x\n"})
		_, err := bootcfg.LoadConfig(p)
		require.ErrorIs(t, err, bootcfg.ErrSyntax)
		assert.Contains(t, err.Error(), filepath.Join(p+".d", "a.cfg")+":1")
	})
	t.Run("parameter value with a quote or newline", func(t *testing.T) {
		p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"\"\n", nil)
		for _, v := range []string{`a"b`, "a\nb"} {
			_, err := planFor(t, p, bootcfg.Edit{Set: []bootcfg.Param{bootcfg.P("iommu.strict", v)}})
			require.ErrorIs(t, err, bootcfg.ErrInvalidParam)
			assert.Contains(t, err.Error(), "iommu.strict")
		}
	})
	t.Run("unknown variable", func(t *testing.T) {
		p := writeConfig(t, "GRUB_CMDLINE_LINUX=\"\"\n", nil)
		_, err := planFor(t, p, bootcfg.Edit{Var: "GRUB_CMDLINE_LINUX_XEN", Set: guideParams})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "want GRUB_CMDLINE_LINUX or GRUB_CMDLINE_LINUX_DEFAULT")
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := bootcfg.LoadConfig(filepath.Join(t.TempDir(), "grub"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("read-only directory, unprivileged", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("skipped: root ignores file modes; TestIntegrationReadOnlyMount covers root")
		}
		src := "GRUB_CMDLINE_LINUX=\"\"\n"
		p := writeConfig(t, src, nil)
		require.NoError(t, os.Chmod(filepath.Dir(p), 0o555))
		t.Cleanup(func() { os.Chmod(filepath.Dir(p), 0o755) })
		plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams})
		require.NoError(t, err)
		_, err = plan.Apply()
		require.ErrorIs(t, err, os.ErrPermission)
		assert.Contains(t, err.Error(), p)
		b, _ := os.ReadFile(p)
		assert.Equal(t, src, string(b))
	})
}
