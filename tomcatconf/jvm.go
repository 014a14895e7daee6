package tomcatconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/procstat"
)

// JVM is a running process of an instance: one whose command line holds
// -Dcatalina.base=Base.
type JVM struct {
	PID int
	// UID and GID are the process's real user and group IDs, from
	// /proc/PID/status.
	UID, GID int
	// User is UID's name; "" when it has none.
	User string
}

// JVMs lists, by PID, the processes under /proc (of the host root) whose
// command line holds the argument -Dcatalina.base=Base and that see Base
// as this process does (not a container's own Base), however they were
// started: by Start, by systemd, by hand. Zombies are left out, and so is
// a child of such a process that has not exec'd yet (a fork still shows
// its parent's command line). It needs no privileges (a process hidden by
// hidepid is not seen).
func (in *Instance) JVMs() ([]JVM, error) {
	host, err := hostRoot(in.Root)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(host.Proc())
	if err != nil {
		return nil, fmt.Errorf("tomcatconf: list processes: %w", err)
	}
	var jvms []JVM
	parents := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || !in.alive(pid) {
			continue
		}
		j := JVM{PID: pid, UID: -1, GID: -1}
		if status, err := os.ReadFile(host.Proc(e.Name(), "status")); err == nil {
			j.UID, j.GID = statusID(status, "Uid:"), statusID(status, "Gid:")
			parents[pid] = statusID(status, "PPid:")
		}
		if j.UID >= 0 {
			if u, err := user.LookupId(strconv.Itoa(j.UID)); err == nil {
				j.User = u.Username
			}
		}
		jvms = append(jvms, j)
	}
	jvms = slices.DeleteFunc(jvms, func(j JVM) bool {
		_, forked := parents[parents[j.PID]]
		return forked
	})
	slices.SortFunc(jvms, func(a, b JVM) int { return a.PID - b.PID })
	return jvms, nil
}

// statusID returns the real ID of a "Uid:" or "Gid:" line of
// /proc/PID/status, or -1.
func statusID(status []byte, key string) int {
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if n, err := strconv.Atoi(f[0]); err == nil {
					return n
				}
			}
		}
	}
	return -1
}

// PID returns the PID of the instance's JVM, found in /proc by
// -Dcatalina.base=Base in its command line (no PID file is needed: Debian's
// unit writes none). No JVM is an error compatible with
// errors.Is(err, ErrNotRunning); more than one is ErrAmbiguous, naming
// their PIDs. It reads /proc/PID/cmdline and needs no privileges.
func (in *Instance) PID() (int, error) {
	jvms, err := in.JVMs()
	if err != nil {
		return 0, err
	}
	switch len(jvms) {
	case 0:
		return 0, fmt.Errorf("%w: no process has -Dcatalina.base=%s", ErrNotRunning, in.Base)
	case 1:
		return jvms[0].PID, nil
	}
	return 0, fmt.Errorf("%w: %d JVMs run with -Dcatalina.base=%s: PIDs %s (stop one with StopOptions.PID)", ErrAmbiguous, len(jvms), in.Base, pidList(jvms))
}

func pidList(jvms []JVM) string {
	s := make([]string, len(jvms))
	for i, j := range jvms {
		s[i] = strconv.Itoa(j.PID)
	}
	return strings.Join(s, ", ")
}

// exists reports whether a process pid exists and is not a zombie.
func (in *Instance) exists(pid int) bool {
	host, err := hostRoot(in.Root)
	if err != nil {
		return false
	}
	st, err := procstat.Read(host.Proc(strconv.Itoa(pid), "stat"))
	return err == nil && st.State != 'Z' && st.State != 'X'
}

// alive reports whether pid runs (not a zombie) and is this instance's JVM,
// so a recycled PID is never signalled.
func (in *Instance) alive(pid int) bool {
	if !in.exists(pid) {
		return false
	}
	host, err := hostRoot(in.Root)
	if err != nil {
		return false
	}
	cmdline, err := os.ReadFile(host.Proc(strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	want := "-Dcatalina.base=" + filepath.Clean(in.Base)
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if a, ok := bytes.CutPrefix(arg, []byte("-Dcatalina.base=")); ok && "-Dcatalina.base="+filepath.Clean(string(a)) == want {
			return in.sameBase(host, pid)
		}
	}
	return false
}

// sameBase reports whether Base, seen from pid's root directory, is the
// directory this process sees: a JVM in a container (another mount
// namespace or chroot) with the same -Dcatalina.base runs another
// instance. When pid's root cannot be read (another user's process
// without privileges) it cannot tell and reports true.
func (in *Instance) sameBase(host hostfs.Root, pid int) bool {
	if !host.IsHost() {
		return true // a fixture's /proc has no root links
	}
	mine, err := os.Stat(in.Base)
	if err != nil {
		return true
	}
	theirs, err := os.Stat(host.Proc(strconv.Itoa(pid), "root") + filepath.Clean(in.Base))
	if err != nil {
		return errors.Is(err, os.ErrPermission)
	}
	return os.SameFile(mine, theirs)
}

// Account is the user a JVM runs as.
type Account struct {
	Name     string
	UID, GID uint32
	// Groups are the supplementary groups (initgroups(3)).
	Groups []uint32
	Home   string
	// Shell is the login shell, for $SHELL.
	Shell string
}

// Account returns the user Start runs the JVM as: User (a name or a
// numeric ID) with Group or else the user's primary group, as a systemd
// unit's User= and Group= do; without User, the owner of Base/conf (a link
// followed) with that user's primary group — the owner of an unpacked
// tarball — or, when root owns conf/ and another user Base/logs (a
// package's layout), the owner of Base/logs: root only when root owns
// both. The user database is the host's (os/user). It needs no
// privileges.
func (in *Instance) Account() (Account, error) {
	name := in.User
	var u *user.User
	var err error
	if name == "" {
		conf := filepath.Join(in.Base, "conf")
		fi, serr := os.Stat(conf)
		if serr != nil {
			return Account{}, fmt.Errorf("tomcatconf: the JVM's user is the owner of %s: %w", conf, serr)
		}
		owner, from := fi.Sys().(*syscall.Stat_t).Uid, conf
		if owner == 0 {
			// A package keeps conf/ root's and gives the JVM's user
			// the logs (Debian: /var/log/tomcat10, tomcat's).
			logs := filepath.Join(in.Base, "logs")
			if fi, err := os.Stat(logs); err == nil && fi.Sys().(*syscall.Stat_t).Uid != 0 {
				owner, from = fi.Sys().(*syscall.Stat_t).Uid, logs
			}
		}
		if u, err = user.LookupId(strconv.FormatUint(uint64(owner), 10)); err != nil {
			return Account{}, fmt.Errorf("tomcatconf: owner %d of %s: %w", owner, from, err)
		}
	} else {
		if u, err = user.Lookup(name); err != nil {
			if _, nerr := strconv.ParseUint(name, 10, 32); nerr != nil {
				return Account{}, fmt.Errorf("tomcatconf: user %q: %w", name, err)
			}
			if u, err = user.LookupId(name); err != nil {
				return Account{}, fmt.Errorf("tomcatconf: user %q: %w", name, err)
			}
		}
	}
	a := Account{Name: u.Username, Home: u.HomeDir, Shell: "/bin/sh"}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return Account{}, fmt.Errorf("tomcatconf: user %q has UID %q: want a number", u.Username, u.Uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return Account{}, fmt.Errorf("tomcatconf: user %q has GID %q: want a number", u.Username, u.Gid)
	}
	a.UID, a.GID = uint32(uid), uint32(gid)
	if in.Group != "" {
		g, err := user.LookupGroup(in.Group)
		if err != nil {
			if g, err = user.LookupGroupId(in.Group); err != nil {
				return Account{}, fmt.Errorf("tomcatconf: group %q: %w", in.Group, err)
			}
		}
		n, err := strconv.ParseUint(g.Gid, 10, 32)
		if err != nil {
			return Account{}, fmt.Errorf("tomcatconf: group %q has GID %q: want a number", g.Name, g.Gid)
		}
		a.GID = uint32(n)
	}
	ids, err := u.GroupIds()
	if err != nil {
		return Account{}, fmt.Errorf("tomcatconf: groups of %q: %w", u.Username, err)
	}
	for _, id := range ids {
		if n, err := strconv.ParseUint(id, 10, 32); err == nil {
			a.Groups = append(a.Groups, uint32(n))
		}
	}
	if !slices.Contains(a.Groups, a.GID) {
		a.Groups = append(a.Groups, a.GID)
	}
	return a, nil
}

// credential returns the credential to start a process as a: nil when this
// process already runs as a's user; an error when it would need root.
func (a Account) credential() (*syscall.Credential, error) {
	euid := os.Geteuid()
	if uint32(euid) == a.UID {
		return nil, nil
	}
	if euid != 0 {
		return nil, fmt.Errorf("tomcatconf: starting Tomcat as %s (UID %d) needs root; this process runs as UID %d", a.Name, a.UID, euid)
	}
	return &syscall.Credential{Uid: a.UID, Gid: a.GID, Groups: a.Groups}, nil
}
