package tomcatconf

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The inputs under testdata/systemd were captured in Debian bookworm's
// systemd 252 booted with systemd-nspawn (internal/nspawn), running
// tomcat10.service.
func readSystemdTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "systemd", name))
	require.NoError(t, err)
	return b
}

func TestParseUnitShow(t *testing.T) {
	tests := []struct {
		file string
		want UnitState
	}{
		{"show-active.txt", UnitState{LoadState: "loaded", ActiveState: "active", SubState: "running", UnitFileState: "enabled", Result: "success", MainPID: 37}},
		{"show-failed.txt", UnitState{LoadState: "loaded", ActiveState: "failed", SubState: "failed", UnitFileState: "enabled", Result: "exit-code"}},
		{"show-not-found.txt", UnitState{LoadState: "not-found", ActiveState: "inactive", SubState: "dead", Result: "success"}},
		// Every property: values holding "=" and "{ ... }" do not confuse it.
		{"show-all-active.txt", UnitState{LoadState: "loaded", ActiveState: "active", SubState: "running", UnitFileState: "enabled", Result: "success", MainPID: 37}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := parseUnitShow(readSystemdTestdata(t, tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want.Active(), tt.want.ActiveState == "active")
		})
	}
	for _, bad := range []string{"MainPID=-1\n", "MainPID=x\n", "ActiveState\n", "MainPID=99999999999999999999\n"} {
		_, err := parseUnitShow([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
	st, err := parseUnitShow([]byte("ActiveState=active\r\nUnitFileState=enabled-runtime\r\n"))
	require.NoError(t, err)
	assert.True(t, st.Active())
	assert.True(t, st.Enabled())
}

func TestParseLimitsNoFile(t *testing.T) {
	for _, f := range []string{"limits-jvm-container.txt", "limits-systemd-container.txt", "limits-host-shell.txt", "limits-jvm-dropin-container.txt"} {
		soft, hard, err := parseLimitsNoFile(readSystemdTestdata(t, f))
		require.NoError(t, err, f)
		assert.Equal(t, uint64(20000), soft, f)
		assert.Equal(t, uint64(20000), hard, f)
	}
	tests := []struct {
		in         string
		soft, hard uint64
		err        string
	}{
		{in: "Max open files            1024                 524288               files     \n", soft: 1024, hard: 524288},
		{in: "Max open files            unlimited            unlimited            files     \n", soft: math.MaxUint64, hard: math.MaxUint64},
		{in: "Max processes             63476                63476                processes \n", err: "no \"Max open files\" line"},
		{in: "Max open files            1024\n", err: "want soft and hard"},
		{in: "Max open files            -1     2   files\n", err: "soft limit"},
		{in: "Max open files            1      x   files\n", err: "hard limit"},
		{in: "", err: "no \"Max open files\" line"},
	}
	for _, tt := range tests {
		soft, hard, err := parseLimitsNoFile([]byte(tt.in))
		if tt.err != "" {
			require.Error(t, err, "%q", tt.in)
			assert.Contains(t, err.Error(), tt.err)
			continue
		}
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, [2]uint64{tt.soft, tt.hard}, [2]uint64{soft, hard})
	}
}

func TestParseStatusCPUs(t *testing.T) {
	cpus, err := parseStatusCPUs(readSystemdTestdata(t, "status-jvm-container.txt"), "status")
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, cpus)
	cpus, err = parseStatusCPUs(readSystemdTestdata(t, "status-jvm-pinned-container.txt"), "status")
	require.NoError(t, err)
	assert.Equal(t, []int{0}, cpus)
	_, err = parseStatusCPUs([]byte("Name:\tjava\n"), "/proc/7/status")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/proc/7/status")
	_, err = parseStatusCPUs([]byte("Cpus_allowed_list:\t3-1\n"), "/proc/7/status")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/proc/7/status")
}

func TestCapNoFile(t *testing.T) {
	tests := []struct {
		want, manager, got uint64
		capped             bool
	}{
		{65535, 20000, 20000, true},
		{20000, 20000, 20000, false},
		{1024, 20000, 1024, false},
		{math.MaxUint64, 524288, 524288, true},
	}
	for _, tt := range tests {
		got, capped := capNoFile(tt.want, tt.manager)
		assert.Equal(t, tt.got, got, "%d under %d", tt.want, tt.manager)
		assert.Equal(t, tt.capped, capped, "%d under %d", tt.want, tt.manager)
	}
}

// renderUnitShow writes s as `systemctl show -p ...` does.
func renderUnitShow(s UnitState) string {
	return fmt.Sprintf("MainPID=%d\nResult=%s\nLoadState=%s\nActiveState=%s\nSubState=%s\nUnitFileState=%s\n",
		s.MainPID, s.Result, s.LoadState, s.ActiveState, s.SubState, s.UnitFileState)
}

// FuzzParseUnitShow: never panics; a parsed state rendered as systemctl
// prints it parses back to the same state (for values without a newline,
// which systemctl escapes).
func FuzzParseUnitShow(f *testing.F) {
	for _, name := range []string{"show-active.txt", "show-failed.txt", "show-not-found.txt", "show-all-active.txt"} {
		f.Add(readSystemdTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseUnitShow(data)
		if err != nil {
			return
		}
		again, err := parseUnitShow([]byte(renderUnitShow(st)))
		require.NoError(t, err, "re-parse of %+v", st)
		clean := func(s string) bool {
			for _, r := range s {
				if r == '\n' || r == '\r' {
					return false
				}
			}
			return true
		}
		if clean(st.LoadState) && clean(st.ActiveState) && clean(st.SubState) && clean(st.UnitFileState) && clean(st.Result) {
			assert.Equal(t, st, again)
		}
	})
}

// FuzzParseLimitsNoFile: never panics; limits it returns, written back in
// the kernel's layout, parse to the same values.
func FuzzParseLimitsNoFile(f *testing.F) {
	for _, name := range []string{"limits-jvm-container.txt", "limits-systemd-container.txt", "limits-host-shell.txt"} {
		f.Add(readSystemdTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		soft, hard, err := parseLimitsNoFile(data)
		if err != nil {
			return
		}
		show := func(n uint64) string {
			if n == math.MaxUint64 {
				return "unlimited"
			}
			return fmt.Sprint(n)
		}
		line := fmt.Sprintf("%-25s %-20s %-20s %-10s\n", "Max open files", show(soft), show(hard), "files")
		s2, h2, err := parseLimitsNoFile([]byte(line))
		require.NoError(t, err, line)
		assert.Equal(t, [2]uint64{soft, hard}, [2]uint64{s2, h2})
	})
}

// FuzzParseDropIn: any text parses or fails without panicking, and what
// parses renders back to text that parses to the same settings.
func FuzzParseDropIn(f *testing.F) {
	for _, d := range []DropIn{{}, {LimitNOFILE: 20000}, {CPUAffinity: []int{0}}, {LimitNOFILE: 65535, CPUAffinity: []int{0, 2, 3, 64}}} {
		b, err := d.Render()
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("[Service]\nLimitNOFILE=infinity\n"))
	f.Add([]byte("[Service]\nCPUAffinity=0 1\nNice=5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseDropIn(data, "nettune.conf")
		if err != nil {
			assert.Contains(t, err.Error(), "tomcatconf: drop-in nettune.conf line ")
			return
		}
		b, err := d.Render()
		require.NoError(t, err)
		again, err := parseDropIn(b, "nettune.conf")
		require.NoError(t, err, "%q", b)
		assert.Equal(t, d, again)
	})
}
