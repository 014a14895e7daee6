//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nettune/nettune/loadgen/stats"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// SysctlConfFile is the /etc/sysctl.d file -persist and -export write for
// the kept sysctl steps where tuned is not installed.
const SysctlConfFile = "90-nettune.conf"

// ProfileName is the tuned profile -persist and -export write.
const ProfileName = "nettune-tomcat"

// KeepSteps returns the steps -persist makes persistent: those of names
// when given, else the baseline steps that changed the host and every
// other step whose change against the step before was a significant gain
// (loadgen's verdict; an unsettled step never is).
func KeepSteps(res Results, names []string) []string {
	if len(names) > 0 {
		return names
	}
	var keep []string
	for _, sr := range res.Steps {
		if res.Baseline[sr.Name] && (sr.Status == tuning.StatusApplied || sr.Status == tuning.StatusReverted) {
			keep = append(keep, sr.Name)
		}
	}
	for _, r := range res.Comparison().Rows {
		if r.VsPrevious.Verdict == stats.VerdictGain {
			keep = append(keep, r.Name)
		}
	}
	return keep
}

// Persistence is what makes the kept steps survive a reboot: a tuned
// profile (with tuned) or systemd pieces (without), the unit's persistent
// drop-in, and server.xml's edits. Each part is the value of the package
// that owns the concern; nil parts are not needed.
type Persistence struct {
	// Tuned reports whether tuned is installed here (tuned-adm and
	// /etc/tuned): the profile carries the CPUs, channels and boot
	// parameters; otherwise CPUUnit and Link do.
	Tuned   bool
	Profile *persist.TunedProfile
	CPUUnit *persist.CPUOnlineUnit
	// Sysctl is the study's /etc/sysctl.d file, for the kept sysctl
	// steps where tuned is not installed (with tuned, Profile.Sysctl).
	Sysctl *persist.SysctlConf
	Link   *nic.LinkFile
	// DropIn is the Tomcat unit's persistent drop-in
	// (/etc/systemd/system/UNIT.d/nettune.conf).
	DropIn *tomcatconf.DropIn
	// ServerXML is the kept server.xml edits as one edit.
	ServerXML *tomcatconf.ServerXMLEdit
	// Files are further files a kept step writes as they are (the jvm
	// step's setenv.sh), each journaled as a persist.FileEdit.
	Files []PersistFile
	// Activate is the tuned profile a kept tuned:PROFILE step activates
	// when nettune's own profile has nothing to keep (with it, Profile
	// includes PROFILE).
	Activate []string
	// Notes say what could not be made persistent, and why.
	Notes []string
}

// PersistFile is a file -persist writes whole for a kept step, and -export
// puts in its directory.
type PersistFile struct {
	Path string // on the host
	Data []byte
	What string // what it does, for -export's README
}

// PlanPersist returns the Persistence of the steps keep, planned from h
// (the threads step from f's census, else the guide's rule). It changes
// nothing.
func PlanPersist(h Host, o Options, f *Findings, keep []string) (Persistence, error) {
	var p Persistence
	files, err := persist.New(h.Root)
	if err != nil {
		return p, err
	}
	_, errAdm := exec.LookPath("tuned-adm")
	_, errDir := os.Stat(filepath.Join(h.Root, "etc", "tuned"))
	p.Tuned = errAdm == nil && errDir == nil
	if p.Tuned {
		active, err := files.ActiveTunedProfile()
		if err != nil {
			return p, err
		}
		active = slices.DeleteFunc(active, func(n string) bool { return n == ProfileName })
		p.Profile = &persist.TunedProfile{Name: ProfileName, Include: active,
			Summary: "the Arm Neoverse Tomcat guide's steps that gained, kept by nettune"}
	}
	pp := &persistPlan{h: h, o: o, f: f, p: &p, place: InitialPlacement(h, o)}
	var kinds []Kind
	for _, k := range Kinds() {
		if slices.Contains(keep, k.Name) {
			kinds = append(kinds, k)
			if k.Needs.Place != nil {
				pp.place = k.Needs.Place(h, o, pp.place)
			}
		}
	}
	for _, name := range keep {
		// The user's steps (sysctl:NAME=VALUE) after the guide's, in
		// their order.
		if k, ok, _ := lookupKind(name); ok && !slices.Contains(StepNames(), name) {
			kinds = append(kinds, k)
		}
	}
	for _, k := range kinds {
		if k.Needs.Persist != nil {
			if err := k.Needs.Persist(pp); err != nil {
				return p, err
			}
		}
	}
	return p, pp.finish()
}

// persistPlan is a Persistence being planned: each kept step's
// Needs.Persist adds its part, and finish puts the shared parts (the
// unit's drop-in, the CPUs at boot, server.xml's one edit) together.
type persistPlan struct {
	h Host
	o Options
	f *Findings
	p *Persistence
	// place is where Tomcat runs once every kept step is applied.
	place Placement
	// cpus: a kept step sets Tomcat's CPUs (to place.Tomcat).
	cpus   bool
	dropIn tomcatconf.DropIn
	// xml are the kept server.xml edits, in the steps' order.
	xml []func(*tomcatconf.Config) error
	// tunedBase is the profile of a kept tuned:PROFILE step.
	tunedBase string
}

// finish adds the CPUs, the drop-in and the server.xml edit the steps
// asked for, and drops a profile that has nothing to keep.
func (pp *persistPlan) finish() error {
	h, p := pp.h, pp.p
	switch {
	case pp.cpus && pp.o.Method() == MethodHotplug:
		// At boot every present CPU comes up: keep all but Tomcat's off.
		off := h.CPUs.Summary.Online.Union(h.CPUs.Summary.Offline).Difference(pp.place.Tomcat)
		if p.Tuned {
			p.Profile.Sysfs = persist.OfflineCPUs(off)
		} else {
			p.CPUUnit = &persist.CPUOnlineUnit{Offline: off}
		}
	case pp.cpus:
		pp.dropIn.CPUAffinity = pp.place.Tomcat.IDs()
	}
	if pp.dropIn.LimitNOFILE != 0 || len(pp.dropIn.CPUAffinity) > 0 {
		if h.Tomcat.Usable() && h.Tomcat.Instance.Service != "" {
			d := pp.dropIn
			p.DropIn = &d
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("no systemd unit runs Tomcat: %s are set by whoever starts it (the study sets them on each start)", pp.dropIn))
		}
	}
	if p.Profile != nil && len(p.Profile.Sysfs) == 0 && len(p.Profile.Sysctl) == 0 && p.Profile.Cmdline == "" && len(p.Profile.Extra.Sections) == 0 {
		p.Profile = nil // nothing for tuned to keep
		if pp.tunedBase != "" {
			p.Activate = []string{pp.tunedBase}
			p.Notes = append(p.Notes, "tuned:"+pp.tunedBase+": `tuned-adm profile "+pp.tunedBase+"` keeps it (tuned applies the chosen profile at every start)")
		}
	}
	if !h.Tomcat.Usable() || len(pp.xml) == 0 {
		return nil
	}
	e, err := tomcatconf.EditServerXML(h.Tomcat.Instance.ServerXML(), func(c *tomcatconf.Config) error {
		for _, edit := range pp.xml {
			if err := edit(c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if e.Changed() {
		p.ServerXML = &e
	}
	return nil
}

// Steps are the persistent writes as steps for a tuning.Runner with Keep,
// each journaled as its package's value, so -revert removes them: the
// server.xml edits, the drop-in, the profile and its activation, the
// kept steps' own files, the sysctl.d file (or the boot unit and the
// .link file). Each is planned when the runner prepares it.
func (p Persistence) Steps(h Host) []tuning.Step {
	var steps []tuning.Step
	add := func(name, title string, plan func(*persist.Host) (tuning.Kinded, error)) {
		steps = append(steps, tuning.Step{Name: name, Title: title, Prepare: func(context.Context) (*tuning.Change, error) {
			ph, err := persist.New(h.Root)
			if err != nil {
				return nil, err
			}
			v, err := plan(ph)
			if err != nil {
				return nil, err
			}
			return tuning.ChangeFor(v)
		}})
	}
	if p.ServerXML != nil {
		e := *p.ServerXML
		add("persist-server-xml", "server.xml keeps the kept steps' edits", func(*persist.Host) (tuning.Kinded, error) { return e, nil })
	}
	if p.DropIn != nil {
		d := *p.DropIn
		add("persist-drop-in", "the Tomcat unit's persistent drop-in", func(*persist.Host) (tuning.Kinded, error) {
			u := h.Tomcat.Instance.Unit()
			u.Persistent = true
			return u.PlanDropIn(func(x *tomcatconf.DropIn) { *x = d })
		})
	}
	if p.Profile != nil {
		prof := *p.Profile
		add("persist-tuned-profile", "tuned profile "+ProfileName, func(ph *persist.Host) (tuning.Kinded, error) { return ph.PlanTunedProfile(prof) })
		add("persist-tuned-activate", "tuned-adm profile "+ProfileName, func(ph *persist.Host) (tuning.Kinded, error) {
			return (&persist.Tuned{}).PlanActivate(ph, ProfileName)
		})
	}
	if p.Profile == nil && len(p.Activate) > 0 {
		names := p.Activate
		add("persist-tuned-activate", "tuned-adm profile "+strings.Join(names, " "), func(ph *persist.Host) (tuning.Kinded, error) {
			return (&persist.Tuned{}).PlanActivate(ph, names...)
		})
	}
	for i, f := range p.Files {
		add(fmt.Sprintf("persist-file-%d", i+1), f.What, func(*persist.Host) (tuning.Kinded, error) { return persist.PlanFile(f.Path, f.Data) })
	}
	if p.Sysctl != nil {
		conf := *p.Sysctl
		add("persist-sysctl-conf", "sysctl.d file "+conf.File, func(ph *persist.Host) (tuning.Kinded, error) { return ph.PlanSysctlConf(conf) })
	}
	if p.CPUUnit != nil {
		u := *p.CPUUnit
		add("persist-cpu-unit", "a boot unit that keeps CPUs offline", func(ph *persist.Host) (tuning.Kinded, error) { return ph.PlanCPUOnlineUnit(u) })
	}
	if p.Link != nil {
		l := *p.Link
		add("persist-link-file", "a .link file for "+h.NIC.Name+"'s channels", func(*persist.Host) (tuning.Kinded, error) {
			c, err := nic.New(&nic.Options{Root: h.Root})
			if err != nil {
				return nil, err
			}
			defer c.Close()
			return c.PlanLinkFile(l)
		})
	}
	return steps
}

// Export writes the persistence's files into dir, as they would land on
// the host, without touching the host: the tuned profile (or the boot unit
// and the .link file), the kept steps' files, the unit's drop-in, the
// server.xml diff, and a README saying what each does and how to apply
// it. It returns the files written, relative to dir.
func (p Persistence) Export(h Host, dir string) ([]string, error) {
	var files []string
	var readme strings.Builder
	fmt.Fprintf(&readme, "# nettune: the Arm Tomcat guide's tuning, to roll out\n\n"+
		"Written by tomcat-tuning -export, which writes nothing outside this folder: the files -persist\n"+
		"would write. Each goes where its path under this folder says; apply them with your own tools\n"+
		"(Ansible, a package).\n\n")
	write := func(rel string, data []byte, what string) error {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		files = append(files, rel)
		fmt.Fprintf(&readme, "- `%s`: %s\n", rel, what)
		return nil
	}
	for _, f := range p.exports(h) {
		data, err := f.render()
		if err == nil {
			err = write(f.rel, data, f.what)
		}
		if err != nil {
			return files, err
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&readme, "\nNote: %s\n", n)
	}
	if len(files) == 0 {
		return nil, errors.New("-export: no kept step needs a persistent file")
	}
	if err := write("README.md", []byte(readme.String()), "this file"); err != nil {
		return files, err
	}
	return files, nil
}

// exportFile is one file of Export: where it goes under the folder (as
// on the host), its bytes and what it does.
type exportFile struct {
	rel    string
	render func() ([]byte, error)
	what   string
}

// exports are the files Export writes, in its order.
func (p Persistence) exports(h Host) []exportFile {
	var out []exportFile
	if p.Profile != nil {
		out = append(out, exportFile{filepath.Join("etc/tuned", ProfileName, "tuned.conf"), p.Profile.Render,
			"the tuned profile (tuned reapplies it at every boot); activate it with `tuned-adm profile " + ProfileName + "`, check it with `tuned-adm verify`, and switch back to " +
				firstNonEmpty(strings.Join(p.Profile.Include, " "), "your previous profile") + " to undo it"})
	}
	for _, f := range p.Files {
		out = append(out, exportFile{rootRel(h.Root, f.Path), func() ([]byte, error) { return f.Data, nil }, f.What})
	}
	if p.Sysctl != nil {
		out = append(out, exportFile{filepath.Join("etc/sysctl.d", p.Sysctl.File), p.Sysctl.Render,
			"the kept sysctls (no tuned here): systemd-sysctl applies them at every boot; `sysctl -p /etc/sysctl.d/" + p.Sysctl.File + "` now"})
	}
	if p.CPUUnit != nil {
		name := firstNonEmpty(p.CPUUnit.Name, persist.DefaultCPUOnlineUnit)
		out = append(out, exportFile{filepath.Join("etc/systemd/system", name), p.CPUUnit.Render,
			"a oneshot unit that takes the other CPUs offline at boot (no tuned here); `systemctl enable " + name + "`"})
	}
	if p.Link != nil {
		out = append(out, exportFile{filepath.Join("etc/systemd/network", p.Link.File), p.Link.Render,
			"the NIC's channel counts at every boot (systemd-udevd applies the first matching .link file; this one carries over the one that applied before)"})
	}
	if p.DropIn != nil && h.Tomcat.Instance != nil {
		rel, data, what, err := p.exportDropIn(h)
		out = append(out, exportFile{rel, func() ([]byte, error) { return data, err }, what})
	}
	if p.ServerXML != nil {
		out = append(out, exportFile{"server.xml.patch", func() ([]byte, error) { return []byte(p.ServerXML.Describe()), nil },
			"server.xml's edits as a unified diff: `patch -p1 -d / < server.xml.patch`, then restart Tomcat"})
	}
	return out
}

// exportDropIn renders the unit's persistent drop-in as -persist plans
// it: at the same path (returned relative to h's root), merged with a
// drop-in already there, LimitNOFILE capped at the manager's hard limit
// (a higher one makes the unit fail to start); what says so.
func (p Persistence) exportDropIn(h Host) (rel string, data []byte, what string, err error) {
	d := *p.DropIn
	u := h.Tomcat.Instance.Unit()
	u.Persistent = true
	c, err := u.PlanDropIn(func(x *tomcatconf.DropIn) { *x = d })
	if err != nil {
		return "", nil, "", err
	}
	if data, err = c.Written().Render(); err != nil {
		return "", nil, "", err
	}
	what = "the Tomcat unit's limits (" + c.Written().String() + "); `systemctl daemon-reload`, then restart the unit"
	if c.Capped() {
		what += fmt.Sprintf(" (LimitNOFILE=%d capped to %d, systemd's own hard limit on the host that wrote it)", c.Next.LimitNOFILE, c.ManagerNoFile)
	}
	return rootRel(h.Root, c.Path), data, what, nil
}

// persistPrefix begins the name of every step of Persistence.Steps.
const persistPrefix = "persist-"

// pendingJournalError explains err, CreateJournal's refusal of the journal
// at path as pending (tuning.ErrPendingJournal). When every pending record
// is a -persist write that completed, no run was interrupted: the kept files are in force
// on purpose. A new run is still refused until -revert removes them: its
// baseline would be measured with them in force, and its journal would
// replace the only records that remove them.
func pendingJournalError(path string, err error) error {
	entries, rerr := tuning.ReadJournal(path)
	var pending []string
	persisted := rerr == nil
	for _, e := range entries {
		if e.Reverted {
			continue
		}
		pending = append(pending, e.Step)
		persisted = persisted && e.Applied && strings.HasPrefix(e.Step, persistPrefix)
	}
	if !persisted || len(pending) == 0 {
		return fmt.Errorf("%w: a previous run was interrupted; run with -revert -journal %s first", err, path)
	}
	return fmt.Errorf("%w: the files of an earlier -persist run are in force (%s): a new run would measure them as its baseline, and its journal would replace the records that remove them; run -revert -journal %s first (then restart Tomcat)",
		err, strings.Join(pending, ", "), path)
}

// rootRel returns path, which lies under root, relative to root.
func rootRel(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return strings.TrimPrefix(path, "/")
	}
	return rel
}
