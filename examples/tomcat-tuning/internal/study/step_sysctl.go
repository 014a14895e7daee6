//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// stepSysctl is the kind of the user's sysctl steps, sysctl:NAME=VALUE in
// -steps (the guide's last step sets net.ipv4.tcp_max_tw_buckets so).
const stepSysctl = "sysctl"

// sysctlKind sets one sysctl of the user's choosing: a host-wide change,
// undone from the journal, kept with -persist in the tuned profile's
// [sysctl] section (or /etc/sysctl.d without tuned).
func sysctlKind() Kind {
	return Kind{Name: stepSysctl, Arg: "NAME=VALUE", With: sysctlStep}
}

// sysctlStep is the step of one sysctl:NAME=VALUE.
func sysctlStep(arg string) (Kind, error) {
	name, value, err := parseSysctlArg(arg)
	if err != nil {
		return Kind{}, err
	}
	set := persist.Setting{Key: name, Value: value}
	return Kind{Name: stepSysctl + ":" + arg, Title: title("sysctl " + name + " = " + value),
		Plan: func(p *planner, _ context.Context) (*tuning.Change, error) {
			return p.cpus.SysctlChange(name, value)
		},
		Check: func(h Host) error { return checkSysctl(h, name) },
		Needs: Needs{HostLock: true, Persist: func(pp *persistPlan) error { return persistSysctl(pp, set) }}}, nil
}

// parseSysctlArg splits NAME=VALUE: NAME as sysctl(8) takes it (dotted,
// or slashed when a component holds a dot), VALUE what the kernel's file
// takes, fields separated by spaces or tabs. The name's components are
// checked against the host by checkSysctl (tuning.Host.Sysctl).
func parseSysctlArg(arg string) (name, value string, err error) {
	name, value, ok := strings.Cut(arg, "=")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok:
		return "", "", errors.New("no '=' between the sysctl's name and its value")
	case name == "":
		return "", "", errors.New("no sysctl name")
	case value == "":
		return "", "", fmt.Errorf("no value for %s", name)
	case strings.ContainsAny(name, " \t\n\\"):
		return "", "", fmt.Errorf("sysctl name %q: want a name as sysctl(8) takes it, e.g. net.core.somaxconn", name)
	case strings.ContainsAny(value, "\n"):
		return "", "", fmt.Errorf("value of %s holds a newline", name)
	}
	return name, value, nil
}

// checkSysctl refuses a sysctl this kernel does not have, naming its file
// under /proc/sys.
func checkSysctl(h Host, name string) error {
	th, err := tuning.New(h.Root)
	if err != nil {
		return err
	}
	if _, err := th.Sysctl(name); err != nil {
		file := path.Join(h.Root, "proc/sys", sysctlPath(name))
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("-steps sysctl:%s: this kernel has no such sysctl (no %s)", name, file)
		}
		return fmt.Errorf("-steps sysctl:%s: %w", name, err)
	}
	return nil
}

// sysctlPath is name's path under /proc/sys: the dotted form's dots are
// slashes, the slashed form is as given.
func sysctlPath(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	return strings.ReplaceAll(name, ".", "/")
}

// persistSysctl keeps the sysctl: in the tuned profile's [sysctl] when
// tuned is here, else in the study's /etc/sysctl.d file.
func persistSysctl(pp *persistPlan, set persist.Setting) error {
	if pp.p.Tuned {
		pp.p.Profile.Sysctl = append(pp.p.Profile.Sysctl, set)
		return nil
	}
	if pp.p.Sysctl == nil {
		pp.p.Sysctl = &persist.SysctlConf{File: SysctlConfFile}
	}
	pp.p.Sysctl.Settings = append(pp.p.Sysctl.Settings, set)
	return nil
}
