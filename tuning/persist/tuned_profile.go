package persist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/nettune/nettune/internal/command"
	"github.com/nettune/nettune/tuning"
)

// TunedProfile is a tuned profile as nettune writes it,
// /etc/tuned/NAME/tuned.conf: tuned (Debian's and RHEL's tuned 2.x)
// applies it at every boot and `tuned-adm verify` checks the live system
// against it. Empty fields are left out.
type TunedProfile struct {
	// Name is the profile's directory under /etc/tuned, what `tuned-adm
	// profile NAME` takes: letters, digits, '_', '.', '-'.
	Name string
	// Summary is [main] summary=, what `tuned-adm list` shows.
	Summary string
	// Include is [main] include=: the profiles this one builds on
	// (usually the active one, so the user's tuning stays).
	Include []string
	// Sysfs is the [sysfs] section: sysfs path = value, e.g.
	// /sys/devices/system/cpu/cpu8/online=0 (OfflineCPUs builds those).
	Sysfs []Setting
	// Sysctl is the [sysctl] section: sysctl name = value, e.g.
	// net.ipv4.tcp_max_tw_buckets=450000.
	Sysctl []Setting
	// Cmdline is [bootloader] cmdline=: kernel parameters tuned adds
	// through /etc/grub.d/00_tuned (effective after a reboot).
	Cmdline string
	// Extra holds further sections, merged last: a [net] section from
	// package nic (parse its text with ParseTunedConf), [cpu], ...
	Extra TunedConf
}

// OfflineCPUs returns the [sysfs] settings that keep cpus offline:
// /sys/devices/system/cpu/cpuN/online=0 for each.
func OfflineCPUs(cpus tuning.CPUSet) []Setting {
	var res []Setting
	for _, id := range cpus.IDs() {
		res = append(res, Setting{Key: "/sys/devices/system/cpu/cpu" + strconv.Itoa(id) + "/online", Value: "0"})
	}
	return res
}

// ValidTunedName reports whether name is a profile name tuned accepts
// (its loader's ^[a-zA-Z0-9_.-]+$), and not "." or "..".
func ValidTunedName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// Conf returns the profile as tuned.conf sections, in the order [main],
// [sysfs], [sysctl], [bootloader], then Extra.
func (p TunedProfile) Conf() TunedConf {
	var c TunedConf
	var main TunedSection
	main.Name = "main"
	if p.Summary != "" {
		main.Options = append(main.Options, Setting{Key: "summary", Value: p.Summary})
	}
	if len(p.Include) > 0 {
		main.Options = append(main.Options, Setting{Key: "include", Value: strings.Join(p.Include, ",")})
	}
	c.Sections = append(c.Sections, main)
	if len(p.Sysfs) > 0 {
		c.Sections = append(c.Sections, TunedSection{Name: "sysfs", Options: append([]Setting(nil), p.Sysfs...)})
	}
	if len(p.Sysctl) > 0 {
		c.Sections = append(c.Sections, TunedSection{Name: "sysctl", Options: append([]Setting(nil), p.Sysctl...)})
	}
	if p.Cmdline != "" {
		c.Sections = append(c.Sections, TunedSection{Name: "bootloader", Options: []Setting{{Key: "cmdline", Value: p.Cmdline}}})
	}
	c.Merge(p.Extra)
	return c
}

// Render returns the profile's tuned.conf. An invalid Name, an included
// name tuned would refuse, or a key or value tuned would read back
// differently is an error naming it.
func (p TunedProfile) Render() ([]byte, error) {
	if !ValidTunedName(p.Name) {
		return nil, fmt.Errorf("persist: tuned profile name %q: want letters, digits, '_', '.' or '-'", p.Name)
	}
	for _, n := range p.Include {
		if !ValidTunedName(n) {
			return nil, fmt.Errorf("persist: tuned profile %s: include %q: want letters, digits, '_', '.' or '-'", p.Name, n)
		}
	}
	body, err := p.Conf().Render()
	if err != nil {
		return nil, fmt.Errorf("persist: tuned profile %s: %w", p.Name, err)
	}
	// The header keeps the name the type had in package tuning, where it
	// was first written, so a file an earlier run wrote is still up to date.
	return append([]byte("# Written by nettune (tuning.TunedProfile); `tuned-adm profile` another\n# profile and remove this directory to undo it.\n"), body...), nil
}

// ParseTunedProfile reads a tuned.conf back into a TunedProfile named
// name: [main] summary= and include= (split at ',' or ';', as tuned does),
// [sysfs], [sysctl], [bootloader] cmdline=; every other section and
// option lands in Extra.
func ParseTunedProfile(name string, data []byte) (TunedProfile, error) {
	c, err := ParseTunedConf(data, name+"/tuned.conf")
	if err != nil {
		return TunedProfile{}, err
	}
	p := TunedProfile{Name: name}
	for _, s := range c.Sections {
		var rest []Setting
		switch s.Name {
		case "main":
			for _, o := range s.Options {
				switch o.Key {
				case "summary":
					p.Summary = o.Value
				case "include":
					for _, n := range strings.FieldsFunc(o.Value, func(r rune) bool { return r == ',' || r == ';' }) {
						if n = strings.TrimSpace(n); n != "" {
							p.Include = append(p.Include, n)
						}
					}
				default:
					rest = append(rest, o)
				}
			}
		case "sysfs":
			p.Sysfs = append(p.Sysfs, s.Options...)
		case "sysctl":
			p.Sysctl = append(p.Sysctl, s.Options...)
		case "bootloader":
			for _, o := range s.Options {
				if o.Key == "cmdline" {
					p.Cmdline = o.Value
				} else {
					rest = append(rest, o)
				}
			}
		default:
			rest = s.Options
		}
		if len(rest) > 0 || (s.Name != "main" && s.Name != "sysfs" && s.Name != "sysctl" && s.Name != "bootloader") {
			p.Extra.Sections = append(p.Extra.Sections, TunedSection{Name: s.Name, Options: rest})
		}
	}
	return p, nil
}

// TunedProfilePath returns ROOT/etc/tuned/NAME/tuned.conf.
func (h *Host) TunedProfilePath(name string) (string, error) {
	if !ValidTunedName(name) {
		return "", fmt.Errorf("persist: tuned profile name %q: want letters, digits, '_', '.' or '-'", name)
	}
	return h.root.Etc("tuned", name, "tuned.conf"), nil
}

// PlanTunedProfile returns the edit that writes p to
// ROOT/etc/tuned/NAME/tuned.conf (see FileEdit); its Undo removes the
// profile and its directory, or puts the previous file back. It changes
// nothing.
func (h *Host) PlanTunedProfile(p TunedProfile) (FileEdit, error) {
	data, err := p.Render()
	if err != nil {
		return FileEdit{}, err
	}
	path, err := h.TunedProfilePath(p.Name)
	if err != nil {
		return FileEdit{}, err
	}
	return PlanFile(path, data)
}

// WriteTunedProfile writes p to ROOT/etc/tuned/NAME/tuned.conf (creating
// the directory) safely, and returns the applied edit, whose Undo puts
// back what was there. It does not activate the profile (Tuned.Activate
// does). It needs write access to /etc/tuned (root).
func (h *Host) WriteTunedProfile(p TunedProfile) (FileEdit, error) {
	e, err := h.PlanTunedProfile(p)
	if err != nil {
		return e, err
	}
	return planAndWrite(e.Path, e.Data)
}

// TunedProfile reads ROOT/etc/tuned/NAME/tuned.conf, or
// ROOT/usr/lib/tuned/NAME/tuned.conf (tuned's shipped profiles) when
// there is none, as tuned looks them up. A missing profile is an error
// matching os.ErrNotExist.
func (h *Host) TunedProfile(name string) (TunedProfile, error) {
	if !ValidTunedName(name) {
		return TunedProfile{}, fmt.Errorf("persist: tuned profile name %q: want letters, digits, '_', '.' or '-'", name)
	}
	var firstErr error
	for _, p := range []string{h.root.Etc("tuned", name, "tuned.conf"), h.root.Path("usr", "lib", "tuned", name, "tuned.conf")} {
		data, err := os.ReadFile(p)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return ParseTunedProfile(name, data)
	}
	return TunedProfile{}, fmt.Errorf("persist: tuned profile %s: %w", name, firstErr)
}

// ActiveTunedProfile reads ROOT/etc/tuned/active_profile: the profiles tuned
// applies at start, as `tuned-adm profile` left them (several names when
// profiles are merged). None (an empty or missing file: `tuned-adm off`,
// or tuned never set up) is an empty list and no error.
func (h *Host) ActiveTunedProfile() ([]string, error) {
	data, err := os.ReadFile(h.root.Etc("tuned", "active_profile"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("persist: %w", err)
	}
	return strings.Fields(string(data)), nil
}

// CommandRunner runs a command and returns what it wrote to stdout and
// stderr together; a non-zero exit is an error. Replace it to record the
// commands, to make a dry run, or to run them in a container.
type CommandRunner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

type hostRunner struct{}

func (hostRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return command.Run(ctx, command.Spec{Path: name, Args: args})
}

// Tuned drives tuned through tuned-adm(8). The zero value runs tuned-adm
// on this host.
type Tuned struct {
	// Runner runs tuned-adm. Default nil: on this host.
	Runner CommandRunner
}

func (t *Tuned) run(ctx context.Context, args ...string) ([]byte, error) {
	r := t.Runner
	if r == nil {
		r = hostRunner{}
	}
	out, err := r.Run(ctx, "tuned-adm", args...)
	if err != nil {
		if o := strings.TrimSpace(string(out)); o != "" && !strings.Contains(err.Error(), o) {
			return out, fmt.Errorf("persist: tuned-adm %s: %w: %s", strings.Join(args, " "), err, o)
		}
		return out, fmt.Errorf("persist: tuned-adm %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// Activate runs `tuned-adm profile NAME...`: tuned applies the profiles
// (merged, in order) now and at every start. It needs root and a running
// tuned daemon (without one, tuned-adm only records the choice).
func (t *Tuned) Activate(ctx context.Context, names ...string) error {
	if len(names) == 0 {
		return errors.New("persist: tuned-adm profile needs a profile name")
	}
	for _, n := range names {
		if !ValidTunedName(n) {
			return fmt.Errorf("persist: tuned profile name %q: want letters, digits, '_', '.' or '-'", n)
		}
	}
	_, err := t.run(ctx, append([]string{"profile"}, names...)...)
	return err
}

// Active runs `tuned-adm active` and returns the active profiles (none:
// an empty list), and whether the daemon is running (tuned-adm says
// "preset profile" when it is not).
func (t *Tuned) Active(ctx context.Context) (profiles []string, running bool, err error) {
	out, err := t.run(ctx, "active")
	if err != nil {
		return nil, false, err
	}
	return ParseTunedAdmActive(out)
}

// ParseTunedAdmActive parses what `tuned-adm active` prints: "Current
// active profile: NAMES" (daemon running), "No current active profile."
// or, without a daemon, "Preset profile: NAMES". Anything else is an
// error quoting it.
func ParseTunedAdmActive(out []byte) (profiles []string, running bool, err error) {
	running = true
	found := false
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "It seems that tuned daemon is not running"):
			running = false
		case strings.HasPrefix(l, "Current active profile:"):
			profiles, found = strings.Fields(strings.TrimPrefix(l, "Current active profile:")), true
		case strings.HasPrefix(l, "Preset profile:"):
			profiles, found, running = strings.Fields(strings.TrimPrefix(l, "Preset profile:")), true, false
		case l == "No current active profile.":
			profiles, found = nil, true
		}
	}
	if !found {
		return nil, false, fmt.Errorf("persist: tuned-adm active printed %q; want \"Current active profile: NAME\" or \"No current active profile.\"", strings.TrimSpace(string(out)))
	}
	return profiles, running, nil
}

// Verify runs `tuned-adm verify`: nil when the live system matches the
// active profile; otherwise an error holding tuned-adm's output (tuned's
// log, /var/log/tuned/tuned.log, names the differing values).
func (t *Tuned) Verify(ctx context.Context) error {
	_, err := t.run(ctx, "verify")
	return err
}

// Off runs `tuned-adm off`: tuned reverts the active profile's settings
// and applies none, now and at the next start.
func (t *Tuned) Off(ctx context.Context) error {
	_, err := t.run(ctx, "off")
	return err
}

// TunedActivation is switching tuned to other profiles as a value, in the
// shape of tuning.Reversible: the profiles it activates and those active before
// (none: tuned was off), which Undo activates again (or `tuned-adm off`).
// Marshalled as JSON it is all a journal needs (tuning.ChangeFor, and
// tuning.AddReverter[TunedActivation] to revert it); Runner is not journaled, so a
// revert after a crash runs tuned-adm on this host.
type TunedActivation struct {
	Profiles []string `json:"profiles"`
	Previous []string `json:"previous"`
	// Runner runs tuned-adm (Tuned.Runner). Default nil: on this host.
	Runner CommandRunner `json:"-"`
}

// Kind is the journal kind of TunedActivation records: tuned's profile switch.
func (TunedActivation) Kind() string { return "tuned-activation" }

// PlanActivate returns the activation of names, with the profiles active
// now read from ROOT/etc/tuned/active_profile of h. It changes nothing.
func (t *Tuned) PlanActivate(h *Host, names ...string) (TunedActivation, error) {
	if len(names) == 0 {
		return TunedActivation{}, errors.New("persist: tuned activation needs a profile name")
	}
	prev, err := h.ActiveTunedProfile()
	if err != nil {
		return TunedActivation{}, err
	}
	return TunedActivation{Profiles: append([]string(nil), names...), Previous: prev, Runner: t.Runner}, nil
}

func (a TunedActivation) tuned() *Tuned { return &Tuned{Runner: a.Runner} }

// Describe says which profiles are replaced by which.
func (a TunedActivation) Describe() string {
	before := strings.Join(a.Previous, " ")
	if before == "" {
		before = "(none)"
	}
	return fmt.Sprintf("tuned profile: %s -> %s (tuned-adm profile; tuned applies it now and at every boot)", before, strings.Join(a.Profiles, " "))
}

// Apply runs `tuned-adm profile NAMES`.
func (a TunedActivation) Apply(ctx context.Context) error {
	return a.tuned().Activate(ctx, a.Profiles...)
}

// Verify checks with `tuned-adm active` that the profiles are active.
func (a TunedActivation) Verify(ctx context.Context) error {
	got, _, err := a.tuned().Active(ctx)
	if err != nil {
		return err
	}
	if strings.Join(got, " ") != strings.Join(a.Profiles, " ") {
		return fmt.Errorf("persist: tuned-adm active says %q, want %q", strings.Join(got, " "), strings.Join(a.Profiles, " "))
	}
	return nil
}

// Undo activates the previous profiles again, or runs `tuned-adm off`
// when there were none.
func (a TunedActivation) Undo(ctx context.Context) error {
	if len(a.Previous) == 0 {
		return a.tuned().Off(ctx)
	}
	return a.tuned().Activate(ctx, a.Previous...)
}
