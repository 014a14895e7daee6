//go:build linux

package study

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/internal/statedir"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
	"golang.org/x/sys/unix"
)

// Defaults of the measurement options: each step is warmed up until its
// rate stops climbing, then measured by DefaultRepeat saturating runs and
// one run at the common rate, so the study takes a few minutes on a
// 2-core machine.
const (
	// DefaultRate 0 sets the common latency rate to DefaultLatencyShare
	// of the baseline's capacity.
	DefaultRate         = 0
	DefaultLatencyShare = loadgen.DefaultLatencyShare
	DefaultCapacityRate = loadgen.DefaultCapacityRate
	DefaultRepeat       = stats.DefaultRepeat // enough runs for the U test to answer
	DefaultAlpha        = stats.DefaultAlpha
	// DefaultConnections 0 sizes the load to the server (SizeLoad):
	// from Tomcat's CPU count, doubled on the baseline until the
	// capacity stops growing.
	DefaultConnections = 0
	DefaultDuration    = 5 * time.Second
	// DefaultWarmUp bounds a warm-up at 3 minutes, six times loadgen's
	// 30 s: a warm-up ends as soon as it settles, and a JVM pinned to one
	// CPU of this 2-CPU host was still climbing at 30 s (PERF.md: 2.6k to
	// 31k req/s, its compilers busy), so every uplift from it was
	// "unsettled".
	DefaultWarmUp     = 3 * time.Minute
	DefaultWarmUpStep = loadgen.DefaultWarmUpInterval
	DefaultCPUs       = 8
)

// How the study restricts Tomcat's CPUs (Options.CPUMethod; MethodAuto
// picks one of them).
const (
	MethodHotplug  = "hotplug"  // the guide's: other CPUs offline
	MethodAffinity = "affinity" // the JVM pinned; the host unchanged
)

// Options are everything the study is told: the command line's flags,
// checked in one place (Check).
type Options struct {
	// Apply runs the steps; false plans and measures a baseline only.
	Apply bool
	// Keep leaves the changes in place after Apply.
	Keep bool
	// Journal is the journal file of Apply and Revert.
	Journal string
	// Steps names the steps to run, in order (StepNames by default).
	Steps []string
	// Home, Base and Port choose the Tomcat instance and its HTTP
	// Connector ("" finds them); URL is the page to measure ("" the
	// HelloWorld page on the Connector).
	Home, Base, Port, URL string
	// CPUs is the CPU count the guide's steps give Tomcat, capped to the
	// host's; CPUMethod is MethodAuto (the default: Method resolves it
	// from where the load runs), MethodHotplug or MethodAffinity.
	CPUs      int
	CPUMethod string
	// The measurement: Rate is the common latency rate (0: a share of
	// the baseline's capacity), CapacityRate the offered rate of the
	// Repeat saturating runs, each Duration long on Connections
	// connections (0: sized to the server on the baseline, SizeLoad),
	// after a warm-up of at most WarmUp in runs of WarmUpStep (WarmUp 0:
	// none).
	Rate, CapacityRate  float64
	Repeat, Connections int
	// Alpha is the significance level of the uplifts' Mann-Whitney U
	// test (benchstat's -alpha).
	Alpha              float64
	Duration           time.Duration
	WarmUp, WarmUpStep time.Duration
	// JSONFile and PlotFile, when set, get the step table as JSON and as
	// an SVG bar chart.
	JSONFile, PlotFile string
	// Wide (with Apply) prints the step table with every column
	// (StepTable); default false: the table fits TableWidth columns.
	Wide bool
	// Grub is the GRUB defaults file ("" ROOT/etc/default/grub); Root the
	// host root ("/" the running host, else a fixture for planning);
	// Iface the NIC to tune ("" the one holding the URL's address).
	Grub, Root, Iface string
	// Persist (with Apply) makes the kept steps survive a reboot: a tuned
	// profile or systemd pieces, the unit's persistent drop-in and
	// server.xml's edits, each journaled for -revert.
	Persist bool
	// PersistSteps names the steps -persist and -export keep; empty keeps
	// the significant gains (and the baseline's steps).
	PersistSteps []string
	// Export, when set, writes the same files into this folder instead,
	// changing nothing on the host.
	Export string
	// LoadNetNS runs every load inside this network namespace (ip netns).
	LoadNetNS string
	// LoadSharesCPUs lets -apply measure with the load on this host's
	// CPUs that Tomcat runs on (hotplug, or affinity with none left over),
	// which it otherwise refuses (ErrLoadSharesCPUs). Every figure is
	// then marked (Results.SharedCPUs).
	LoadSharesCPUs bool
	// LoadHost runs every load on this client machine, [USER@]HOST[:PORT],
	// through OpenSSH's ssh (remoteload.SSHClient), or on several,
	// comma-separated, one shard each (remoteload.Clients); SSHConfig is
	// passed as ssh -F; LoadWorker is the worker binary copied there
	// (default: the study's own, for a client of this machine's
	// architecture).
	LoadHost, SSHConfig, LoadWorker string
	// Search is SearchOn to measure candidates where the guide applies a
	// rule (maxThreads, the queue count) and keep the best, SearchOff to
	// apply the guide's rules exactly.
	Search string
	// Targets, when not empty, are the requests every load of the study
	// sends (loadgen.Config.Targets: round-robin per connection) instead
	// of a GET of the URL, read from TargetsFile (-targets, vegeta's
	// format). A target's URL is a path on the URL's host, or an absolute
	// URL with the URL's scheme, host and port.
	Targets     []loadgen.Target
	TargetsFile string
	// ThreadCandidates and QueueCandidates, when not empty, are the
	// values the search measures beside the guide's rule and the value
	// before the step, in place of those it would pick (the census, 2×
	// and 4× the CPUs; one queue, CPUs / 2, the device's maximum).
	// Queue counts above the device's maximum are capped to it.
	ThreadCandidates, QueueCandidates []int
}

// DefaultOptions returns the options with every default.
func DefaultOptions() Options {
	return Options{Journal: DefaultJournal(), Steps: StepNames(), CPUs: DefaultCPUs, CPUMethod: MethodAuto,
		Rate: DefaultRate, CapacityRate: DefaultCapacityRate, Repeat: DefaultRepeat, Alpha: DefaultAlpha, Connections: DefaultConnections,
		Duration: DefaultDuration, WarmUp: DefaultWarmUp, WarmUpStep: DefaultWarmUpStep, Root: "/", Search: SearchOn}
}

// DefaultJournal is the study's journal in the state directory
// (internal/statedir): /var/lib/nettune for root.
func DefaultJournal() string { return filepath.Join(statedir.Dir(), "tomcat-tuning.journal") }

// Live reports whether the options are about the running host, not a
// fixture root.
func (o Options) Live() bool { return o.Root == "/" }

// Check checks every option, before anything is read or changed; the
// error names the flag, the value and the expected form. A value or a
// combination wrong in itself is a usage error (errors.Is(err,
// cliflag.ErrUsage)); one the host refuses (a folder that cannot be
// written, a missing interface or command) is not.
func (o Options) Check() error {
	if err := o.checkValues(); err != nil {
		return cliflag.Usage(err)
	}
	if o.Export != "" {
		if fi, err := os.Stat(o.Export); err == nil && !fi.IsDir() {
			return fmt.Errorf("-export %s: a file, want a folder to write into", o.Export)
		}
		if err := checkOutput("-export", filepath.Join(o.Export, "README.md")); err != nil {
			if _, serr := os.Stat(o.Export); serr == nil {
				return err
			}
			if err := checkOutput("-export", o.Export); err != nil {
				return err
			}
		}
	}
	for _, f := range []struct{ flag, path string }{{"-json", o.JSONFile}, {"-plot", o.PlotFile}} {
		if err := checkOutput(f.flag, f.path); err != nil {
			return err
		}
	}
	if o.Iface != "" && o.Live() {
		if _, err := net.InterfaceByName(o.Iface); err != nil {
			return fmt.Errorf("-iface %q: %w (want an interface of this network namespace, as `ip link` lists them)", o.Iface, err)
		}
	}
	if err := o.checkLoadHostEnv(); err != nil {
		return err
	}
	if err := o.checkLoadNetNSEnv(); err != nil {
		return err
	}
	return o.checkLocalLoad()
}

// checkValues checks what the options say, alone and together, without
// looking at the host.
func (o Options) checkValues() error {
	switch {
	case o.CPUMethod != MethodAuto && o.CPUMethod != MethodHotplug && o.CPUMethod != MethodAffinity:
		return fmt.Errorf("-cpu-method %q: want %s, %s or %s", o.CPUMethod, MethodAuto, MethodHotplug, MethodAffinity)
	case o.CPUs < 1:
		return fmt.Errorf("-cpus %d: want 1 or more", o.CPUs)
	case o.Search != SearchOn && o.Search != SearchOff:
		return fmt.Errorf("-search %q: want %s (measure candidates where the guide applies a rule) or %s (the guide's rules exactly)", o.Search, SearchOn, SearchOff)
	case o.Search == SearchOff && len(o.ThreadCandidates)+len(o.QueueCandidates) > 0:
		return errors.New("-threads-candidates and -queues-candidates are measured by the search: drop -search=false")
	case o.CapacityRate <= 0 || math.IsInf(o.CapacityRate, 0) || math.IsNaN(o.CapacityRate):
		return fmt.Errorf("-capacity-rate %g: want requests/s > 0, far above what Tomcat answers", o.CapacityRate)
	case o.Repeat < 1:
		return fmt.Errorf("-repeat %d: want 1 or more capacity runs per step", o.Repeat)
	case o.Rate < 0 || math.IsInf(o.Rate, 0) || math.IsNaN(o.Rate):
		return fmt.Errorf("-latency-rate %g: want requests/s > 0, or 0 for %.0f%% of the baseline's capacity", o.Rate, 100*DefaultLatencyShare)
	case !(o.Alpha > 0 && o.Alpha < 1):
		return fmt.Errorf("-alpha %g: want a significance level between 0 and 1, such as 0.05", o.Alpha)
	case o.Connections < 0:
		return fmt.Errorf("-connections %d: want 1 or more, or 0 to size the load to the server", o.Connections)
	case o.Duration <= 0:
		return fmt.Errorf("-duration %s: want > 0", o.Duration)
	case o.WarmUp < 0:
		return fmt.Errorf("-warmup %s: want >= 0 (0: no warm-up)", o.WarmUp)
	case o.WarmUpStep <= 0:
		return fmt.Errorf("-warmup-interval %s: want > 0", o.WarmUpStep)
	case o.Persist && !o.Apply:
		return errors.New("-persist keeps what -apply measured: give -apply too (or -export DIR to write the files without changing the host)")
	case o.Persist && o.Keep:
		return errors.New("-persist makes the gains survive a reboot; -keep leaves this run's runtime state: give one of them")
	case o.Apply && !o.Live():
		return errors.New("-apply changes the running host: it cannot be used with -root")
	}
	if _, err := checkSteps(o.Steps); err != nil {
		return err
	}
	if o.URL != "" {
		if err := loadgen.CheckURL(o.URL); err != nil {
			return fmt.Errorf("-url: %w", err)
		}
	}
	if err := o.checkTargets(); err != nil {
		return err
	}
	if err := o.checkLoadHostValues(); err != nil {
		return err
	}
	return o.checkLoadNetNSName()
}

// ErrLoadSharesCPUs is the cause of a refused -apply whose load would run
// on the CPUs Tomcat is measured on: every figure would then measure
// Tomcat and the load generator fighting for the same cores.
var ErrLoadSharesCPUs = errors.New("the load generator would run on Tomcat's CPUs")

// loadFix names the ways to give the load CPUs of its own. A load from
// -load-netns is no way out: the namespace is on this host, its worker
// on the same CPUs.
const loadFix = "run the load from a client with -load-host [USER@]HOST[:PORT] (the guide's wrk2 machine, through ssh), " +
	"or use -cpu-method affinity with CPUs left for the load (-cpus below this host's online CPUs), " +
	"or measure anyway with -load-shares-cpus (every figure is then marked)"

// loadWhere says where a load on this host runs, for the refusal.
func (o Options) loadWhere() string {
	if o.LoadNetNS != "" {
		return fmt.Sprintf("the load in network namespace %s, on this host", o.LoadNetNS)
	}
	return "the load in this process"
}

// checkLocalLoad refuses -apply under hotplug with the load on this host,
// in this process or in a network namespace: hotplug takes every CPU but
// Tomcat's offline, so the load generator would run on Tomcat's CPUs.
// (Affinity with no CPU left is refused by Apply, which knows the host's
// CPUs.)
func (o Options) checkLocalLoad() error {
	if o.Apply && o.LoadHost == "" && o.Method() == MethodHotplug && !o.LoadSharesCPUs {
		return fmt.Errorf("-apply with -cpu-method %s and %s: %w (hotplug takes the other CPUs offline): %s",
			MethodHotplug, o.loadWhere(), ErrLoadSharesCPUs, loadFix)
	}
	return nil
}

// checkLoadCPUs refuses -apply with a load on this host under affinity
// when the host leaves no CPU beside Tomcat's for the load (one online
// CPU).
func checkLoadCPUs(h Host, o Options) error {
	if sharesCPUs(h, o) && o.Method() == MethodAffinity && !o.LoadSharesCPUs {
		return fmt.Errorf("-apply with -cpu-method %s gives Tomcat CPUs %s, every online CPU (%s), and %s: %w: %s",
			methodGiven(o), h.CPUs.Tomcat, h.CPUs.Online, o.loadWhere(), ErrLoadSharesCPUs, loadFix)
	}
	return nil
}

// sharesCPUs reports whether an -apply run's load runs on Tomcat's CPUs:
// on this host (no -load-host) under hotplug, or under affinity with no
// CPU left over.
func sharesCPUs(h Host, o Options) bool {
	if o.LoadHost != "" {
		return false
	}
	return o.Method() == MethodHotplug || (o.Method() == MethodAffinity && h.CPUs.Load.IsEmpty())
}

// SharedCPUsText is the mark of a run whose load ran on Tomcat's CPUs
// (-load-shares-cpus), for Results.SharedCPUs; "" when the load had CPUs
// of its own.
func SharedCPUsText(h Host, o Options) string {
	if !o.Apply || !sharesCPUs(h, o) {
		return ""
	}
	return fmt.Sprintf("the load generator ran on Tomcat's CPUs %s (-load-shares-cpus, -cpu-method %s): every figure measures Tomcat and the generator together",
		h.CPUs.Tomcat, methodGiven(o))
}

// methodGiven names the CPU method for a message: "affinity", or "auto
// (affinity)" when auto chose it.
func methodGiven(o Options) string {
	if o.CPUMethod == MethodAuto {
		return fmt.Sprintf("%s (%s)", MethodAuto, o.Method())
	}
	return o.CPUMethod
}

// checkOutput checks, before the study runs, that an output file can be
// written at the end: its folder exists and is writable, and the path is
// not a folder. Nothing is created.
func checkOutput(flag, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s: a folder, want a file to write", flag, path)
	}
	target := path
	if _, err := os.Stat(path); err != nil {
		target = filepath.Dir(path)
	}
	if err := unix.Access(target, unix.W_OK); err != nil {
		return fmt.Errorf("%s %s: cannot be written (%s: %w): the figures would be lost at the end of the study", flag, path, target, err)
	}
	return nil
}

// checkLoadHostValues checks -load-host and the flags that go with it:
// one or several clients (comma-separated), loading a URL they can reach
// (not loopback).
func (o Options) checkLoadHostValues() error {
	if o.LoadHost == "" {
		switch {
		case o.SSHConfig != "":
			return fmt.Errorf("-ssh-config %q without -load-host: give the client to load from", o.SSHConfig)
		case o.LoadWorker != "":
			return fmt.Errorf("-load-worker %q without -load-host: give the client to load from", o.LoadWorker)
		}
		return nil
	}
	hosts, err := remoteload.ParseLoadHosts(o.LoadHost, o.SSHConfig)
	if err != nil {
		return err
	}
	if o.Connections != 0 && o.Connections < len(hosts) {
		return fmt.Errorf("-connections %d: the %d clients of -load-host split the connections: want %d or more", o.Connections, len(hosts), len(hosts))
	}
	switch {
	case o.LoadNetNS != "":
		return fmt.Errorf("-load-host %q and -load-netns %q: give one place for the load", o.LoadHost, o.LoadNetNS)
	case o.URL == "":
		return fmt.Errorf("-load-host %q needs -url http://SERVER:PORT/PATH with an address of this host the client reaches", o.LoadHost)
	}
	if err := loadgen.CheckURL(o.URL); err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	if u, err := url.Parse(o.URL); err == nil {
		if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
			return fmt.Errorf("-url %q is a loopback address: the client %s would load itself; give an address of this host it reaches", o.URL, o.LoadHost)
		}
	}
	return nil
}

// checkLoadHostEnv checks what -load-host needs of this host: ssh, and
// the files -ssh-config and -load-worker name.
func (o Options) checkLoadHostEnv() error {
	if o.LoadHost == "" {
		return nil
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		return fmt.Errorf("-load-host %q runs the load through ssh: %w (install openssh-client)", o.LoadHost, err)
	}
	if o.SSHConfig != "" {
		if _, err := os.Stat(o.SSHConfig); err != nil {
			return fmt.Errorf("-ssh-config: %w", err)
		}
	}
	if o.LoadWorker != "" {
		if _, err := remoteload.ELFArch(o.LoadWorker); err != nil {
			return fmt.Errorf("-load-worker: %w", err)
		}
	}
	return nil
}

// checkTarget checks, before the host is changed, that the URL the study
// measures reaches the Connector it tunes: its port is a Connector's
// (when server.xml's ports are numbers).
func checkTarget(h Host) error {
	u, err := url.Parse(h.NIC.URL)
	if err != nil {
		return fmt.Errorf("-url %q: %w", h.NIC.URL, err)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	var ports []string
	for _, c := range h.Tomcat.Connectors {
		if _, err := strconv.Atoi(c.Port); err != nil {
			return nil // a ${port} placeholder: cannot tell
		}
		if c.Port == port {
			return nil
		}
		ports = append(ports, c.Port)
	}
	if len(ports) == 0 {
		return nil
	}
	return fmt.Errorf("-url %s: port %s is none of the Connectors' in %s (%s): the load would not reach the Tomcat the study tunes",
		h.NIC.URL, port, h.Tomcat.Instance.ServerXML(), strings.Join(ports, ", "))
}

// checkLoadNetNSName checks -load-netns is a namespace's name.
func (o Options) checkLoadNetNSName() error {
	if name := o.LoadNetNS; name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("-load-netns %q: want the name of a namespace in %s (as `ip netns list` shows it)", name, remoteload.NetNSDir)
	}
	return nil
}

// checkLoadNetNSEnv checks -load-netns names a namespace `ip netns`
// knows.
func (o Options) checkLoadNetNSEnv() error {
	name := o.LoadNetNS
	if name == "" {
		return nil
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("-load-netns %q runs the load through `ip netns exec`: %w (install iproute2)", name, err)
	}
	if _, err := os.Stat(filepath.Join(remoteload.NetNSDir, name)); err != nil {
		return fmt.Errorf("-load-netns %q: %w (create it with `ip netns add %s`, with a route to the URL's host)", name, err, name)
	}
	return nil
}

// checkTargets refuses, before anything runs, a target loadgen would
// refuse with the URL (loadgen.CheckTargets): one not on the URL's scheme,
// host and port, since a load keeps one pool of connections.
func (o Options) checkTargets() error {
	if len(o.Targets) == 0 || o.URL == "" {
		return nil
	}
	want, err := url.Parse(o.URL)
	if err != nil {
		return fmt.Errorf("-url %q: %w", o.URL, err)
	}
	for i, tg := range o.Targets {
		if err := loadgen.CheckTargets(o.URL, []loadgen.Target{tg}); err != nil {
			return fmt.Errorf("-targets %s: target %d, %s %s: want a path or a URL on %s://%s, the study's -url",
				o.TargetsFile, i+1, firstNonEmpty(tg.Method, "GET"), tg.URL, want.Scheme, want.Host)
		}
	}
	return nil
}

// LoadConfig is the one loadgen.Config every load of the study is derived
// from (warm-up, capacity, latency, census): the URL, -connections,
// -duration and the -targets. MeasureStep and the census set the rest.
func (o Options) LoadConfig(url string) loadgen.Config {
	return loadgen.Config{URL: url, Connections: o.Connections, Duration: o.Duration, Targets: o.Targets}
}

// The largest values the candidates' flags take (ParseCandidates), so
// that a typo fails before anything runs: a pool of 100000 threads, and
// 65535 queues, far above any NIC's channel count.
const (
	MaxThreadCandidate = 100000
	MaxQueueCandidate  = 65535
)

// ParseCandidates parses the values of -threads-candidates or
// -queues-candidates (flag): a comma-separated list of whole numbers from
// 1 to most, each once.
func ParseCandidates(flag, list string, most int) ([]int, error) {
	var vs []int
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		switch {
		case err != nil || v < 1 || v > most:
			return nil, fmt.Errorf("-%s: %q: want whole numbers from 1 to %d, comma-separated, e.g. 16,32,64", flag, f, most)
		case slices.Contains(vs, v):
			return nil, fmt.Errorf("-%s: %d named twice", flag, v)
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 && list != "" {
		return nil, fmt.Errorf("-%s %q: no value; want e.g. 16,32,64", flag, list)
	}
	return vs, nil
}

// ParseSteps splits a -steps list ("threads, access-log") into step
// names, checking each is known and named once. A comma that belongs to
// a step (a JVM option's, jvm:-XX:CompileCommand=exclude\,java/lang/String.indexOf)
// is written "\,"; a list item of a study file's "steps" may hold a comma
// as it is (cliflag writes it so).
func ParseSteps(list string) ([]string, error) {
	var names []string
	for _, name := range splitSteps(list) {
		if name = strings.TrimSpace(name); name != "" {
			names = append(names, name)
		}
	}
	return checkSteps(names)
}

// splitSteps splits list at the commas not escaped as "\,", and turns
// each "\," into ",".
func splitSteps(list string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(list); i++ {
		switch {
		case list[i] == '\\' && i+1 < len(list) && list[i+1] == ',':
			cur.WriteByte(',')
			i++
		case list[i] == ',':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(list[i])
		}
	}
	return append(out, cur.String())
}

func checkSteps(names []string) ([]string, error) {
	seen := map[string]bool{}
	for _, name := range names {
		_, ok, err := lookupKind(name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("-steps: unknown step %q; want some of %s", name, kindForms())
		}
		if seen[name] {
			return nil, fmt.Errorf("-steps: %q named twice", name)
		}
		seen[name] = true
	}
	if len(names) == 0 {
		return nil, errors.New("-steps: no step named")
	}
	return names, nil
}
