package hsperf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nettune/nettune/internal/hostfs"
)

// Options tune Find and Read. A nil *Options means the defaults.
type Options struct {
	// Root is the host root holding /proc. Default: "" (this host, "/").
	Root string
}

// ErrNoCounters is returned by Find for a process with no hsperfdata
// file: not a HotSpot JVM, one run with -XX:-UsePerfData, or one whose
// /tmp this process cannot see.
var ErrNoCounters = errors.New("hsperf: no hsperfdata file")

// Find returns the path of process pid's hsperfdata file, read through
// its own root (/proc/PID/root/tmp/hsperfdata_*/NSPID, where NSPID is the
// PID it has in its own PID namespace): a JVM in a unit with PrivateTmp=
// or in a container keeps the file in a /tmp only its root shows. When
// several users' folders hold that PID, the file owned by the process's
// user is the one.
func Find(pid int, opts *Options) (string, error) {
	root, err := rootOf(opts)
	if err != nil {
		return "", err
	}
	status := root.Proc(strconv.Itoa(pid), "status")
	data, err := os.ReadFile(status)
	if err != nil {
		return "", fmt.Errorf("hsperf: process %d: %w", pid, err)
	}
	uid, nspid, err := parseStatus(data, pid)
	if err != nil {
		return "", fmt.Errorf("hsperf: %s: %w", status, err)
	}
	pattern := root.Proc(strconv.Itoa(pid), "root", "tmp", "hsperfdata_*", strconv.Itoa(nspid))
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return "", fmt.Errorf("hsperf: %s: %w", pattern, err)
	}
	switch len(paths) {
	case 0:
		return "", fmt.Errorf("%w for process %d (%s): not a HotSpot JVM, or run with -XX:-UsePerfData", ErrNoCounters, pid, pattern)
	case 1:
		return paths[0], nil
	}
	for _, p := range paths {
		if owner, ok := fileOwner(p); ok && owner == uid {
			return p, nil
		}
	}
	return "", fmt.Errorf("hsperf: process %d (uid %d): %d files match %s and none is its user's", pid, uid, len(paths), pattern)
}

// Read finds process pid's hsperfdata file and parses it.
func Read(pid int, opts *Options) (*Snapshot, error) {
	path, err := Find(pid, opts)
	if err != nil {
		return nil, err
	}
	return ReadFile(path)
}

// parseStatus reads the real UID and the innermost namespace PID from
// /proc/PID/status; a kernel without NSpid (before 4.1) gives pid.
func parseStatus(data []byte, pid int) (uid, nspid int, err error) {
	uid, nspid = -1, pid
	for _, line := range strings.Split(string(data), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		switch {
		case key == "Uid" && len(f) > 0:
			if uid, err = strconv.Atoi(f[0]); err != nil {
				return 0, 0, fmt.Errorf("Uid %q: want a number", val)
			}
		case key == "NSpid" && len(f) > 0:
			if nspid, err = strconv.Atoi(f[len(f)-1]); err != nil {
				return 0, 0, fmt.Errorf("NSpid %q: want numbers", val)
			}
		}
	}
	if uid < 0 {
		return 0, 0, errors.New("no Uid line")
	}
	return uid, nspid, nil
}

func rootOf(opts *Options) (hostfs.Root, error) {
	if opts == nil || opts.Root == "" || opts.Root == hostfs.DefaultRoot {
		return hostfs.Default(), nil
	}
	r, err := hostfs.New(opts.Root)
	if err != nil {
		return hostfs.Root{}, fmt.Errorf("hsperf: %w", err)
	}
	return r, nil
}
