//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/internal/testutil"
)

// stubs stand in for the commands some corpus files run in command
// substitutions (lsb_release, dpkg, dpkg-query, sed on /etc/system-release,
// Kicksecure's str_replace): a directory of these scripts is put first in
// PATH, so the values do not depend on this machine. Files without command
// substitutions see the same PATH plus this directory and never call them.
var stubs = map[string]string{
	"lsb_release": "echo Debian",
	"dpkg":        "echo amd64",
	"dpkg-query":  "echo 6.1.0",
	"sed":         "echo Fedora Linux",
	"str_replace": `exec /bin/sed "s/$1/$2/g"`,
}

// sourced returns the variables /bin/sh holds after sourcing file.
func sourced(t *testing.T, file string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	for n, body := range stubs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	cmd := exec.Command("/bin/sh", "-c", `set -a; . "$1"; exec env -0`, "sh", file)
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin"}
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err)
	vars := map[string]string{}
	for _, kv := range strings.Split(string(out), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "PWD" && k != "SHLVL" && k != "PATH" && k != "_" && k != "OLDPWD" {
			vars[k] = v
		}
	}
	return vars
}

// TestCorpusCopies is the "done when": the example run with
// -strict -apply on a copy of each corpus file prints a one-assignment
// diff and changes nothing the shell reads for other variables.
func TestCorpusCopies(t *testing.T) {
	des, err := os.ReadDir(filepath.Join(testutil.CorpusDir(t), "grub"))
	require.NoError(t, err)
	require.NotEmpty(t, des)
	for _, d := range des {
		t.Run(d.Name(), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "grub")
			b, err := os.ReadFile(testutil.CorpusFile(t, "grub", d.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, 0o644))
			before := sourced(t, p)

			var out bytes.Buffer
			err = run(context.Background(), &out, options{root: "/", file: p, variable: "GRUB_CMDLINE_LINUX",
				strict: true, strictVal: "1", passVal: "0", apply: true})
			require.NoError(t, err, out.String())
			t.Log("\n" + out.String())
			minus, plus := 0, 0
			for _, l := range strings.Split(out.String(), "\n") {
				switch {
				case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
				case strings.HasPrefix(l, "-"):
					minus++
					assert.True(t, strings.HasPrefix(l, "-GRUB_CMDLINE_LINUX="), l)
				case strings.HasPrefix(l, "+"):
					plus++
					assert.True(t, strings.HasPrefix(l, "+GRUB_CMDLINE_LINUX="), l)
				}
			}
			assert.LessOrEqual(t, minus, 1)
			assert.LessOrEqual(t, plus, 1)
			assert.Contains(t, out.String(), "editing GRUB_CMDLINE_LINUX")

			after := sourced(t, p)
			for k, v := range before {
				if k != "GRUB_CMDLINE_LINUX" {
					assert.Equal(t, v, after[k], k)
				}
			}
			v := " " + after["GRUB_CMDLINE_LINUX"] + " "
			assert.Equal(t, 1, strings.Count(v, " iommu.strict=1 "), v)
			assert.Equal(t, 1, strings.Count(v, " iommu.passthrough=0 "), v)
			if plus > 0 {
				assert.Contains(t, out.String(), "reboot required")
			}
		})
	}
}

func TestNoFlagsOnlyShows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grub")
	src := "GRUB_CMDLINE_LINUX=\"iommu.strict=0\"\n"
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, options{root: "/", file: p}))
	assert.Contains(t, out.String(), `GRUB_CMDLINE_LINUX (`+p+`:1): "iommu.strict=0", IOMMU parameters: iommu.strict=0`)
	assert.Contains(t, out.String(), "running kernel: IOMMU parameters:")
	out.Reset()
	require.NoError(t, run(context.Background(), &out, options{root: "/", file: p, variable: "GRUB_CMDLINE_LINUX", strict: true, strictVal: "1", passVal: "0"}))
	assert.Contains(t, out.String(), "dry run")
	b, _ := os.ReadFile(p)
	assert.Equal(t, src, string(b), "dry run by default")
}

// cli runs the program's command line in the test process: its stdout
// and exit status.
func cli(args ...string) (string, int) {
	var out bytes.Buffer
	err := runArgs(context.Background(), args, &out)
	return out.String(), cliflag.ExitCode(err)
}

// TestCLI: -h, -version and an unknown flag as every example program
// answers them; a contradictory or pointless command line exits 2 with
// nothing printed and the file unchanged.
func TestCLI(t *testing.T) {
	testutil.CheckCLI(t, "grubiommu", cli, []string{"apply", "file", "passthrough-value", "root", "strict", "strict-value", "update", "var"})
	p := filepath.Join(t.TempDir(), "grub")
	src := "GRUB_CMDLINE_LINUX=\"iommu.strict=0\"\n"
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-apply"}, "-apply goes with -strict: give -strict too"},
		{[]string{"-var", "GRUB_CMDLINE_LINUX_DEFAULT", "-apply", "-update"}, "-var goes with -strict"},
		{[]string{"-strict-value", "0"}, "-strict-value goes with -strict"},
		{[]string{"-passthrough-value", "1"}, "-passthrough-value goes with -strict"},
		{[]string{"-strict", "-update"}, "-update goes with -apply: give -apply too"},
		{[]string{"-strict", "-apply", "extra"}, `unexpected arguments ["extra"]`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := runArgs(context.Background(), append([]string{"-file", p}, tt.args...), &out)
			assert.Equal(t, cliflag.ExitUsage, cliflag.ExitCode(err), "%v", err)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, out.String(), "nothing read or printed")
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, src, string(b))
		})
	}
	_, code := cli("-file", filepath.Join(t.TempDir(), "missing"))
	assert.Equal(t, cliflag.ExitFailure, code)
}

// TestApplyAndUpdateUnderRoot runs -strict -apply -update against a host
// root holding a harmless update-grub script: the regeneration is a real
// process, run only because -update asked for it.
func TestApplyAndUpdateUnderRoot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"etc/default", "usr/sbin", "proc"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	grub := filepath.Join(root, "etc/default/grub")
	require.NoError(t, os.WriteFile(grub, []byte("GRUB_CMDLINE_LINUX=\"rd.lvm.lv=vg/root\"\n"), 0o644))
	marker := filepath.Join(root, "ran")
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/sbin/update-grub"),
		[]byte("#!/bin/sh\necho Generating grub configuration file ...\ntouch "+marker+"\necho done\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte("ro rd.lvm.lv=vg/root\n"), 0o444))

	var out bytes.Buffer
	o := options{root: root, variable: "GRUB_CMDLINE_LINUX", strict: true, strictVal: "1", passVal: "0"}
	require.NoError(t, run(context.Background(), &out, o))
	assert.NoFileExists(t, marker, "a dry run regenerates nothing")

	o.apply, o.update = true, true
	out.Reset()
	require.NoError(t, run(context.Background(), &out, o))
	assert.FileExists(t, marker)
	assert.Contains(t, out.String(), "ran ["+root+"/usr/sbin/update-grub]")
	assert.Contains(t, out.String(), "Generating grub configuration file")
	assert.Contains(t, out.String(), "reboot required")
	b, _ := os.ReadFile(grub)
	assert.Equal(t, "GRUB_CMDLINE_LINUX=\"rd.lvm.lv=vg/root iommu.strict=1 iommu.passthrough=0\"\n", string(b))

	// Once the running kernel has the parameters, no reboot is required.
	require.NoError(t, os.Chmod(filepath.Join(root, "proc/cmdline"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte("ro rd.lvm.lv=vg/root iommu.strict=1 iommu.passthrough=0\n"), 0o444))
	out.Reset()
	o.update = false
	require.NoError(t, run(context.Background(), &out, o))
	assert.Contains(t, out.String(), "no reboot required")
}

// TestFailedUpdatePutsTheFileBack: when the regeneration fails (a real
// update-grub that exits 1), -apply -update puts the GRUB defaults back
// byte for byte and says so, and the error is the regeneration's.
func TestFailedUpdatePutsTheFileBack(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"etc/default", "usr/sbin", "proc"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	grub := filepath.Join(root, "etc/default/grub")
	src := "GRUB_CMDLINE_LINUX=\"rd.lvm.lv=vg/root\"\n"
	require.NoError(t, os.WriteFile(grub, []byte(src), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/sbin/update-grub"),
		[]byte("#!/bin/sh\necho 'error: cannot find a GRUB drive' >&2\nexit 1\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte("ro rd.lvm.lv=vg/root\n"), 0o444))

	var out bytes.Buffer
	o := options{root: root, variable: "GRUB_CMDLINE_LINUX", strict: true, strictVal: "1", passVal: "0", apply: true, update: true}
	err := run(context.Background(), &out, o)
	require.Error(t, err)
	assert.Contains(t, out.String(), "cannot find a GRUB drive")
	assert.Contains(t, out.String(), "put back "+grub+": the regeneration failed")
	b, rerr := os.ReadFile(grub)
	require.NoError(t, rerr)
	assert.Equal(t, src, string(b))
}
