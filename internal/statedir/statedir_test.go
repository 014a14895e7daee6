package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nettune/nettune/internal/lockfile"
)

func TestFor(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	for _, tc := range []struct {
		name string
		euid int
		env  map[string]string
		home func() (string, error)
		want string
	}{
		{"root", 0, map[string]string{"XDG_STATE_HOME": "/x"}, home, "/var/lib/nettune"},
		{"xdg", 1000, map[string]string{"XDG_STATE_HOME": "/x/state"}, home, "/x/state/nettune"},
		{"relative xdg is ignored", 1000, map[string]string{"XDG_STATE_HOME": "state"}, home, "/home/u/.local/state/nettune"},
		{"home", 1000, nil, home, "/home/u/.local/state/nettune"},
		{"no home", 1000, nil, noHome, filepath.Join(os.TempDir(), "nettune")},
	} {
		if got := For(tc.euid, env(tc.env), tc.home); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDir(t *testing.T) {
	if got, want := Dir(), For(os.Geteuid(), os.Getenv, os.UserHomeDir); got != want {
		t.Fatalf("Dir() = %q, For gives %q", got, want)
	}
}

func TestBaseLock(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"/var/lib/tomcat10", "base-var-lib-tomcat10"},
		{"/var/lib/tomcat10/", "base-var-lib-tomcat10"},
		{"/srv/my-tomcat", `base-srv-my\x2dtomcat`},
		{"/srv/my/tomcat", "base-srv-my-tomcat"},
		{"/srv/.hidden", `base-srv-\x2ehidden`},
		{"/", "base"},
	} {
		got, err := BaseLock(tc.base)
		if err != nil || got != tc.want {
			t.Errorf("BaseLock(%q) = %q, %v; want %q", tc.base, got, err, tc.want)
		}
	}
	a, _ := BaseLock("/srv/my-tomcat")
	b, _ := BaseLock("/srv/my/tomcat")
	if a == b {
		t.Errorf("two bases share the lock %q", a)
	}
}

func TestLockRefusesSecondOwner(t *testing.T) {
	dir := t.TempDir()
	name, err := BaseLock("/var/lib/tomcat10")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Lock(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if l.Path() != filepath.Join(dir, "locks", name+".lock") {
		t.Errorf("lock at %s", l.Path())
	}
	_, err = Lock(dir, name)
	if !errors.Is(err, lockfile.ErrLocked) || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second Lock: %v; want ErrLocked naming PID %d", err, os.Getpid())
	}
	h, err := Lock(dir, HostLock)
	if err != nil {
		t.Fatalf("another name is another lock: %v", err)
	}
	h.Unlock()
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if _, err := Lock(dir, bad); err == nil {
			t.Errorf("Lock(%q) accepted", bad)
		}
	}
}
