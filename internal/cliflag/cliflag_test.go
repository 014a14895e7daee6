package cliflag

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"60", time.Minute, false}, // wrk2's -d60
		{"2.5", 2500 * time.Millisecond, false},
		{"0", 0, false},
		{"30s", 30 * time.Second, false},
		{"1m", time.Minute, false},
		{"1m30s", 90 * time.Second, false},
		{"500ms", 500 * time.Millisecond, false},
		{"-1", 0, true},
		{"-1s", 0, true},
		{"1e300", 0, true}, // beyond a time.Duration's 292 years
		{"9300000000", 0, true},
		{"+Inf", 0, true},
		{"NaN", 0, true},
		{"soon", 0, true},
		{"", 0, true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			d, err := ParseDuration(tt.in)
			if tt.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "want a duration such as 60 (seconds), 30s, 1m or 2h")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, d)
		})
	}
}

func TestFlagSet(t *testing.T) {
	parse := func(args ...string) (*FlagSet, *time.Duration, string, error) {
		var out bytes.Buffer
		fs := New("prog", "usage: prog [flags]", &out)
		var d time.Duration
		DurationVar(fs, &d, "duration", 5*time.Second, "length of the run, a `duration`")
		fs.Bool("apply", false, "change the host")
		err := fs.Parse(args)
		return fs, &d, out.String(), err
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		out  []string
	}{
		{"none", nil, ExitOK, nil},
		{"help", []string{"-h"}, ExitOK, []string{"usage: prog [flags]\n", "-duration duration\n", "length of the run, a duration (default 5s)", "-apply\n", "change the host", "-version\n"}},
		{"version", []string{"-version"}, ExitOK, []string{"prog ", "go1."}},
		{"unknown", []string{"-nope"}, ExitUsage, nil},
		{"bad duration", []string{"-duration", "soon"}, ExitUsage, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, out, err := parse(tt.args...)
			assert.Equal(t, tt.code, ExitCode(err), "%v", err)
			for _, want := range tt.out {
				assert.Contains(t, out, want)
			}
		})
	}
	fs, d, _, err := parse("-duration", "60", "-apply=false")
	require.NoError(t, err)
	assert.Equal(t, time.Minute, *d)
	assert.Equal(t, Given{"duration": true, "apply": true}, fs.Given(), "given, even at the default")
	assert.Equal(t, "apply", fs.Given().Other("duration"))
	assert.Equal(t, "", fs.Given().Other("apply", "duration"))
	fs, _, _, err = parse("x")
	require.NoError(t, err)
	assert.Equal(t, ExitUsage, ExitCode(fs.NoArgs()))
}

func TestExitCode(t *testing.T) {
	cause := errors.New("cause")
	assert.Equal(t, ExitOK, ExitCode(nil))
	assert.Equal(t, ExitOK, ExitCode(fmt.Errorf("x: %w", flag.ErrHelp)))
	assert.Equal(t, ExitFailure, ExitCode(cause))
	u := Usagef("-keep: %w", cause)
	assert.Equal(t, ExitUsage, ExitCode(u))
	assert.ErrorIs(t, u, cause)
	assert.Equal(t, "-keep: cause", u.Error())
	assert.Equal(t, ExitUsage, ExitCode(Usage(cause)))
	assert.Nil(t, Usage(nil))
}

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/nettune/nettune", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "6b6ac29"}, {Key: "vcs.modified", Value: "true"}}}
	got := versionText("prog", bi)
	assert.Contains(t, got, "prog github.com/nettune/nettune (devel)\nvcs.revision=6b6ac29\nvcs.modified=true\ngo1.26.0 ")
	bi.Settings = nil
	assert.Contains(t, versionText("prog", bi), "no VCS commit")
}
