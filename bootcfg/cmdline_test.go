package bootcfg_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/testutil"
)

func TestParseCmdline(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		params []bootcfg.Param
		init   []string
	}{
		{name: "empty", in: ""},
		{name: "flags and values", in: "ro quiet iommu.strict=1", params: []bootcfg.Param{{Key: "ro"}, {Key: "quiet"}, {Key: "iommu.strict", Value: "1", HasValue: true}}},
		{name: "empty value", in: "root= x", params: []bootcfg.Param{{Key: "root", HasValue: true}, {Key: "x"}}},
		{name: "quoted value with spaces", in: `dyndbg="file x.c +p" quiet`, params: []bootcfg.Param{{Key: "dyndbg", Value: "file x.c +p", HasValue: true}, {Key: "quiet"}}},
		{name: "quoted whole param", in: `"acpi_osi=Windows 2020"`, params: []bootcfg.Param{{Key: "acpi_osi", Value: "Windows 2020", HasValue: true}}},
		{name: "value with =", in: "crashkernel=1G-4G:192M,4G-64G:256M root=UUID=6bea", params: []bootcfg.Param{{Key: "crashkernel", Value: "1G-4G:192M,4G-64G:256M", HasValue: true}, {Key: "root", Value: "UUID=6bea", HasValue: true}}},
		{name: "init args", in: "ro -- --addr 0.0.0.0:2024 -s", params: []bootcfg.Param{{Key: "ro"}}, init: []string{"--addr", "0.0.0.0:2024", "-s"}},
		{name: "tabs and newline", in: "a\tb  c\n", params: []bootcfg.Param{{Key: "a"}, {Key: "b"}, {Key: "c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := bootcfg.ParseCmdline(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.params, c.Params())
			assert.Equal(t, tt.init, c.Init())
			assert.Equal(t, tt.in, c.String(), "round trip")
		})
	}
}

func TestParseCmdlineErrors(t *testing.T) {
	for _, in := range []string{`dyndbg="file x`, `a "b`} {
		_, err := bootcfg.ParseCmdline(in)
		require.ErrorIs(t, err, bootcfg.ErrSyntax, in)
		assert.Contains(t, err.Error(), "unterminated double quote")
	}
}

// TestCmdlineRealInputs parses this machine's /proc/cmdline and the
// command lines in the corpus (dmesg, grubby, a BLS entry).
func TestCmdlineRealInputs(t *testing.T) {
	host := bootcfg.NewDefault()
	cl, err := host.Cmdline()
	require.NoError(t, err)
	raw, err := os.ReadFile("/proc/cmdline")
	require.NoError(t, err)
	assert.Equal(t, string(raw), cl.String())
	assert.NotEmpty(t, cl.Params())
	if strings.Contains(string(raw), " -- ") {
		assert.NotEmpty(t, cl.Init(), "this machine's init arguments after --")
		for _, p := range cl.Params() {
			assert.NotEqual(t, "--", p.Key)
		}
	}

	b, err := os.ReadFile(testutil.CorpusFile(t, "cmd-outputs", "dmesg-iommu_arm-lp_passthrough.txt"))
	require.NoError(t, err)
	_, line, ok := strings.Cut(strings.Split(string(b), "\n")[0], "Kernel command line: ")
	require.True(t, ok)
	cl, err = bootcfg.ParseCmdline(line)
	require.NoError(t, err)
	p, ok := cl.Get("iommu.passthrough")
	require.True(t, ok)
	assert.Equal(t, "1", p.Value)
	p, _ = cl.Get("nvme_core.io_timeout")
	assert.Equal(t, "4294967295", p.Value)
	assert.Equal(t, []bootcfg.Param{bootcfg.P("iommu.strict", "0"), bootcfg.P("iommu.passthrough", "1")}, bootcfg.IOMMUParams(cl))

	b, err = os.ReadFile(testutil.CorpusFile(t, "cmd-outputs", "grubby-info-ALL_insights-core-test_GRUBBY_INFO_ALL_1.txt"))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "args="); ok {
			cl, err := bootcfg.ParseCmdline(strings.Trim(v, `"`))
			require.NoError(t, err)
			assert.Len(t, cl.GetAll("rd.lvm.lv"), 2)
			_, err = cl.Set(guideParams...)
			require.NoError(t, err)
			assert.Len(t, cl.GetAll("rd.lvm.lv"), 2, "the guide's overwrite drops rd.lvm.lv; Set keeps it")
		}
	}
}

func TestCmdlineSet(t *testing.T) {
	tests := []struct {
		name, in, want string
		set            []bootcfg.Param
		changed        bool
	}{
		{name: "append", in: "quiet splash", set: guideParams, want: "quiet splash iommu.strict=1 iommu.passthrough=0", changed: true},
		{name: "into empty", in: "", set: guideParams, want: "iommu.strict=1 iommu.passthrough=0", changed: true},
		{name: "replace keeps position", in: "a iommu.strict=0 b", set: guideParams[:1], want: "a iommu.strict=1 b", changed: true},
		{name: "replace every occurrence", in: "iommu.strict=0 a iommu.strict=0 b iommu.strict=1", set: guideParams[:1], want: "iommu.strict=1 a b", changed: true},
		{name: "dash and underscore are one key", in: "nvme-core.io_timeout=30 x", set: []bootcfg.Param{bootcfg.P("nvme_core.io_timeout", "4294967295")}, want: "nvme_core.io_timeout=4294967295 x", changed: true},
		{name: "already set is kept byte for byte", in: "a  iommu.strict=1\tb", set: guideParams[:1], want: "a  iommu.strict=1\tb"},
		{name: "before init args", in: "ro -- --flag", set: guideParams[:1], want: "ro iommu.strict=1 -- --flag", changed: true},
		{name: "only init args", in: "-- x", set: guideParams[:1], want: "iommu.strict=1 -- x", changed: true},
		{name: "init args untouched", in: "-- iommu.strict=0", set: guideParams[:1], want: "iommu.strict=1 -- iommu.strict=0", changed: true},
		{name: "value with space is quoted", in: "a", set: []bootcfg.Param{bootcfg.P("dyndbg", "file x.c +p")}, want: `a dyndbg="file x.c +p"`, changed: true},
		{name: "flag", in: "a", set: []bootcfg.Param{{Key: "nosmt"}}, want: "a nosmt", changed: true},
		{name: "first removed keeps leading space", in: " iommu.strict=0 iommu.strict=1", set: guideParams[:1], want: " iommu.strict=1", changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := bootcfg.ParseCmdline(tt.in)
			require.NoError(t, err)
			changed, err := c.Set(tt.set...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.String())
			assert.Equal(t, tt.changed, changed)
			for _, p := range tt.set {
				assert.True(t, c.Has(p))
			}
		})
	}
}

func TestCmdlineRemoveGet(t *testing.T) {
	c, err := bootcfg.ParseCmdline("iommu.strict=0 quiet iommu.strict=1 splash -- iommu.strict=2")
	require.NoError(t, err)
	p, ok := c.Get("iommu.strict")
	require.True(t, ok)
	assert.Equal(t, "1", p.Value, "the last occurrence wins")
	assert.Len(t, c.GetAll("iommu.strict"), 2)
	assert.Equal(t, 2, c.Remove("iommu.strict"))
	assert.Equal(t, "quiet splash -- iommu.strict=2", c.String())
	assert.Equal(t, 0, c.Remove("absent"))
	_, ok = c.Get("iommu.strict")
	assert.False(t, ok)
	assert.Equal(t, 1, c.Remove("quiet"))
	assert.Equal(t, "splash -- iommu.strict=2", c.String())
}

func TestParamValidate(t *testing.T) {
	bad := []bootcfg.Param{
		{Key: ""},
		{Key: "--"},
		{Key: "a b"},
		{Key: `a"b`},
		bootcfg.P("k", `say "hi"`),
		bootcfg.P("k", "two\nlines"),
		bootcfg.P("k", "nul\x00"),
	}
	for _, p := range bad {
		err := p.Validate()
		require.ErrorIs(t, err, bootcfg.ErrInvalidParam, "%#v", p)
		c, _ := bootcfg.ParseCmdline("quiet")
		_, err = c.Set(bootcfg.P("ok", "1"), p)
		require.ErrorIs(t, err, bootcfg.ErrInvalidParam)
		assert.Equal(t, "quiet", c.String(), "nothing set when one parameter is invalid")
	}
	err := bootcfg.P("iommu.strict", `1"`).Validate()
	assert.Contains(t, err.Error(), `iommu.strict: value "1\"" contains a double quote`)
}

func TestParseParams(t *testing.T) {
	ps, err := bootcfg.ParseParams("iommu.strict=1 iommu.passthrough=0")
	require.NoError(t, err)
	assert.Equal(t, guideParams, ps)
	_, err = bootcfg.ParseParams("a -- b")
	require.ErrorIs(t, err, bootcfg.ErrInvalidParam)
	p, err := bootcfg.ParseParam(`acpi_osi="Windows 2020"`)
	require.NoError(t, err)
	assert.Equal(t, bootcfg.P("acpi_osi", "Windows 2020"), p)
	assert.Equal(t, `acpi_osi="Windows 2020"`, p.String())
	_, err = bootcfg.ParseParam("a b")
	require.ErrorIs(t, err, bootcfg.ErrInvalidParam)
}

func TestKeyEqual(t *testing.T) {
	assert.True(t, bootcfg.KeyEqual("nvme_core.io_timeout", "nvme-core.io-timeout"))
	assert.False(t, bootcfg.KeyEqual("iommu.strict", "iommu.stric"))
	assert.False(t, bootcfg.KeyEqual("iommu.strict", "iommu_strict"))
}

func TestCmdlineZeroValue(t *testing.T) {
	var c bootcfg.Cmdline
	assert.Empty(t, c.Params())
	assert.Nil(t, c.Init())
	changed, err := c.Set(guideParams...)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, "iommu.strict=1 iommu.passthrough=0", c.String())
	assert.Nil(t, c.Init())
	assert.Equal(t, 1, c.Remove("iommu.strict"))
	assert.Equal(t, "iommu.passthrough=0", c.String())
}
