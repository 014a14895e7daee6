package tuning

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
)

// CPU is one logical CPU as sysfs shows it.
type CPU struct {
	ID int `json:"id"`
	// Online reports whether the CPU is in the online list.
	Online bool `json:"online"`
	// Hotpluggable reports whether cpuN/online exists, that is whether the
	// kernel lets the CPU be taken offline.
	Hotpluggable bool `json:"hotpluggable"`
	// Node is the NUMA node of the cpuN/nodeM link, or -1 when there is
	// none. Offline CPUs keep their link.
	Node int `json:"node"`
}

// CPUState is the hotplug state of every CPU under a host root.
type CPUState struct {
	// Possible is /sys/devices/system/cpu/possible: every id the kernel
	// could ever bring up. Present when the file is missing.
	Possible CPUSet `json:"possible"`
	// Present is /sys/devices/system/cpu/present: the CPUs that exist.
	// The cpuN directories when the file is missing.
	Present CPUSet `json:"present"`
	// Online is /sys/devices/system/cpu/online. When the file is missing
	// (some captured trees) it is built from the cpuN/online files, a CPU
	// without one counting as online.
	Online CPUSet `json:"online"`
	// Offline is /sys/devices/system/cpu/offline, the kernel's list:
	// possible but not online, so it can include CPUs that are not
	// present. Possible minus Online when the file is missing.
	Offline CPUSet `json:"offline"`
	// CPUs has one entry per cpuN directory, in ascending id order.
	CPUs []CPU `json:"cpus"`
}

// CPU returns the entry for id and whether there is one.
func (s CPUState) CPU(id int) (CPU, bool) {
	i := sort.Search(len(s.CPUs), func(i int) bool { return s.CPUs[i].ID >= id })
	if i < len(s.CPUs) && s.CPUs[i].ID == id {
		return s.CPUs[i], true
	}
	return CPU{}, false
}

// Hotpluggable returns the CPUs that have a cpuN/online file.
func (s CPUState) Hotpluggable() CPUSet {
	var ids []int
	for _, c := range s.CPUs {
		if c.Hotpluggable {
			ids = append(ids, c.ID)
		}
	}
	return cpuset.Of(ids...)
}

// PresentOffline returns the present CPUs that are not online: what lscpu
// prints as "Off-line CPU(s) list".
func (s CPUState) PresentOffline() CPUSet { return s.Present.Difference(s.Online) }

// cpuDir returns /sys/devices/system/cpu/elem... under the root.
func (h *Host) cpuDir(elem ...string) string {
	return h.root.Sys(append([]string{"devices", "system", "cpu"}, elem...)...)
}

func cpuName(id int) string { return "cpu" + strconv.Itoa(id) }

// readList reads a cpulist attribute; ok is false when the file is missing.
func readList(path string) (set CPUSet, ok bool, err error) {
	s, err := hostfs.ReadString(path)
	if errors.Is(err, os.ErrNotExist) {
		return CPUSet{}, false, nil
	}
	if err != nil {
		return CPUSet{}, false, fmt.Errorf("tuning: %w", err)
	}
	set, err = cpuset.ParseNamed(s, path)
	if err != nil {
		return CPUSet{}, false, fmt.Errorf("tuning: %w", err)
	}
	return set, true, nil
}

// numbered lists the entries of dir named prefix followed by a decimal
// number ("cpu12", "node1") and returns the numbers in ascending order.
func numbered(dir, prefix string) ([]int, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, de := range des {
		rest, ok := strings.CutPrefix(de.Name(), prefix)
		if !ok || rest == "" || strings.TrimLeft(rest, "0123456789") != "" {
			continue
		}
		if len(rest) > 1 && rest[0] == '0' {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n > cpuset.MaxID {
			continue
		}
		ids = append(ids, n)
	}
	sort.Ints(ids)
	return ids, nil
}

// parseOnlineFlag parses the content of a cpuN/online file: "0" or "1".
func parseOnlineFlag(s, path string) (bool, error) {
	switch hostfs.Trim(s) {
	case "1":
		return true, nil
	case "0":
		return false, nil
	}
	return false, fmt.Errorf("tuning: %s holds %q; expected 0 or 1", path, hostfs.Trim(s))
}

// CPUState reads the hotplug state of every CPU: the possible, present,
// online and offline lists in /sys/devices/system/cpu, and for each cpuN
// directory whether cpuN/online exists (hot-pluggable) and its cpuN/nodeM
// link. It needs no privilege. A malformed list is an error naming the
// file and the text.
func (h *Host) CPUState() (CPUState, error) {
	var st CPUState
	dir := h.cpuDir()
	ids, err := numbered(dir, "cpu")
	if err != nil {
		return st, fmt.Errorf("tuning: list cpus: %w", err)
	}
	present, ok, err := readList(h.cpuDir("present"))
	if err != nil {
		return st, err
	}
	if !ok {
		present = cpuset.Of(ids...)
	}
	possible, ok, err := readList(h.cpuDir("possible"))
	if err != nil {
		return st, err
	}
	if !ok {
		possible = present
	}
	online, haveOnline, err := readList(h.cpuDir("online"))
	if err != nil {
		return st, err
	}
	var fromFlags []int
	for _, id := range ids {
		c := CPU{ID: id, Node: -1}
		flagPath := h.cpuDir(cpuName(id), "online")
		s, err := hostfs.ReadString(flagPath)
		switch {
		case errors.Is(err, os.ErrNotExist):
			c.Online = true // the kernel cannot offline it
		case err != nil:
			return st, fmt.Errorf("tuning: %w", err)
		default:
			c.Hotpluggable = true
			if c.Online, err = parseOnlineFlag(s, flagPath); err != nil {
				return st, err
			}
		}
		if c.Online {
			fromFlags = append(fromFlags, id)
		}
		nodes, err := numbered(h.cpuDir(cpuName(id)), "node")
		if err != nil {
			return st, fmt.Errorf("tuning: %w", err)
		}
		if len(nodes) > 0 {
			c.Node = nodes[0]
		}
		st.CPUs = append(st.CPUs, c)
	}
	if !haveOnline {
		online = cpuset.Of(fromFlags...)
	}
	for i := range st.CPUs {
		st.CPUs[i].Online = online.Contains(st.CPUs[i].ID)
	}
	offline, ok, err := readList(h.cpuDir("offline"))
	if err != nil {
		return st, err
	}
	if !ok {
		offline = possible.Difference(online)
	}
	st.Possible, st.Present, st.Online, st.Offline = possible, present, online, offline
	return st, nil
}

// OnlineCPUs reads /sys/devices/system/cpu/online: the kernel's list of
// online CPUs.
func (h *Host) OnlineCPUs() (CPUSet, error) {
	p := h.cpuDir("online")
	set, ok, err := readList(p)
	if err != nil {
		return CPUSet{}, err
	}
	if !ok {
		st, err := h.CPUState()
		if err != nil {
			return CPUSet{}, err
		}
		return st.Online, nil
	}
	return set, nil
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

func readString(path string) (string, error) {
	s, err := hostfs.ReadString(path)
	if err != nil {
		return "", fmt.Errorf("tuning: %w", err)
	}
	return s, nil
}
