package persist

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/tuning"
)

// SysctlConf is a file of /etc/sysctl.d, which systemd-sysctl (and
// `sysctl --system`) applies at every boot: "name = value" lines. Use it
// where tuned is not installed.
type SysctlConf struct {
	// File is the file name under /etc/sysctl.d: NN-name.conf, where the
	// two digits order it among the others (a later file wins), e.g.
	// "90-nettune.conf".
	File string
	// Settings are sysctl name = value, e.g. net.ipv4.tcp_max_tw_buckets
	// = 450000, in the dotted or the slashed form.
	Settings []Setting
}

// Render returns the file's text. A file name that is not NN-name.conf, a
// sysctl name that leaves /proc/sys or a value with a line break is an
// error naming it.
func (s SysctlConf) Render() ([]byte, error) {
	if err := checkSysctlFile(s.File); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	// The header keeps the name the type had in package tuning, where it
	// was first written, so a file an earlier run wrote is still up to date.
	b.WriteString("# Written by nettune (tuning.SysctlConf); remove this file to undo it.\n")
	for _, st := range s.Settings {
		if _, why := hostfs.SysctlRel(st.Key); why != "" {
			return nil, fmt.Errorf("persist: invalid sysctl name %q: %s; expected a dotted name like net.ipv4.tcp_max_tw_buckets", st.Key, why)
		}
		if v := strings.TrimSpace(st.Value); v == "" || v != st.Value || strings.ContainsAny(v, "\n\r") {
			return nil, fmt.Errorf("persist: sysctl.d %s: %s = %q: want a one-line value without surrounding white space", s.File, st.Key, st.Value)
		}
		fmt.Fprintf(&b, "%s = %s\n", st.Key, st.Value)
	}
	return b.Bytes(), nil
}

func checkSysctlFile(name string) error {
	ok := len(name) > len("00-.conf") && strings.HasSuffix(name, ".conf") &&
		name[0] >= '0' && name[0] <= '9' && name[1] >= '0' && name[1] <= '9' && name[2] == '-' &&
		ValidTunedName(strings.TrimSuffix(name, ".conf"))
	if !ok {
		return fmt.Errorf("persist: sysctl.d file name %q: want NN-name.conf (two digits, a dash, letters, digits, '_', '.' or '-')", name)
	}
	return nil
}

// SysctlConfPath returns ROOT/etc/sysctl.d/FILE.
func (h *Host) SysctlConfPath(file string) (string, error) {
	if err := checkSysctlFile(file); err != nil {
		return "", err
	}
	return h.root.Etc("sysctl.d", file), nil
}

// PlanSysctlConf returns the edit that writes s to
// ROOT/etc/sysctl.d/FILE (see FileEdit). It changes nothing.
func (h *Host) PlanSysctlConf(s SysctlConf) (FileEdit, error) {
	data, err := s.Render()
	if err != nil {
		return FileEdit{}, err
	}
	p, err := h.SysctlConfPath(s.File)
	if err != nil {
		return FileEdit{}, err
	}
	return PlanFile(p, data)
}

// WriteSysctlConf writes s to ROOT/etc/sysctl.d/FILE safely and returns
// the applied edit, whose Undo puts back what was there. It does not apply
// the values now (tuning.Host.SetSysctl does). It needs root.
func (h *Host) WriteSysctlConf(s SysctlConf) (FileEdit, error) {
	e, err := h.PlanSysctlConf(s)
	if err != nil {
		return e, err
	}
	return planAndWrite(e.Path, e.Data)
}

// DefaultCPUOnlineUnit is the name CPUOnlineUnit's zero Name stands for.
const DefaultCPUOnlineUnit = "nettune-cpu-online.service"

// CPUOnlineUnit is a oneshot systemd service that takes CPUs offline at
// boot, for hosts without tuned (where a TunedProfile's [sysfs] does it):
// /etc/systemd/system/NAME, enabled by a link in
// /etc/systemd/system/multi-user.target.wants. Stopping the unit brings
// the CPUs back online.
type CPUOnlineUnit struct {
	// Name is the unit's file name. Default: DefaultCPUOnlineUnit.
	Name string
	// Offline are the CPUs to take offline. cpu0 usually cannot be.
	Offline tuning.CPUSet
}

func (u CPUOnlineUnit) name() string {
	if u.Name == "" {
		return DefaultCPUOnlineUnit
	}
	return u.Name
}

// Render returns the unit file: Type=oneshot with RemainAfterExit, one
// ExecStart writing 0 to /sys/devices/system/cpu/cpuN/online per CPU and
// one ExecStop writing 1. An empty set or a name that is not NAME.service
// is an error.
func (u CPUOnlineUnit) Render() ([]byte, error) {
	n := u.name()
	if !strings.HasSuffix(n, ".service") || !ValidTunedName(strings.TrimSuffix(n, ".service")) {
		return nil, fmt.Errorf("persist: unit name %q: want NAME.service (letters, digits, '_', '.' or '-')", n)
	}
	if u.Offline.IsEmpty() {
		return nil, fmt.Errorf("persist: unit %s: no CPU to take offline", n)
	}
	var b bytes.Buffer
	// The header keeps the name the type had in package tuning, where it
	// was first written, so a file an earlier run wrote is still up to date.
	fmt.Fprintf(&b, `# Written by nettune (tuning.CPUOnlineUnit); disable and remove it to undo it.
[Unit]
Description=Keep CPUs %s offline (nettune)
DefaultDependencies=no
After=systemd-udevd.service
Before=sysinit.target shutdown.target
Conflicts=shutdown.target

[Service]
Type=oneshot
RemainAfterExit=yes
`, u.Offline)
	for _, id := range u.Offline.IDs() {
		fmt.Fprintf(&b, "ExecStart=/bin/sh -c 'echo 0 > /sys/devices/system/cpu/cpu%d/online'\n", id)
	}
	for _, id := range u.Offline.IDs() {
		fmt.Fprintf(&b, "ExecStop=/bin/sh -c 'echo 1 > /sys/devices/system/cpu/cpu%d/online'\n", id)
	}
	b.WriteString("\n[Install]\nWantedBy=sysinit.target\n")
	return b.Bytes(), nil
}

// UnitPath returns ROOT/etc/systemd/system/NAME.
func (h *Host) UnitPath(u CPUOnlineUnit) string {
	return h.root.Etc("systemd", "system", u.name())
}

// PlanCPUOnlineUnit returns the edit that writes the unit file (see
// CPUOnlineUnit and FileEdit). It changes nothing.
func (h *Host) PlanCPUOnlineUnit(u CPUOnlineUnit) (FileEdit, error) {
	data, err := u.Render()
	if err != nil {
		return FileEdit{}, err
	}
	return PlanFile(h.UnitPath(u), data)
}

// WriteCPUOnlineUnit writes the unit file safely and returns the applied
// edit, whose Undo puts back what was there. Enable it with `systemctl
// enable NAME` (or `systemctl --root=ROOT enable NAME` on an image); it
// runs at the next boot. It needs root.
func (h *Host) WriteCPUOnlineUnit(u CPUOnlineUnit) (FileEdit, error) {
	e, err := h.PlanCPUOnlineUnit(u)
	if err != nil {
		return e, err
	}
	return planAndWrite(e.Path, e.Data)
}
