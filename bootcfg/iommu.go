package bootcfg

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/nettune/nettune/internal/hostfs"
)

// DomainType is the IOMMU's default DMA domain type.
type DomainType string

// Domain types, as the kernel log names them. "" is unknown.
const (
	DomainTranslated  DomainType = "Translated"  // DMA goes through IOMMU page tables
	DomainPassthrough DomainType = "Passthrough" // identity mapping (iommu.passthrough=1)
	DomainBlocked     DomainType = "Blocked"
	DomainUnmanaged   DomainType = "Unmanaged"
)

const domainUnknown DomainType = ""

// FlushPolicy is the IOTLB invalidation policy of translated domains.
type FlushPolicy string

// Flush policies. "" is unknown, or none (passthrough).
const (
	FlushStrict FlushPolicy = "strict" // invalidate on every unmap (iommu.strict=1)
	FlushLazy   FlushPolicy = "lazy"   // batched, flush queue (iommu.strict=0)
)

const flushUnknown FlushPolicy = ""

// The IOMMU alignment of the Arm Neoverse Tomcat tuning guide, which are
// Ubuntu's defaults: translated DMA domains (iommu.passthrough=0) with
// strict IOTLB invalidation (iommu.strict=1).
const (
	DefaultIOMMUStrict      = "1"
	DefaultIOMMUPassthrough = "0"
)

// IOMMUAlign returns the parameters that set the IOMMU flush policy and
// default domain: iommu.strict=strict iommu.passthrough=passthrough.
func IOMMUAlign(strict, passthrough string) []Param {
	return []Param{P("iommu.strict", strict), P("iommu.passthrough", passthrough)}
}

// Where IOMMUState came from.
const (
	SourceSysfs     = "sysfs"      // /sys/kernel/iommu_groups/*/type
	SourceKernelLog = "kernel log" // dmesg, /dev/kmsg
)

// GroupTypes counts IOMMU groups of one type in sysfs.
type GroupTypes struct {
	Type   string // "DMA", "DMA-FQ", "identity", "blocked", "unmanaged", ...
	Groups int
}

// IOMMUState is the IOMMU configuration the running kernel uses.
type IOMMUState struct {
	Domain DomainType
	Policy FlushPolicy // "" for passthrough, or when not reported
	// DomainFromCmdline and PolicyFromCmdline are true when the kernel
	// says the value was "set via kernel command line" (kernel log), or
	// when the running command line carries iommu.passthrough / iommu.strict
	// (and their older x86 forms).
	DomainFromCmdline bool
	PolicyFromCmdline bool
	// Source is SourceSysfs or SourceKernelLog.
	Source string
	// Groups counts the sysfs groups by type (Source == SourceSysfs).
	Groups []GroupTypes
	// Lines are the kernel log lines the state was read from.
	Lines []string
}

// String describes the state in one line, with its source.
func (s IOMMUState) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "domain %s", orUnknown(string(s.Domain)))
	if s.DomainFromCmdline {
		b.WriteString(" (set via kernel command line)")
	}
	fmt.Fprintf(&b, ", flush policy %s", orUnknown(string(s.Policy)))
	if s.PolicyFromCmdline {
		b.WriteString(" (set via kernel command line)")
	}
	fmt.Fprintf(&b, " [from %s]", s.Source)
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// sysfs group types (iommu_group_show_type in drivers/iommu/iommu.c).
func fromGroupType(t string) (DomainType, FlushPolicy) {
	switch t {
	case "DMA":
		return DomainTranslated, FlushStrict
	case "DMA-FQ":
		return DomainTranslated, FlushLazy
	case "identity":
		return DomainPassthrough, flushUnknown
	case "blocked":
		return DomainBlocked, flushUnknown
	case "unmanaged":
		return DomainUnmanaged, flushUnknown
	}
	return domainUnknown, flushUnknown
}

// iommuFromGroupTypes derives the state from the types of the IOMMU
// groups: the default domain is the type most groups have, leaving out
// "unmanaged" and "blocked" groups (devices assigned to VFIO or blocked),
// which say nothing about the default.
func iommuFromGroupTypes(types []string) (IOMMUState, error) {
	count := map[string]int{}
	for _, t := range types {
		count[t]++
	}
	st := IOMMUState{Source: SourceSysfs}
	for t, n := range count {
		st.Groups = append(st.Groups, GroupTypes{Type: t, Groups: n})
	}
	sort.Slice(st.Groups, func(i, j int) bool {
		if st.Groups[i].Groups != st.Groups[j].Groups {
			return st.Groups[i].Groups > st.Groups[j].Groups
		}
		return st.Groups[i].Type < st.Groups[j].Type
	})
	for _, g := range st.Groups {
		d, p := fromGroupType(g.Type)
		if d == DomainUnmanaged || d == DomainBlocked {
			continue
		}
		st.Domain, st.Policy = d, p
		break
	}
	if st.Domain == domainUnknown && len(st.Groups) > 0 {
		st.Domain, st.Policy = fromGroupType(st.Groups[0].Type)
	}
	if len(types) == 0 {
		return st, fmt.Errorf("%w: no IOMMU groups", ErrNoIOMMUState)
	}
	return st, nil
}

const cmdlineSuffix = "(set via kernel command line)"

// ParseKernelLog reads the IOMMU state from kernel log text: dmesg output
// (with or without "[ time]" prefixes), journalctl -k lines, or /dev/kmsg
// records. It understands the generic IOMMU layer's lines in both
// wordings ("iommu: Default domain type: Translated" since 5.2, with
// " (set via kernel command line)" since 5.5; "iommu: DMA domain TLB
// invalidation policy: strict mode" since 5.15) and the older driver
// lines ("DMAR: Disable batched IOTLB flush" for intel_iommu=strict,
// "AMD-Vi: IO/TLB flush on unmap enabled" / "Lazy IO/TLB flushing
// enabled", "AMD-Vi: Initialized for Passthrough Mode"). When nothing is
// found (the ring buffer may have wrapped since boot) the error matches
// ErrNoIOMMUState.
func ParseKernelLog(r io.Reader) (IOMMUState, error) {
	st := IOMMUState{Source: SourceKernelLog}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		msg := line
		found := true
		switch {
		case cut(&msg, "iommu: Default domain type: "):
			set := strings.HasSuffix(msg, cmdlineSuffix)
			msg = strings.TrimSpace(strings.TrimSuffix(msg, cmdlineSuffix))
			st.Domain, st.DomainFromCmdline = DomainType(msg), set
		case cut(&msg, "iommu: DMA domain TLB invalidation policy: "):
			set := strings.HasSuffix(msg, cmdlineSuffix)
			msg = strings.TrimSpace(strings.TrimSuffix(msg, cmdlineSuffix))
			st.Policy, st.PolicyFromCmdline = FlushPolicy(strings.TrimSuffix(msg, " mode")), set
		case strings.HasSuffix(line, "DMAR: Disable batched IOTLB flush"),
			strings.HasSuffix(line, "Intel-IOMMU: disable batched IOTLB flush"):
			st.Policy, st.PolicyFromCmdline = FlushStrict, true
		case strings.HasSuffix(line, "AMD-Vi: IO/TLB flush on unmap enabled"):
			st.Policy = FlushStrict
		case strings.HasSuffix(line, "AMD-Vi: Lazy IO/TLB flushing enabled"):
			st.Policy = FlushLazy
		case strings.HasSuffix(line, "AMD-Vi: Initialized for Passthrough Mode"):
			st.Domain = DomainPassthrough
		default:
			found = false
		}
		if found {
			st.Lines = append(st.Lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		return st, fmt.Errorf("bootcfg: read kernel log: %w", err)
	}
	if len(st.Lines) == 0 {
		return st, fmt.Errorf("%w: no IOMMU lines in the kernel log (it may have wrapped since boot)", ErrNoIOMMUState)
	}
	return st, nil
}

// cut sets *s to what follows sep in *s and reports whether sep was there.
func cut(s *string, sep string) bool {
	_, after, ok := strings.Cut(*s, sep)
	if ok {
		*s = after
	}
	return ok
}

// iommuGroupTypes reads /sys/kernel/iommu_groups/*/type under the root.
// A missing directory or no group is an empty result, not an error.
func (h *Host) iommuGroupTypes() ([]string, error) {
	dir := h.root.Sys("kernel", "iommu_groups")
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bootcfg: %w", err)
	}
	var types []string
	for _, d := range des {
		t, err := hostfs.ReadString(h.root.Sys("kernel", "iommu_groups", d.Name(), "type"))
		if errors.Is(err, os.ErrNotExist) {
			continue // kernels before 5.11 have no type file
		}
		if err != nil {
			return nil, fmt.Errorf("bootcfg: %w", err)
		}
		types = append(types, t)
	}
	return types, nil
}

// IOMMU returns the running kernel's IOMMU state from the first source
// that has it: /sys/kernel/iommu_groups/*/type when there are groups
// (none on a VM without an emulated IOMMU), else the kernel log
// (/dev/kmsg, the records still in the ring buffer). Source says which. With sysfs, whether a
// value was set on the command line is read from /proc/cmdline. Reading
// the kernel log needs root where kernel.dmesg_restrict=1 (errors.Is
// os.ErrPermission); when no source says anything the error matches
// ErrNoIOMMUState.
func (h *Host) IOMMU() (IOMMUState, error) {
	types, err := h.iommuGroupTypes()
	if err != nil {
		return IOMMUState{}, err
	}
	if len(types) > 0 {
		st, err := iommuFromGroupTypes(types)
		if err != nil {
			return st, err
		}
		if cl, err := h.Cmdline(); err == nil {
			st.DomainFromCmdline, st.PolicyFromCmdline = iommuOnCmdline(cl)
		}
		return st, nil
	}
	log, err := h.kernelLog()
	if err != nil {
		return IOMMUState{}, fmt.Errorf("bootcfg: IOMMU state: %s has no groups, and the kernel log: %w", h.root.Sys("kernel", "iommu_groups"), err)
	}
	return ParseKernelLog(strings.NewReader(log))
}

// iommuOnCmdline reports whether the command line sets the default domain
// type and the flush policy.
func iommuOnCmdline(cl *Cmdline) (domain, policy bool) {
	_, d := cl.Get("iommu.passthrough")
	_, p := cl.Get("iommu.strict")
	if v, ok := cl.Get("iommu"); ok {
		switch v.Value {
		case "pt", "nopt":
			d = true
		case "strict", "nostrict":
			p = true
		}
	}
	for _, k := range []string{"intel_iommu", "amd_iommu"} {
		if v, ok := cl.Get(k); ok && strings.Contains(v.Value, "strict") {
			p = true
		}
	}
	return d, p
}

// IOMMUParams returns the IOMMU-related parameters of a command line:
// iommu.*, iommu=, intel_iommu=, amd_iommu=, arm-smmu*.
func IOMMUParams(cl *Cmdline) []Param {
	var ps []Param
	for _, p := range cl.Params() {
		k := strings.ReplaceAll(p.Key, "-", "_")
		if k == "iommu" || strings.HasPrefix(k, "iommu.") || k == "intel_iommu" || k == "amd_iommu" || strings.HasPrefix(k, "arm_smmu") {
			ps = append(ps, p)
		}
	}
	return ps
}
