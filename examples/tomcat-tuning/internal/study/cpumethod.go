//go:build linux

package study

import "fmt"

// MethodAuto is the default -cpu-method: affinity when the load runs on
// this host, hotplug when it runs on client machines (-load-host), as the
// guide's does (CPUMethodChoiceOf).
const MethodAuto = "auto"

// CPUMethodChoice is how the study restricts Tomcat's CPUs and why: what
// -cpu-method asked, the method used, and the reason.
type CPUMethodChoice struct {
	// Requested is -cpu-method as given: MethodAuto, MethodHotplug or
	// MethodAffinity.
	Requested string `json:"requested"`
	// Chosen is MethodHotplug or MethodAffinity.
	Chosen string `json:"chosen"`
	// Why says where the load runs and what that leads to, or that the
	// method was given.
	Why string `json:"why"`
}

// String is the choice as the study prints it: "affinity (-cpu-method
// auto: …)".
func (c CPUMethodChoice) String() string {
	return fmt.Sprintf("%s (-cpu-method %s: %s)", c.Chosen, c.Requested, c.Why)
}

// CPUMethodChoiceOf resolves -cpu-method. A given hotplug or affinity is
// used as given. Auto picks from where the load runs:
//
//   - on client machines (-load-host): hotplug, the guide's method, which
//     takes every CPU but Tomcat's offline, as the guide does with its
//     wrk2 client on another machine;
//   - on this host (in this process or a -load-netns namespace):
//     affinity, which splits the CPUs, Tomcat's JVM pinned to its CPUs and
//     the load generator to the others; hotplug would leave the load on
//     Tomcat's CPUs (ErrLoadSharesCPUs);
//   - nowhere (a fixture -root, where nothing is measured): hotplug, the
//     guide's method, for its plan.
//
// Options.Check refuses any other value.
func CPUMethodChoiceOf(o Options) CPUMethodChoice {
	c := CPUMethodChoice{Requested: o.CPUMethod, Chosen: o.CPUMethod, Why: "given"}
	if o.CPUMethod != MethodAuto {
		return c
	}
	switch {
	case o.LoadHost != "":
		c.Chosen = MethodHotplug
		c.Why = fmt.Sprintf("the load runs on %s (-load-host): Tomcat keeps only its CPUs online, as the guide does with its wrk2 client on another machine", o.LoadHost)
	case !o.Live():
		c.Chosen = MethodHotplug
		c.Why = "a fixture -root, where no load runs: the guide's method, for its plan"
	default:
		where := "in this process"
		if o.LoadNetNS != "" {
			where = "in network namespace " + o.LoadNetNS
		}
		c.Chosen = MethodAffinity
		c.Why = "the load runs on this host (" + where + "): the CPUs are split, Tomcat's JVM pinned to its CPUs and the load generator to the others " +
			"(hotplug would leave the load on Tomcat's CPUs)"
	}
	return c
}

// Method is the CPU method the study uses: -cpu-method, with auto
// resolved (CPUMethodChoiceOf).
func (o Options) Method() string { return CPUMethodChoiceOf(o).Chosen }
