package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
