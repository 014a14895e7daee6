//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
)

// vethNS creates a network namespace with a veth pair (8 RX and 8 TX
// queues) and an address on ntv0; it is deleted in t.Cleanup.
func vethNS(t *testing.T) (name, path string) {
	t.Helper()
	testutil.RequireHostTests(t)
	for _, tool := range []string{"ip", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s not installed", tool)
		}
	}
	name = fmt.Sprintf("nettune-channels-%d", os.Getpid())
	ip := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %s: %s", strings.Join(args, " "), out)
	}
	ip("netns", "add", name)
	t.Cleanup(func() { ip("netns", "del", name) })
	ip("-n", name, "link", "add", "ntv0", "numtxqueues", "8", "numrxqueues", "8",
		"type", "veth", "peer", "name", "ntv1", "numtxqueues", "8", "numrxqueues", "8")
	ip("-n", name, "addr", "add", "10.213.9.1/24", "dev", "ntv0")
	return name, "/run/netns/" + name
}

func ethtoolL(t *testing.T, ns string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "ethtool", "-l", "ntv0").Output()
	require.NoError(t, err)
	return string(out)
}

func runOut(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(args, &out, &errb)
	return out.String(), errb.String(), err
}

// TestIntegrationChannelsVeth: -l on a veth in a namespace prints what
// Debian's ethtool -l prints for it; -L is a dry run until -apply.
func TestIntegrationChannelsVeth(t *testing.T) {
	ns, path := vethNS(t)

	out, _, err := runOut(t, "-netns", path, "-l", "ntv0")
	require.NoError(t, err)
	assert.Equal(t, ethtoolL(t, ns), out)

	out, stderr, err := runOut(t, "-netns", path, "-for-ip", "10.213.9.1", "-l")
	require.NoError(t, err)
	assert.Equal(t, ethtoolL(t, ns), out)
	assert.Contains(t, stderr, `ntv0 holds 10.213.9.1 (driver "veth"`)

	before := ethtoolL(t, ns)
	out, _, err = runOut(t, "-netns", path, "-L", "ntv0", "rx", "2", "tx", "2")
	require.NoError(t, err)
	assert.Equal(t, "dry run: rx 2 tx 2 on ntv0: rx 8 -> 2, tx 8 -> 2 (pass -apply to change it)\n", out)
	assert.Equal(t, before, ethtoolL(t, ns), "a dry run changes nothing")

	out, _, err = runOut(t, "-netns", path, "-L", "ntv0", "rx", "2", "tx", "2", "-apply")
	require.NoError(t, err)
	first, rest, _ := strings.Cut(out, "\n")
	assert.Equal(t, "ntv0: rx 8 -> 2, tx 8 -> 2; to undo: channels -netns "+path+" -L ntv0 rx 8 tx 8 -apply", first)
	assert.Equal(t, ethtoolL(t, ns), rest, "prints the device as ethtool -l now shows it")

	_, _, err = runOut(t, "-netns", path, "-L", "ntv0", "rx", "8", "tx", "8", "-apply")
	require.NoError(t, err)
	assert.Equal(t, before, ethtoolL(t, ns))

	_, _, err = runOut(t, "-netns", path, "-L", "ntv0", "combined", "8")
	require.ErrorIs(t, err, nic.ErrExceedsMaximum)
	assert.EqualError(t, err, "nic: set channels combined 8 on ntv0: requested channel count exceeds maximum: combined 8, maximum 0 (the device has no combined channels; set rx and tx instead)")
}

// cli runs the program's run function: its stdout and exit status.
func cli(args ...string) (string, int) {
	var out bytes.Buffer
	err := run(args, &out, io.Discard)
	return out.String(), cliflag.ExitCode(err)
}

// TestCLI: -h, -version and an unknown flag as every example program
// answers them; a command line refused exits 2 before anything runs, a
// failure 1.
func TestCLI(t *testing.T) {
	testutil.CheckCLI(t, "channels", cli, []string{"L", "apply", "for-ip", "irqs", "l", "netns", "root", "spread"})
	for _, tt := range []struct {
		args []string
		code int
		want string // in the error
		is   error
	}{
		{[]string{"-l"}, cliflag.ExitUsage, "name an interface, or pass -for-ip ADDR", nil},
		{[]string{"-l", "-L", "lo", "combined", "1"}, cliflag.ExitUsage, "-l and -L: give one of them", nil},
		{[]string{"-irqs", "-spread", "0", "lo"}, cliflag.ExitUsage, "-irqs and -spread: give one of them", nil},
		{[]string{"-apply", "lo"}, cliflag.ExitUsage, "-apply makes the change of -L or -spread", nil},
		{[]string{"-irqs", "lo", "-apply"}, cliflag.ExitUsage, "-apply makes the change of -L or -spread", nil},
		{[]string{"-for-ip", "127.0.0.1", "lo"}, cliflag.ExitUsage, "unexpected arguments: one interface", nil},
		{[]string{"-l", "lo", "eth0"}, cliflag.ExitUsage, "unexpected arguments: one interface", nil},
		{[]string{"-L", "lo", "queues", "8"}, cliflag.ExitUsage, "", nic.ErrSyntax},
		{[]string{"-for-ip", "not-an-ip", "-l"}, cliflag.ExitUsage, `-for-ip "not-an-ip": want an IPv4 or IPv6 address`, nil},
		{[]string{"-spread", "7-1", "lo"}, cliflag.ExitUsage, "", nic.ErrSyntax},
		{[]string{"-for-ip", "192.0.2.254", "-l"}, cliflag.ExitFailure, "", nic.ErrNoInterface},
		{[]string{"-l", "lo"}, cliflag.ExitFailure, "", nic.ErrNotSupported},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := run(tt.args, &out, io.Discard)
			assert.Equal(t, tt.code, cliflag.ExitCode(err), "%v", err)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.Contains(t, err.Error(), tt.want)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Empty(t, out.String())
		})
	}
}

// TestDeps keeps the example to the standard library, this module and the
// chosen dependencies.
func TestDeps(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: go tool not in PATH")
	}
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && os.Geteuid() != 0 {
		// A user without a writable Go cache (nobody) cannot run go list.
		t.Skipf("skipped: go list: %v: %s", err, stderr.String())
	}
	require.NoError(t, err, stderr.String())
	for _, p := range strings.Fields(string(out)) {
		ok := strings.HasPrefix(p, "github.com/nettune/nettune") ||
			strings.HasPrefix(p, "github.com/safchain/ethtool") ||
			strings.HasPrefix(p, "golang.org/x/sys/")
		assert.True(t, ok, "unexpected dependency %s", p)
	}
}
