//go:build linux

package study

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// stepTuned is the kind of the user's tuned steps: tuned:PROFILE in
// -steps (throughput-performance against network-latency, say).
const stepTuned = "tuned"

// tunedKind switches tuned to one profile for the step, through
// `tuned-adm profile` (persist.TunedActivation), and back after: tuned
// reverts what the profile set when it switches.
func tunedKind() Kind {
	return Kind{Name: stepTuned, Arg: "PROFILE", With: tunedStep}
}

// tunedProfileDirs are where tuned looks for profiles under a root:
// tuned 2.20 (Debian 12) in /usr/lib/tuned/NAME and /etc/tuned/NAME,
// later releases in a profiles/ folder of each.
var tunedProfileDirs = []string{"etc/tuned/profiles", "etc/tuned", "usr/lib/tuned/profiles", "usr/lib/tuned"}

// tunedStep is the step of one tuned:PROFILE.
func tunedStep(profile string) (Kind, error) {
	if !persist.ValidTunedName(profile) {
		return Kind{}, fmt.Errorf("profile %q: want a tuned profile name (letters, digits, '_', '.' or '-'), e.g. throughput-performance", profile)
	}
	name := stepTuned + ":" + profile
	return Kind{Name: name, Title: title("tuned profile " + profile),
		Plan: func(p *planner, _ context.Context) (*tuning.Change, error) {
			ph, err := persist.New(p.h.Root)
			if err != nil {
				return nil, err
			}
			a, err := (&persist.Tuned{}).PlanActivate(ph, profile)
			if err != nil {
				return nil, err
			}
			if slices.Equal(a.Previous, a.Profiles) {
				return &tuning.Change{Describe: a.Describe() + ": already so"}, nil
			}
			return tuning.ChangeFor(a)
		},
		Check: func(h Host) error { return checkTunedProfile(h, profile) },
		Needs: Needs{HostLock: true, Persist: func(pp *persistPlan) error {
			if !pp.p.Tuned {
				return fmt.Errorf("-persist: %s: tuned is not installed here", name)
			}
			// The kept profile is the one nettune's own builds on, or the
			// one activated when nettune keeps nothing else.
			pp.p.Profile.Include = []string{profile}
			pp.tunedBase = profile
			return nil
		}}}, nil
}

// checkTunedProfile refuses a profile tuned does not have (naming those
// it has) and, on the running host, a tuned that is not installed or not
// running (tuned-adm would then only record the choice).
func checkTunedProfile(h Host, profile string) error {
	installed := tunedProfiles(h.Root)
	if !slices.Contains(installed, profile) {
		if len(installed) == 0 {
			return fmt.Errorf("-steps tuned:%s: no tuned profile is installed under %s (is tuned installed? Debian: apt install tuned)",
				profile, strings.Join(rootPaths(h.Root, tunedProfileDirs), ", "))
		}
		return fmt.Errorf("-steps tuned:%s: tuned has no profile %q (no %s/tuned.conf under %s); installed: %s",
			profile, profile, profile, strings.Join(rootPaths(h.Root, tunedProfileDirs), ", "), strings.Join(installed, " "))
	}
	if !h.Live {
		return nil
	}
	if _, err := exec.LookPath("tuned-adm"); err != nil {
		return fmt.Errorf("-steps tuned:%s: tuned-adm not found: %v", profile, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, running, err := (&persist.Tuned{}).Active(ctx)
	if err != nil {
		return fmt.Errorf("-steps tuned:%s: %w", profile, err)
	}
	if !running {
		return fmt.Errorf("-steps tuned:%s: the tuned daemon is not running, so tuned-adm profile would only record the choice: start it (systemctl start tuned) for the study", profile)
	}
	return nil
}

// tunedProfiles lists the profiles installed under root: the folders of
// tunedProfileDirs that hold a tuned.conf, sorted, each once.
func tunedProfiles(root string) []string {
	var names []string
	for _, d := range tunedProfileDirs {
		entries, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(root, d, e.Name(), "tuned.conf")); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// rootPaths are dirs under root, as absolute paths.
func rootPaths(root string, dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.Join(root, "/", d)
	}
	return out
}
