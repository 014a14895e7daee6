package persist_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// Every tuned.conf under testdata/tuned (profiles shipped by Debian
// bookworm's tuned 2.20, and odd.conf) reads as tuned's own parser reads
// it: the .json beside it was written by golden.py with Python's
// configparser set up as tuned's profile loader sets it up.
func TestParseTunedConfMatchesTuned(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "tuned", "*.conf"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 10)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			golden, err := os.ReadFile(strings.TrimSuffix(f, ".conf") + ".json")
			require.NoError(t, err)
			var want [][]json.RawMessage
			require.NoError(t, json.Unmarshal(golden, &want))

			c, err := persist.ParseTunedConf(data, f)
			require.NoError(t, err)
			require.Len(t, c.Sections, len(want))
			for i, w := range want {
				var name string
				opts := [][2]string{}
				require.NoError(t, json.Unmarshal(w[0], &name))
				require.NoError(t, json.Unmarshal(w[1], &opts))
				assert.Equal(t, name, c.Sections[i].Name)
				got := [][2]string{}
				for _, o := range c.Sections[i].Options {
					got = append(got, [2]string{o.Key, o.Value})
				}
				assert.Equal(t, opts, got, "section [%s]", name)
			}

			// What we render reads back the same.
			out, err := c.Render()
			require.NoError(t, err)
			again, err := persist.ParseTunedConf(out, "rendered")
			require.NoError(t, err)
			assert.Equal(t, c, again)
		})
	}
}

func TestParseTunedConfErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"option before a section", "a=1\n[main]\n", "line 1: \"a=1\" comes before any [section]"},
		{"no delimiter", "[main]\njunk\n", "line 2: \"junk\" is not key=value"},
		{"empty key", "[main]\n=1\n", "line 2: \"=1\" is not key=value"},
		{"empty section name", "[]\n", "line 1: \"[]\" comes before any [section]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := persist.ParseTunedConf([]byte(tc.in), "x/tuned.conf")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "x/tuned.conf "+tc.want)
		})
	}
}

func TestTunedConfRenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		sec  persist.TunedSection
	}{
		{"key with =", persist.TunedSection{Name: "sysctl", Options: []persist.Setting{{Key: "a=b", Value: "1"}}}},
		{"value with an inline comment", persist.TunedSection{Name: "sysctl", Options: []persist.Setting{{Key: "a", Value: "1 # no"}}}},
		{"value with trailing space", persist.TunedSection{Name: "sysctl", Options: []persist.Setting{{Key: "a", Value: "1 "}}}},
		{"empty line ending a value", persist.TunedSection{Name: "sysctl", Options: []persist.Setting{{Key: "a", Value: "1\n2\n"}}}},
		{"comment line in a value", persist.TunedSection{Name: "sysctl", Options: []persist.Setting{{Key: "a", Value: "1\n#2"}}}},
		{"key starting with [", persist.TunedSection{Name: "sysctl", Options: []persist.Setting{{Key: "[a]", Value: "1"}}}},
		{"section name with ]", persist.TunedSection{Name: "a]b"}},
		{"empty section name", persist.TunedSection{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := persist.TunedConf{Sections: []persist.TunedSection{tc.sec}}.Render()
			assert.Error(t, err)
		})
	}
	// A value may start with '#' and hold '#' not after a space, and span lines.
	out, err := persist.TunedConf{Sections: []persist.TunedSection{{Name: "x", Options: []persist.Setting{
		{Key: "a", Value: "#1"}, {Key: "b", Value: "x#y"}, {Key: "c", Value: "one\ntwo"}}}}}.Render()
	require.NoError(t, err)
	assert.Equal(t, "[x]\na=#1\nb=x#y\nc=one\n\ttwo\n", string(out))
}

// The profile nettune writes for the Arm Neoverse Tomcat guide, byte for
// byte, and read back.
func TestTunedProfileRender(t *testing.T) {
	cpus, err := tuning.ParseCPUList("8-9")
	require.NoError(t, err)
	net, err := persist.ParseTunedConf([]byte("[net]\ndevices=eth0\nchannels=combined 8\n"), "nic")
	require.NoError(t, err)
	p := persist.TunedProfile{
		Name:    "nettune-tomcat",
		Summary: "Tomcat tuned by nettune",
		Include: []string{"throughput-performance"},
		Sysfs:   persist.OfflineCPUs(cpus),
		Sysctl:  []persist.Setting{{Key: "net.ipv4.tcp_max_tw_buckets", Value: "450000"}},
		Cmdline: "iommu.strict=1 iommu.passthrough=0",
		Extra:   net,
	}
	out, err := p.Render()
	require.NoError(t, err)
	assert.Equal(t, `# Written by nettune (tuning.TunedProfile); `+"`tuned-adm profile`"+` another
# profile and remove this directory to undo it.
[main]
summary=Tomcat tuned by nettune
include=throughput-performance

[sysfs]
/sys/devices/system/cpu/cpu8/online=0
/sys/devices/system/cpu/cpu9/online=0

[sysctl]
net.ipv4.tcp_max_tw_buckets=450000

[bootloader]
cmdline=iommu.strict=1 iommu.passthrough=0

[net]
devices=eth0
channels=combined 8
`, string(out))
	back, err := persist.ParseTunedProfile("nettune-tomcat", out)
	require.NoError(t, err)
	assert.Equal(t, p, back)

	p.Name = "../etc"
	_, err = p.Render()
	assert.ErrorContains(t, err, `tuned profile name "../etc"`)
	p.Name, p.Include = "ok", []string{"a b"}
	_, err = p.Render()
	assert.ErrorContains(t, err, `include "a b"`)
}

// A shipped profile reads into the typed fields; include= splits at ',' and
// ';' as tuned's loader does.
func TestParseTunedProfileShipped(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "tuned", "network-latency.conf"))
	require.NoError(t, err)
	p, err := persist.ParseTunedProfile("network-latency", data)
	require.NoError(t, err)
	assert.Equal(t, []string{"latency-performance"}, p.Include)
	assert.NotEmpty(t, p.Sysctl)
	v, ok := persist.TunedConf{Sections: []persist.TunedSection{{Name: "sysctl", Options: p.Sysctl}}}.Get("sysctl", "net.core.busy_read")
	assert.True(t, ok)
	assert.Equal(t, "50", v)

	p, err = persist.ParseTunedProfile("x", []byte("[main]\ninclude=a, b;c\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, p.Include)
}

func TestValidTunedName(t *testing.T) {
	for name, want := range map[string]bool{
		"nettune-tomcat": true, "a.b_c-1": true, "": false, ".": false, "..": false, "a/b": false, "a b": false, "é": false,
	} {
		assert.Equal(t, want, persist.ValidTunedName(name), name)
	}
}

func TestParseTunedAdmActive(t *testing.T) {
	for _, tc := range []struct {
		out     string
		want    []string
		running bool
		err     bool
	}{
		{"Current active profile: nettune-tomcat\n", []string{"nettune-tomcat"}, true, false},
		{"Current active profile: balanced nettune\n", []string{"balanced", "nettune"}, true, false},
		{"No current active profile.\n", nil, true, false},
		{"It seems that tuned daemon is not running, preset profile is not activated.\nPreset profile: virtual-guest\n", []string{"virtual-guest"}, false, false},
		{"Cannot talk to TuneD daemon via DBus.\n", nil, false, true},
	} {
		got, running, err := persist.ParseTunedAdmActive([]byte(tc.out))
		if tc.err {
			assert.Error(t, err, tc.out)
			continue
		}
		require.NoError(t, err, tc.out)
		assert.Equal(t, tc.want, got, tc.out)
		assert.Equal(t, tc.running, running, tc.out)
	}
}

func TestSysctlConfRender(t *testing.T) {
	out, err := persist.SysctlConf{File: "90-nettune.conf", Settings: []persist.Setting{
		{Key: "net.ipv4.tcp_max_tw_buckets", Value: "450000"}, {Key: "net/core/somaxconn", Value: "4096"}}}.Render()
	require.NoError(t, err)
	assert.Equal(t, "# Written by nettune (tuning.SysctlConf); remove this file to undo it.\nnet.ipv4.tcp_max_tw_buckets = 450000\nnet/core/somaxconn = 4096\n", string(out))
	for _, bad := range []persist.SysctlConf{
		{File: "nettune.conf"}, {File: "90-a/b.conf"}, {File: "90-x.txt"},
		{File: "90-x.conf", Settings: []persist.Setting{{Key: "../../etc/passwd", Value: "1"}}},
		{File: "90-x.conf", Settings: []persist.Setting{{Key: "kernel.x", Value: "1\nkernel.y = 2"}}},
	} {
		_, err := bad.Render()
		assert.Error(t, err, "%+v", bad)
	}
}

func TestCPUOnlineUnitRender(t *testing.T) {
	cpus, err := tuning.ParseCPUList("2-3")
	require.NoError(t, err)
	out, err := persist.CPUOnlineUnit{Offline: cpus}.Render()
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "Type=oneshot\nRemainAfterExit=yes\n")
	assert.Contains(t, s, "ExecStart=/bin/sh -c 'echo 0 > /sys/devices/system/cpu/cpu2/online'\nExecStart=/bin/sh -c 'echo 0 > /sys/devices/system/cpu/cpu3/online'\n")
	assert.Contains(t, s, "ExecStop=/bin/sh -c 'echo 1 > /sys/devices/system/cpu/cpu3/online'\n")
	assert.Contains(t, s, "[Install]\nWantedBy=sysinit.target\n")
	_, err = persist.CPUOnlineUnit{}.Render()
	assert.Error(t, err, "no CPU")
	_, err = persist.CPUOnlineUnit{Name: "x.timer", Offline: cpus}.Render()
	assert.Error(t, err)
}
