package bootcfg_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/testutil"
)

func TestParseKernelLogCorpus(t *testing.T) {
	tests := []struct {
		file   string
		domain bootcfg.DomainType
		policy bootcfg.FlushPolicy
		dset   bool
		pset   bool
	}{
		{"dmesg-iommu_arm-lp_strict.txt", bootcfg.DomainTranslated, bootcfg.FlushStrict, true, true},
		{"dmesg-iommu_arm-lp_passthrough.txt", bootcfg.DomainPassthrough, bootcfg.FlushUnknown, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(testutil.CorpusFile(t, "cmd-outputs", tt.file))
			require.NoError(t, err)
			defer f.Close()
			st, err := bootcfg.ParseKernelLog(f)
			require.NoError(t, err)
			assert.Equal(t, tt.domain, st.Domain)
			assert.Equal(t, tt.policy, st.Policy)
			assert.Equal(t, tt.dset, st.DomainFromCmdline)
			assert.Equal(t, tt.pset, st.PolicyFromCmdline)
			assert.Equal(t, bootcfg.SourceKernelLog, st.Source)
			assert.NotEmpty(t, st.Lines)
		})
	}
}

func TestParseKernelLogWordings(t *testing.T) {
	tests := []struct {
		name   string
		log    string
		domain bootcfg.DomainType
		policy bootcfg.FlushPolicy
		dset   bool
		pset   bool
	}{
		{name: "5.2-5.4: no cmdline note", log: "[    0.3] iommu: Default domain type: Translated\n", domain: bootcfg.DomainTranslated},
		{name: "5.5-6.x: trailing space when not set", log: "[    0.3] iommu: Default domain type: Passthrough \n", domain: bootcfg.DomainPassthrough},
		{name: "newer: lazy", log: "[    0.291380] iommu: Default domain type: Translated\n[    0.291383] iommu: DMA domain TLB invalidation policy: lazy mode\n", domain: bootcfg.DomainTranslated, policy: bootcfg.FlushLazy},
		{name: "newer: strict set", log: "iommu: DMA domain TLB invalidation policy: strict mode (set via kernel command line)\n", policy: bootcfg.FlushStrict, pset: true},
		{name: "journalctl -k", log: "Dec 02 10:00:00 host kernel: iommu: Default domain type: Translated (set via kernel command line)\n", domain: bootcfg.DomainTranslated, dset: true},
		{name: "kmsg record", log: "6,120,291380,-;iommu: Default domain type: Translated\n", domain: bootcfg.DomainTranslated},
		{name: "old intel strict", log: "[    0.0] DMAR: Disable batched IOTLB flush\n", policy: bootcfg.FlushStrict, pset: true},
		{name: "old amd lazy", log: "[    0.5] AMD-Vi: Lazy IO/TLB flushing enabled\n", policy: bootcfg.FlushLazy},
		{name: "old amd strict", log: "[    0.5] AMD-Vi: IO/TLB flush on unmap enabled\n", policy: bootcfg.FlushStrict},
		{name: "old amd passthrough", log: "[    0.5] AMD-Vi: Initialized for Passthrough Mode\n", domain: bootcfg.DomainPassthrough},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := bootcfg.ParseKernelLog(strings.NewReader(tt.log))
			require.NoError(t, err)
			assert.Equal(t, tt.domain, st.Domain)
			assert.Equal(t, tt.policy, st.Policy)
			assert.Equal(t, tt.dset, st.DomainFromCmdline)
			assert.Equal(t, tt.pset, st.PolicyFromCmdline)
		})
	}
	_, err := bootcfg.ParseKernelLog(strings.NewReader("[ 0.1] Linux version 6.1\n[ 0.2] DMAR: Disabling batched IOTLB flush on Ironlake\n"))
	require.ErrorIs(t, err, bootcfg.ErrNoIOMMUState, "the Ironlake quirk line is not the strict-mode line")
}

func TestIOMMUFromGroupTypes(t *testing.T) {
	tests := []struct {
		types  []string
		domain bootcfg.DomainType
		policy bootcfg.FlushPolicy
	}{
		{[]string{"DMA", "DMA", "unmanaged"}, bootcfg.DomainTranslated, bootcfg.FlushStrict},
		{[]string{"DMA-FQ", "DMA-FQ", "DMA"}, bootcfg.DomainTranslated, bootcfg.FlushLazy},
		{[]string{"identity", "identity"}, bootcfg.DomainPassthrough, bootcfg.FlushUnknown},
		{[]string{"unmanaged"}, bootcfg.DomainUnmanaged, bootcfg.FlushUnknown},
	}
	for _, tt := range tests {
		st, err := bootcfg.IOMMUFromGroupTypes(tt.types)
		require.NoError(t, err)
		assert.Equal(t, tt.domain, st.Domain, "%v", tt.types)
		assert.Equal(t, tt.policy, st.Policy, "%v", tt.types)
		assert.Equal(t, bootcfg.SourceSysfs, st.Source)
	}
	_, err := bootcfg.IOMMUFromGroupTypes(nil)
	require.ErrorIs(t, err, bootcfg.ErrNoIOMMUState)
}

// fixtureHost builds a root with /proc/cmdline, iommu groups and a
// kernel log file standing for /dev/kmsg.
func fixtureHost(t *testing.T, cmdline string, groups []string, kmsg string) *bootcfg.Host {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "cmdline"), []byte(cmdline+"\n"), 0o444))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys", "kernel", "iommu_groups"), 0o755))
	for i, g := range groups {
		d := filepath.Join(root, "sys", "kernel", "iommu_groups", string(rune('0'+i)))
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "type"), []byte(g+"\n"), 0o444))
	}
	if kmsg != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "dev", "kmsg"), []byte(kmsg), 0o444))
	}
	h, err := bootcfg.New(root)
	require.NoError(t, err)
	return h
}

func TestHostIOMMUSources(t *testing.T) {
	// Sysfs wins when it has groups; the command line says what was set.
	h := fixtureHost(t, "ro iommu.strict=1 iommu.passthrough=0", []string{"DMA", "DMA", "unmanaged"}, "6,1,877401,-;iommu: Default domain type: Passthrough\n")
	st, err := h.IOMMU()
	require.NoError(t, err)
	assert.Equal(t, bootcfg.SourceSysfs, st.Source)
	assert.Equal(t, bootcfg.DomainTranslated, st.Domain)
	assert.Equal(t, bootcfg.FlushStrict, st.Policy)
	assert.True(t, st.DomainFromCmdline)
	assert.True(t, st.PolicyFromCmdline)
	assert.Equal(t, []bootcfg.GroupTypes{{Type: "DMA", Groups: 2}, {Type: "unmanaged", Groups: 1}}, st.Groups)

	// No groups (this machine's case): the kernel log, in kmsg records.
	h = fixtureHost(t, "ro", nil, "6,1,877401,-;iommu: Default domain type: Translated (set via kernel command line)\n SUBSYSTEM=x\n6,2,877404,-;iommu: DMA domain TLB invalidation policy: strict mode (set via kernel command line)\n")
	st, err = h.IOMMU()
	require.NoError(t, err)
	assert.Equal(t, bootcfg.SourceKernelLog, st.Source)
	assert.Equal(t, bootcfg.DomainTranslated, st.Domain)
	assert.Equal(t, bootcfg.FlushStrict, st.Policy)
	assert.Equal(t, []string{"[    0.877401] iommu: Default domain type: Translated (set via kernel command line)", "[    0.877404] iommu: DMA domain TLB invalidation policy: strict mode (set via kernel command line)"}, st.Lines)
	assert.Equal(t, "domain Translated (set via kernel command line), flush policy strict (set via kernel command line) [from kernel log]", st.String())

	// Neither.
	h = fixtureHost(t, "ro", nil, "")
	_, err = h.IOMMU()
	require.ErrorIs(t, err, os.ErrNotExist)
	h = fixtureHost(t, "ro", nil, "6,1,1,-;Linux version 6.1\n")
	_, err = h.IOMMU()
	require.ErrorIs(t, err, bootcfg.ErrNoIOMMUState)
}

// TestIntegrationIOMMUThisMachine reads this machine's real
// /sys/kernel/iommu_groups and kernel log, and compares with dmesg(1).
func TestIntegrationIOMMUThisMachine(t *testing.T) {
	testutil.RequireRoot(t)
	h := bootcfg.NewDefault()
	types, err := bootcfg.IOMMUGroupTypes(h)
	require.NoError(t, err)
	st, err := h.IOMMU()
	if errors.Is(err, os.ErrPermission) || errors.Is(err, os.ErrNotExist) {
		t.Skipf("skipped: no IOMMU groups, and the kernel log cannot be read here: %v", err)
	}
	if errors.Is(err, bootcfg.ErrNoIOMMUState) {
		t.Skipf("skipped: no IOMMU groups and no IOMMU lines in this kernel's log: %v", err)
	}
	require.NoError(t, err)
	t.Logf("groups: %v; state: %s; lines: %q", types, st, st.Lines)
	if len(types) > 0 {
		assert.Equal(t, bootcfg.SourceSysfs, st.Source)
		return
	}
	assert.Equal(t, bootcfg.SourceKernelLog, st.Source, "no groups here: the state must come from the kernel log")
	// dmesg(1) prints the same lines.
	out, err := exec.Command("dmesg").Output()
	if err != nil {
		t.Skipf("skipped: dmesg: %v", err)
	}
	want, err := bootcfg.ParseKernelLog(strings.NewReader(string(out)))
	require.NoError(t, err)
	assert.Equal(t, want.Domain, st.Domain)
	assert.Equal(t, want.Policy, st.Policy)
	assert.Equal(t, want.DomainFromCmdline, st.DomainFromCmdline)
	assert.Equal(t, want.PolicyFromCmdline, st.PolicyFromCmdline)
	cl, err := h.Cmdline()
	require.NoError(t, err)
	if _, ok := cl.Get("iommu.strict"); !ok {
		assert.False(t, st.PolicyFromCmdline, "no iommu.strict on /proc/cmdline")
	}
}

func TestKernelLogThisMachine(t *testing.T) {
	testutil.RequireRoot(t)
	log, err := bootcfg.KernelLog(bootcfg.NewDefault())
	if errors.Is(err, os.ErrPermission) || errors.Is(err, os.ErrNotExist) {
		t.Skipf("skipped: /dev/kmsg cannot be read here: %v", err)
	}
	require.NoError(t, err)
	require.NotEmpty(t, log)
	assert.True(t, strings.HasPrefix(log, "["), "dmesg-style lines")
}

func TestPendingReboot(t *testing.T) {
	file, _ := bootcfg.ParseCmdline("ro quiet iommu.strict=1 iommu.passthrough=0")
	running, _ := bootcfg.ParseCmdline("ro quiet iommu.strict=0 nosmt\n")
	p := bootcfg.PendingReboot(file, running, guideParams, []string{"nosmt", "splash"})
	assert.True(t, p.RebootRequired())
	assert.Equal(t, guideParams, p.Set)
	assert.Equal(t, []string{"nosmt"}, p.Removed)

	running, _ = bootcfg.ParseCmdline("BOOT_IMAGE=/vmlinuz ro quiet iommu.strict=1 iommu.passthrough=0\n")
	assert.False(t, bootcfg.PendingReboot(file, running, guideParams, nil).RebootRequired())
	// Desired but not yet in the file: edit first, nothing pending yet.
	empty, _ := bootcfg.ParseCmdline("")
	assert.False(t, bootcfg.PendingReboot(empty, empty, guideParams, nil).RebootRequired())
}

func TestIOMMUAlign(t *testing.T) {
	ps := bootcfg.IOMMUAlign(bootcfg.DefaultIOMMUStrict, bootcfg.DefaultIOMMUPassthrough)
	assert.Equal(t, guideParams, ps)
	cl, err := bootcfg.ParseCmdline("ro")
	require.NoError(t, err)
	_, err = cl.Set(ps...)
	require.NoError(t, err)
	assert.Equal(t, "ro iommu.strict=1 iommu.passthrough=0", cl.String(), "the Arm guide's GRUB_CMDLINE_LINUX values, added")
}
