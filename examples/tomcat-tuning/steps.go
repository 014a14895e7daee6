//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/rlimit"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/numa"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// The steps, in the Arm guide's order.
const (
	stepIOMMU     = "iommu"
	stepCPUs      = "cpus"
	stepOpenFiles = "open-files"
	stepAccessLog = "access-log"
	stepThreads   = "threads"
	stepNICQueues = "nic-queues"
	stepNUMALocal = "numa-local"
)

var stepNames = []string{stepIOMMU, stepCPUs, stepOpenFiles, stepAccessLog, stepThreads, stepNICQueues, stepNUMALocal}

// undoNICChannels is the journal kind of a channel change; its data is a
// nicChannelsUndo.
const undoNICChannels = "nic-channels"

type nicChannelsUndo struct {
	Interface string       `json:"interface"`
	Before    nic.Channels `json:"before"`
}

// undoTomcat is the journal kind of the study's hold on Tomcat (its
// restarts with the tuned files); its data is a tomcatUndo. The record
// comes first in the journal, so a revert handles it last, with the files
// back as found.
const undoTomcat = "tomcat-instance"

// stepTomcat is the journal's step name for the undoTomcat record.
const stepTomcat = "tomcat"

// tomcatUndo is the instance the study restarts, how it runs (its user,
// command, environment) and whether it ran before: reverting stops the JVM
// the study left, found in /proc, and, if Tomcat was running, starts it
// again the same way.
type tomcatUndo struct {
	Home       string   `json:"home"`
	Base       string   `json:"base"`
	User       string   `json:"user,omitempty"`
	Group      string   `json:"group,omitempty"`
	RunCommand []string `json:"run_command,omitempty"`
	Service    string   `json:"service,omitempty"`
	// Control is how the study ran Tomcat: "systemd" (through Service,
	// with systemctl) or "process".
	Control    string   `json:"control,omitempty"`
	Daemon     bool     `json:"daemon,omitempty"`
	PIDFile    string   `json:"pid_file,omitempty"`
	Env        []string `json:"env,omitempty"`
	NoFile     uint64   `json:"nofile,omitempty"`
	WasRunning bool     `json:"was_running"`
	ReadyURL   string   `json:"ready_url,omitempty"`
}

func newTomcatUndo(in *tomcatconf.Instance, wasRunning bool, readyURL string) tomcatUndo {
	return tomcatUndo{Home: in.Home, Base: in.Base, User: in.User, Group: in.Group,
		RunCommand: in.RunCommand, Service: in.Service, Daemon: in.Daemon, PIDFile: in.PIDFile,
		Env: in.Env, NoFile: in.NoFile, WasRunning: wasRunning, ReadyURL: readyURL, Control: string(in.Control)}
}

func (u tomcatUndo) instance() *tomcatconf.Instance {
	return &tomcatconf.Instance{Home: u.Home, Base: u.Base, User: u.User, Group: u.Group,
		RunCommand: u.RunCommand, Service: u.Service, Daemon: u.Daemon, PIDFile: u.PIDFile,
		Env: u.Env, NoFile: u.NoFile, Control: tomcatconf.Control(u.Control)}
}

// revertTomcat stops every JVM of the recorded instance (the one the
// study left; they are found in /proc, so a killed run's JVM is too, even
// one still being launched) and
// starts Tomcat again, as the recorded user and command, if it ran before
// the study.
func revertTomcat(ctx context.Context, data json.RawMessage) error {
	var u tomcatUndo
	if err := json.Unmarshal(data, &u); err != nil {
		return fmt.Errorf("tomcat undo record: %w", err)
	}
	if u.Home == "" || u.Base == "" {
		return fmt.Errorf("tomcat undo record %s: no home or base", data)
	}
	in := u.instance()
	if err := stopAllJVMs(ctx, in); err != nil {
		return err
	}
	if !u.WasRunning {
		return nil
	}
	_, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: u.ReadyURL})
	return err
}

// stopAllJVMs stops every JVM of in's base, also one that a killed run
// had launched but not yet exec'd (Instance.StopAll).
func stopAllJVMs(ctx context.Context, in *tomcatconf.Instance) error {
	_, err := in.StopAll(ctx, nil)
	return err
}

// reverters returns the RevertFuncs of every change the study makes:
// tuning's (file, cpu-online, sysctl), the NIC channel counts and Tomcat's
// restarts. The returned func closes the ethtool socket.
func reverters(h *tuning.Host) (tuning.Reverters, func()) {
	rev := h.Reverters()
	rev[undoTomcat] = revertTomcat
	rev[undoDropIn] = revertDropIn
	var client *nic.Client
	rev[undoNICChannels] = func(_ context.Context, data json.RawMessage) error {
		var u nicChannelsUndo
		if err := json.Unmarshal(data, &u); err != nil {
			return fmt.Errorf("nic-channels undo record: %w", err)
		}
		if client == nil {
			c, err := nic.NewDefault()
			if err != nil {
				return err
			}
			client = c
		}
		_, err := client.SetChannels(u.Interface, u.Before.Update())
		return err
	}
	return rev, func() {
		if client != nil {
			client.Close()
		}
	}
}

// buildSteps returns the steps -steps names, in its order.
func buildSteps(s *study, list string) ([]tuning.Step, error) {
	all := map[string]tuning.Step{
		stepIOMMU: {Name: stepIOMMU, Title: "IOMMU boot settings iommu.strict=1 iommu.passthrough=0", Baseline: true,
			Prepare: s.prepareIOMMU},
		stepCPUs: {Name: stepCPUs, Title: fmt.Sprintf("%d CPUs for Tomcat", s.n), Baseline: true,
			Prepare: s.prepareCPUs},
		stepOpenFiles: {Name: stepOpenFiles, Title: fmt.Sprintf("ulimit -n %d for Tomcat", rlimit.DefaultNoFile), Baseline: true,
			Prepare: s.prepareOpenFiles},
		stepAccessLog: {Name: stepAccessLog, Title: "Access log off", Prepare: s.prepareAccessLog},
		stepThreads:   {Name: stepThreads, Title: "maxThreads from a thread census, keep-alive limits", Prepare: s.prepareThreads},
		stepNICQueues: {Name: stepNICQueues, Title: fmt.Sprintf("NIC queues = %d CPUs", s.n), Prepare: s.prepareNICQueues},
		stepNUMALocal: {Name: stepNUMALocal, Title: "CPUs local to the NIC's NUMA node", Prepare: s.prepareNUMALocal},
	}
	var steps []tuning.Step
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		st, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("-steps: unknown step %q; want some of %s", name, strings.Join(stepNames, ","))
		}
		if seen[name] {
			return nil, fmt.Errorf("-steps: %q named twice", name)
		}
		seen[name] = true
		steps = append(steps, st)
	}
	if len(steps) == 0 {
		return nil, errors.New("-steps: no step named")
	}
	return steps, nil
}

// prepareIOMMU plans the Arm guide's IOMMU parameters in GRUB_CMDLINE_LINUX.
// It is always skipped: the change needs a reboot, and the study never
// edits the boot configuration (examples/grubiommu does).
func (s *study) prepareIOMMU(context.Context) (*tuning.Change, error) {
	if s.grub == nil {
		return &tuning.Change{Skip: fmt.Sprintf("no GRUB defaults file to plan against (%v)", s.grubErr)}, nil
	}
	want := bootcfg.IOMMUAlign(bootcfg.DefaultIOMMUStrict, bootcfg.DefaultIOMMUPassthrough)
	plan, err := s.grub.Plan(bootcfg.Edit{Var: bootcfg.CmdlineLinux, Set: want})
	if err != nil {
		return &tuning.Change{Skip: fmt.Sprintf("cannot plan the edit: %v", err)}, nil
	}
	if plan.Changed() {
		return &tuning.Change{Describe: plan.Diff(),
			Skip: "reboot required: apply with `grubiommu -strict -apply -update`, reboot, then run the study"}, nil
	}
	boot, err := s.grub.BootCmdline()
	if err == nil && s.running != nil && bootcfg.PendingReboot(boot, s.running, want, nil).RebootRequired() {
		return &tuning.Change{Describe: s.grubPath + " already has " + paramsText(want),
			Skip: "reboot required: the running kernel does not have these parameters yet"}, nil
	}
	return &tuning.Change{Describe: "the file and the running kernel already have " + paramsText(want)}, nil
}

// prepareCPUs keeps s.n CPUs online (hotplug), or changes nothing on the
// host (affinity: Tomcat is pinned after each start).
func (s *study) prepareCPUs(context.Context) (*tuning.Change, error) {
	s.mu.Lock()
	cpus := s.tomcatCPUs
	s.mu.Unlock()
	if s.o.cpuMethod == methodAffinity && s.systemd() {
		return s.dropInChange(fmt.Sprintf("pin the JVM to CPUs %s (load generator on %s)", cpus, s.loadCPUs),
			func(d *tomcatconf.DropIn) { d.CPUAffinity = cpus.IDs() })
	}
	if s.o.cpuMethod == methodAffinity {
		return &tuning.Change{Describe: fmt.Sprintf("pin the JVM to CPUs %s after each start (sched_setaffinity); load generator on %s; no host change",
			cpus, s.loadCPUs)}, nil
	}
	return s.cpuHost.KeepOnlineChange(cpus)
}

// prepareOpenFiles describes the open-files limit Tomcat is started with.
// The limit is set on every start (Instance.NoFile), not on the host;
// under systemd it is the unit's LimitNOFILE=, written to its runtime
// drop-in.
func (s *study) prepareOpenFiles(context.Context) (*tuning.Change, error) {
	if s.systemd() {
		return s.dropInChange(fmt.Sprintf("LimitNOFILE=%d for %s", rlimit.DefaultNoFile, s.inst.Service),
			func(d *tomcatconf.DropIn) { d.LimitNOFILE = rlimit.DefaultNoFile })
	}
	cur, err := tuning.OpenFilesLimit(0)
	if err != nil {
		return nil, err
	}
	d := fmt.Sprintf("Tomcat is started under `ulimit -n %d` (this process: %s)", rlimit.DefaultNoFile, cur)
	if cur.Hard < rlimit.DefaultNoFile {
		d += fmt.Sprintf("; the hard limit here is %d, so the JVM gets %d unless CAP_SYS_RESOURCE can raise it", cur.Hard, cur.Hard)
	}
	return &tuning.Change{Describe: d}, nil
}

// prepareAccessLog comments out every AccessLogValve in server.xml.
func (s *study) prepareAccessLog(context.Context) (*tuning.Change, error) {
	if s.inst == nil {
		return &tuning.Change{Skip: fmt.Sprintf("no Tomcat instance: %v", s.instErr)}, nil
	}
	xml := s.serverXML()
	ch, err := tuning.FileChange(xml, func(old []byte) ([]byte, error) {
		cfg, err := tomcatconf.Parse(xml, old)
		if err != nil {
			return nil, err
		}
		if _, err := cfg.DisableAccessLog(tomcatconf.AccessLogComment); err != nil {
			return nil, err
		}
		return cfg.Bytes(), nil
	})
	if err == nil && ch.Apply == nil {
		ch.Describe = "no active AccessLogValve in " + xml
	}
	return ch, err
}

// prepareThreads sizes maxThreads: from a census of the running JVM under
// load during -apply, from the guide's CPUs - 1 in plan mode.
func (s *study) prepareThreads(ctx context.Context) (*tuning.Change, error) {
	if s.inst == nil {
		return &tuning.Change{Skip: fmt.Sprintf("no Tomcat instance: %v", s.instErr)}, nil
	}
	workers := max(1, s.n-1)
	how := fmt.Sprintf("the guide's CPUs - 1 = %d (-apply sizes it from a thread census under load)", workers)
	if s.o.apply && !s.o.remote {
		rec, err := s.census(ctx)
		if err != nil {
			return nil, err
		}
		workers = rec.MaxThreads
		how = "census: " + rec.Reason
	}
	xml := s.serverXML()
	ch, err := tuning.FileChange(xml, func(old []byte) ([]byte, error) {
		cfg, err := tomcatconf.Parse(xml, old)
		if err != nil {
			return nil, err
		}
		if _, err := cfg.SetConnector(s.connQuery, tomcatconf.ArmGuideConnectorAttrs(workers), &tomcatconf.SetOptions{ToExecutor: true}); err != nil {
			return nil, err
		}
		return cfg.Bytes(), nil
	})
	if err != nil {
		return nil, err
	}
	ch.Describe = fmt.Sprintf("maxThreads=%d from %s\n%s", workers, how, ch.Describe)
	return ch, nil
}

// prepareNICQueues sets the NIC's queue count to the number of CPUs
// Tomcat gets (ethtool -L IF combined N, or rx N tx N), capped at the
// device's maximum. A virtual device is a NIC for this step when it has
// channels to set: a veth made with numrxqueues/numtxqueues N has rx and
// tx channels up to N; lo and one-queue devices are skipped.
func (s *study) prepareNICQueues(context.Context) (*tuning.Change, error) {
	n := uint32(s.n)
	virtual := s.iface == "lo" || s.ifaceVirtual
	switch {
	case s.iface == "":
		return &tuning.Change{Skip: "no NIC: " + s.ifaceWhy}, nil
	case s.channels == nil && virtual:
		return &tuning.Change{Describe: fmt.Sprintf("ethtool -L %s combined %d", s.iface, n),
			Skip: fmt.Sprintf("no physical NIC: %s, without channels to set (%s)",
				firstNonEmpty(s.ifaceWhy, s.iface+" is the loopback"), errText(s.channelsErr, "none reported"))}, nil
	case s.channels == nil:
		return &tuning.Change{Describe: fmt.Sprintf("ethtool -L %s combined %d", s.iface, n),
			Skip: fmt.Sprintf("channels unknown: %v", s.channelsErr)}, nil
	}
	ch := *s.channels
	limit := ch.MaxQueues()
	switch {
	case limit == 0:
		return &tuning.Change{Skip: s.iface + " has no combined or rx/tx channels to set"}, nil
	case limit == 1 && virtual:
		return &tuning.Change{Skip: fmt.Sprintf("no physical NIC, and virtual %s has one queue (ethtool -l: %s): "+
			"no queue count to set (a veth made with numrxqueues N numtxqueues N has N)", s.iface, channelsText(ch))}, nil
	}
	var notes []string
	if virtual {
		notes = append(notes, fmt.Sprintf("%s is virtual, with channels to set (%s)", s.iface, channelsText(ch)))
	}
	if n > limit {
		notes = append(notes, fmt.Sprintf("%d CPUs capped at %s's maximum of %d queues", n, s.iface, limit))
		n = limit
	}
	u := ch.QueueUpdate(n)
	next, err := ch.With(u)
	if err != nil {
		return &tuning.Change{Skip: err.Error()}, nil
	}
	desc := fmt.Sprintf("ethtool -L %s %s: %s", s.iface, u, nic.ChannelsChange{Interface: s.iface, Before: ch, After: next})
	for _, note := range notes {
		desc += "\n(" + note + ")"
	}
	if next == ch {
		return &tuning.Change{Describe: desc}, nil
	}
	if os.Geteuid() != 0 {
		return &tuning.Change{Describe: desc, Skip: "not permitted: changing channels needs CAP_NET_ADMIN (run as root)"}, nil
	}
	undo, err := tuning.NewUndo(undoNICChannels, nicChannelsUndo{Interface: s.iface, Before: ch})
	if err != nil {
		return nil, err
	}
	iface := s.iface
	return &tuning.Change{
		Describe: desc,
		Undo:     []tuning.Undo{undo},
		Apply: func(context.Context) error {
			c, err := nic.NewDefault()
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.SetChannels(iface, u)
			return err
		},
	}, nil
}

// errText is err's message, or none when err is nil.
func errText(err error, none string) string {
	if err == nil {
		return none
	}
	return err.Error()
}

// channelsText is ch's maxima and counts in short: "rx 8/8, tx 8/8" (the
// current count, then the maximum) for the kinds the device has.
func channelsText(ch nic.Channels) string {
	var parts []string
	for _, k := range []struct {
		name     string
		cur, max uint32
	}{{"rx", ch.RX, ch.MaxRX}, {"tx", ch.TX, ch.MaxTX}, {"other", ch.Other, ch.MaxOther}, {"combined", ch.Combined, ch.MaxCombined}} {
		if k.max > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", k.name, k.cur, k.max))
		}
	}
	if len(parts) == 0 {
		return "no channels"
	}
	return strings.Join(parts, ", ")
}

// prepareNUMALocal moves Tomcat to CPUs of the NIC's NUMA node: online
// ones by hotplug, or its affinity.
func (s *study) prepareNUMALocal(context.Context) (*tuning.Change, error) {
	topo, err := s.numaHost.Topology()
	if err != nil {
		return nil, err
	}
	if len(topo.Nodes) <= 1 {
		return &tuning.Change{Skip: "one NUMA node"}, nil
	}
	if s.ifaceNode < 0 {
		return &tuning.Change{Skip: "the NIC's NUMA node is unknown: " + firstNonEmpty(s.ifaceWhy, "no numa_node")}, nil
	}
	hotplug := s.o.cpuMethod == methodHotplug
	picked, err := topo.PickCPUs(s.ifaceNode, s.n, &numa.PickOptions{IncludeOffline: hotplug})
	if err != nil {
		return &tuning.Change{Skip: fmt.Sprintf("node %d: %v", s.ifaceNode, err)}, nil
	}
	if hotplug {
		ch, err := s.cpuHost.KeepOnlineChange(picked)
		if err != nil {
			return nil, err
		}
		ch.Describe = fmt.Sprintf("CPUs %s of node %d (%s's)\n%s", picked, s.ifaceNode, s.iface, ch.Describe)
		return ch, nil
	}
	s.mu.Lock()
	cur := s.tomcatCPUs
	s.mu.Unlock()
	if cur.Equal(picked) {
		return &tuning.Change{Describe: fmt.Sprintf("Tomcat already on CPUs %s of node %d", picked, s.ifaceNode)}, nil
	}
	if s.systemd() {
		ch, err := s.dropInChange(fmt.Sprintf("pin the JVM to CPUs %s of node %d (%s's) instead of %s", picked, s.ifaceNode, s.iface, cur),
			func(d *tomcatconf.DropIn) { d.CPUAffinity = picked.IDs() })
		if err != nil {
			return nil, err
		}
		write := ch.Apply
		ch.Apply = func(ctx context.Context) error {
			if err := write(ctx); err != nil {
				return err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			s.tomcatCPUs = picked
			s.loadCPUs = s.online.Difference(picked)
			return nil
		}
		return ch, nil
	}
	return &tuning.Change{
		Describe: fmt.Sprintf("pin the JVM to CPUs %s of node %d (%s's) instead of %s", picked, s.ifaceNode, s.iface, cur),
		Apply: func(context.Context) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.tomcatCPUs = picked
			s.loadCPUs = s.online.Difference(picked)
			return nil
		},
	}, nil
}
