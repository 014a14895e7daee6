package tuning

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nettune/nettune/internal/hostfs"
)

// errSysctlName is matched by errors.Is for a sysctl name that is empty,
// absolute, or holds an empty, "." or ".." component, white space or a
// NUL.
var errSysctlName = errors.New("tuning: invalid sysctl name")

// sysctlPath returns the path of a sysctl below /proc/sys, such as
// "net/ipv4/tcp_max_tw_buckets". name is either dotted, as sysctl(8) takes
// it ("net.ipv4.tcp_max_tw_buckets"), or slashed ("net/ipv4/conf/eth0.100/
// rp_filter"), the form to use when a component holds a dot, like a VLAN
// interface name. A name that would leave /proc/sys or that is malformed
// is an error matching errSysctlName.
func sysctlPath(name string) (string, error) {
	rel, why := hostfs.SysctlRel(name)
	if why != "" {
		return "", fmt.Errorf("%w %q: %s; expected a dotted name like net.ipv4.tcp_max_tw_buckets", errSysctlName, name, why)
	}
	return rel, nil
}

func (h *Host) sysctlFile(name string) (string, error) {
	rel, err := sysctlPath(name)
	if err != nil {
		return "", err
	}
	return h.root.Proc(append([]string{"sys"}, strings.Split(rel, "/")...)...), nil
}

// Sysctl reads a sysctl from /proc/sys by name and returns its value
// without the trailing newline; values with several fields keep the
// kernel's tabs ("4096\t131072\t6291456"). name is dotted, as sysctl(8)
// takes it ("net.ipv4.tcp_max_tw_buckets"), or slashed
// ("net/ipv4/conf/eth0.100/rp_filter"), the form to use when a component
// holds a dot, like a VLAN interface name; a name that is empty, absolute
// or holds an empty, "." or ".." component is refused. Most sysctls are
// readable without privilege. A sysctl the kernel does not have matches
// errors.Is(err, os.ErrNotExist).
func (h *Host) Sysctl(name string) (string, error) {
	p, err := h.sysctlFile(name)
	if err != nil {
		return "", err
	}
	b, err := hostfs.ReadAttr(p)
	if err != nil {
		return "", fmt.Errorf("tuning: sysctl %s: %w", name, err)
	}
	return strings.TrimRight(string(b), "\n\x00"), nil
}

// SetSysctl writes value to the sysctl name (see Sysctl for the forms)
// under /proc/sys, as
// `sysctl -w name=value` or `echo value > /proc/sys/...` does, and returns
// the value it had before, to restore with another SetSysctl. It needs
// root (CAP_SYS_ADMIN, or CAP_NET_ADMIN in the network namespace for
// net.*).
//
// It reads the value back and compares it field by field, so white space
// differences do not matter. When the kernel rejects the value (often
// syscall.EINVAL: not a number, out of range) the error names the file and
// the value, and nothing has changed. When the kernel accepted it but
// reads back something else (a clamped value), the previous value is
// written back and the error matches ErrNotApplied.
func (h *Host) SetSysctl(name, value string) (prev string, err error) {
	p, err := h.sysctlFile(name)
	if err != nil {
		return "", err
	}
	if strings.ContainsRune(value, 0) {
		return "", fmt.Errorf("tuning: sysctl %s: value %q holds a NUL", name, value)
	}
	prev, err = h.Sysctl(name)
	if err != nil {
		return "", err
	}
	if sameFields(prev, value) {
		return prev, nil
	}
	if err := h.root.WriteAttr(p, value); err != nil {
		return prev, fmt.Errorf("tuning: sysctl %s: %w", name, err)
	}
	got, err := h.Sysctl(name)
	if err != nil {
		return prev, err
	}
	if !sameFields(got, value) {
		if rerr := h.root.WriteAttr(p, prev); rerr != nil {
			return prev, fmt.Errorf("%w: sysctl %s reads %q after writing %q, and restoring %q failed: %v", ErrNotApplied, name, got, value, prev, rerr)
		}
		return prev, fmt.Errorf("%w: sysctl %s reads %q after writing %q; restored %q", ErrNotApplied, name, got, value, prev)
	}
	return prev, nil
}

func sameFields(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] != fb[i] {
			return false
		}
	}
	return true
}
