//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/internal/testutil"
)

// runCLI runs the built program and returns its stdout, stderr and exit
// status.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, program(t), args...)
	cmd.Env = cleanEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errOut.String(), 0
}

// TestHelpAndVersion: -h lists every flag with a description (and the
// default of those that have one), exit 0; -version names the module; an
// unknown flag exits 2.
func TestHelpAndVersion(t *testing.T) {
	testutil.CheckCLI(t, "tomcat-tuning", func(args ...string) (string, int) {
		out, _, code := runCLI(t, args...)
		return out, code
	}, []string{
		"alpha", "apply", "capacity-rate", "catalina-base", "catalina-home", "connections", "cpu-method", "cpus",
		"duration", "export", "grub", "iface", "journal", "json", "keep", "latency-rate", "load-host", "load-netns",
		"load-shares-cpus", "load-worker", "persist", "persist-steps", "plan", "plot", "port", "queues-candidates", "repeat", "revert", "root",
		"search", "ssh-config", "steps", "study", "targets", "threads-candidates", "url", "verify", "warmup", "warmup-interval", "wide",
	})
	out, _, _ := runCLI(t, "-h")
	assert.True(t, strings.HasPrefix(out, synopsis+"\n"), out)
	for _, want := range []string{"(default 500000)", "(default 6)", "(default 5s)", "(default 3m0s)", "(default 2s)", "(default true)",
		`(default "auto")`, "the guide's wrk2 -R", "not the guide's wrk2 -R, which is -capacity-rate"} {
		assert.Contains(t, out, want)
	}
}

// TestRefusedCommandLines: each refused command line exits 2 with one
// line, before anything runs: no journal is written.
func TestRefusedCommandLines(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "j")
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	otherHost := filepath.Join(dir, "targets.txt")
	require.NoError(t, os.WriteFile(otherHost, []byte("GET http://127.0.0.1:8080/a\n\nGET http://127.0.0.1:9090/x\n"), 0o644))
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"revert and apply", []string{"-revert", "-apply"}, "-revert restores what the journal of an earlier run records and takes only -journal: drop -apply"},
		{"revert and persist", []string{"-revert", "-persist"}, "drop -persist"},
		{"revert and steps", []string{"-revert", "-steps", "threads"}, "drop -steps"},
		{"revert and a measure flag", []string{"-revert", "-duration", "10"}, "drop -duration"},
		{"revert and search", []string{"-revert", "-search=false"}, "drop -search"},
		{"keep without apply", []string{"-keep"}, "-keep leaves -apply's changes in place: give -apply too"},
		{"persist without apply", []string{"-persist"}, "-persist keeps what -apply measured: give -apply too"},
		{"persist and keep", []string{"-apply", "-persist", "-keep"}, "-keep leaves this run's runtime state: give one of them"},
		{"persist-steps alone", []string{"-persist-steps", "threads"}, "-persist-steps chooses the steps -persist or -export keeps"},
		{"load-shares-cpus without apply", []string{"-load-shares-cpus"}, "-load-shares-cpus lets -apply measure"},
		{"ssh-config without load-host", []string{"-apply", "-ssh-config", file}, "without -load-host: give the client to load from"},
		{"load-worker without load-host", []string{"-apply", "-load-worker", file}, "without -load-host: give the client to load from"},
		{"json without apply", []string{"-json", file}, "-json writes the step table of -apply or the plan of -plan: give one of them"},
		{"plan and apply", []string{"-plan", "-apply"}, "-plan only prints the plan (and writes -json): drop -apply"},
		{"plan and revert", []string{"-plan", "-revert"}, "-revert restores what the journal of an earlier run records and takes only -journal: drop -plan"},
		{"plan and persist", []string{"-plan", "-persist"}, "-plan only prints the plan (and writes -json): drop -persist"},
		{"plan and export", []string{"-plan", "-export", dir}, "-plan only prints the plan (and writes -json): drop -export"},
		{"plan and keep", []string{"-plan", "-keep"}, "-plan only prints the plan (and writes -json): drop -keep"},
		{"plan and journal", []string{"-plan", "-journal", journal}, "drop -journal"},
		{"plan and a measure flag", []string{"-plan", "-duration", "10"}, "-plan measures nothing: drop -duration"},
		{"plan and verify", []string{"-plan", "-verify"}, "-verify checks the host against the journal of an earlier run and takes only -journal: drop -plan"},
		{"verify and apply", []string{"-verify", "-apply"}, "takes only -journal: drop -apply"},
		{"verify and steps", []string{"-verify", "-steps", "threads"}, "takes only -journal: drop -steps"},
		{"plot without apply", []string{"-plot", file}, "-plot draws the step table of -apply"},
		{"wide without apply", []string{"-wide"}, "-wide prints the step table of -apply with every column: give -apply too"},
		{"plan and wide", []string{"-plan", "-wide"}, "-plan only prints the plan (and writes -json): drop -wide"},
		{"apply on a fixture root", []string{"-apply", "-root", dir}, "cannot be used with -root"},
		{"load-host and load-netns", []string{"-apply", "-load-host", "h", "-load-netns", "n", "-url", "http://10.0.0.1:8080/"}, "give one place for the load"},
		{"warmup-interval without warm-up", []string{"-warmup", "0", "-warmup-interval", "1"}, "-warmup-interval sets the length of the warm-up runs, and -warmup is 0"},
		{"measuring on a fixture root", []string{"-root", dir, "-repeat", "2"}, "-repeat: nothing is measured on a fixture -root"},
		{"measuring with -export alone", []string{"-export", dir, "-latency-rate", "100"}, "-latency-rate: -export without -apply writes the guide's plan and measures nothing"},
		{"searching with -export alone", []string{"-export", dir, "-search=false"}, "-search: -export without -apply"},
		{"candidates without the search", []string{"-apply", "-search=false", "-threads-candidates", "16"}, "-threads-candidates and -queues-candidates are measured by the search: drop -search=false"},
		{"candidates with -export alone", []string{"-export", dir, "-queues-candidates", "4"}, "-queues-candidates: -export without -apply"},
		{"bad candidate", []string{"-apply", "-threads-candidates", "16,x"}, `-threads-candidates: "x": want whole numbers from 1 to 100000`},
		{"zero queues", []string{"-apply", "-queues-candidates", "0"}, `-queues-candidates: "0": want whole numbers from 1 to 65535`},
		{"candidate twice", []string{"-apply", "-threads-candidates", "16,16"}, "-threads-candidates: 16 named twice"},
		{"targets file missing", []string{"-apply", "-targets", filepath.Join(dir, "none.txt")}, "-targets: "},
		{"a target elsewhere", []string{"-apply", "-url", "http://127.0.0.1:8080/", "-targets", otherHost}, "target 2, GET http://127.0.0.1:9090/x: want a path or a URL on http://127.0.0.1:8080, the study's -url"},
		{"plan and targets", []string{"-plan", "-targets", otherHost}, "drop -targets"},
		{"retired -remote-load", []string{"-remote-load"}, "flag provided but not defined: -remote-load"},
		{"renamed -rate", []string{"-rate", "100"}, "flag provided but not defined: -rate"},
		{"-search off, a string no more", []string{"-apply", "-search", "off"}, `unexpected arguments ["off"`},
		{"bad duration", []string{"-duration", "soon"}, `invalid value "soon" for flag -duration`},
		{"bad value", []string{"-apply", "-cpus", "0"}, "-cpus 0: want 1 or more"},
		{"unknown step", []string{"-apply", "-steps", "nope"}, `-steps: unknown step "nope"`},
		{"bad -persist-steps", []string{"-apply", "-persist", "-persist-steps", "nope"}, `-persist-steps: -steps: unknown step "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if !strings.Contains(tt.name, "revert") && hasArg(args, "-apply") {
				args = append(args, "-journal", journal)
			}
			stdout, stderr, code := runCLI(t, args...)
			assert.Equal(t, 2, code, "%s%s", stdout, stderr)
			assert.Empty(t, stdout, "nothing ran")
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Contains(t, stderr, tt.want)
			assert.NoFileExists(t, journal)
		})
	}
	stdout, stderr, code := runCLI(t, "-journal", journal)
	assert.Equal(t, 2, code, "%s%s", stdout, stderr)
	assert.Contains(t, stderr, "-journal names the journal of -apply, -verify and -revert")
	assert.NoFileExists(t, journal)
}

func hasArg(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

// TestStudyFile: the README's study file gives the options its flags
// give; a flag on the command line overrides the file's value; a key that
// is no flag, a bad value or a key the file may not set is refused, naming
// the file and the key.
func TestStudyFile(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)### A study file.*?```json\n(.*?)```").FindSubmatch(b)
	require.NotNil(t, m, "README.md's study file")
	file := filepath.Join(t.TempDir(), "guide.json")
	require.NoError(t, os.WriteFile(file, m[1], 0o644))
	flags := []string{"-apply", "-url", "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample",
		"-steps", "cpus,open-files,access-log,threads,sysctl:net.core.somaxconn=8192,connector:acceptCount=333",
		"-repeat", "6", "-duration", "5s", "-warmup", "1m", "-json", "study.json"}
	want, err := parseArgs(flags, &bytes.Buffer{})
	require.NoError(t, err)
	got, err := parseArgs([]string{"-study", file}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, want, got, "the file's study is its flags'")

	over, err := parseArgs([]string{"-study", file, "-repeat", "2", "-steps", "access-log"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 2, over.o.Repeat, "the command line overrides the file")
	assert.Equal(t, []string{"access-log"}, over.o.Steps)
	assert.Equal(t, time.Minute, over.o.WarmUp, "the file's other values stay")

	// A list item's comma is the step's own, as "\," is on the command line.
	commas := filepath.Join(t.TempDir(), "commas.json")
	require.NoError(t, os.WriteFile(commas, []byte(`{"steps": ["access-log", "jvm:-XX:CompileCommand=exclude,java/lang/String.indexOf"]}`), 0o644))
	c, err := parseArgs([]string{"-study", commas}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"access-log", "jvm:-XX:CompileCommand=exclude,java/lang/String.indexOf"}, c.o.Steps)

	// The search's own values, as numbers or as the flag's text.
	cands := filepath.Join(t.TempDir(), "cands.json")
	require.NoError(t, os.WriteFile(cands, []byte(`{"threads-candidates": [16, 32, 64], "queues-candidates": "4,8"}`), 0o644))
	c, err = parseArgs([]string{"-study", cands}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []int{16, 32, 64}, c.o.ThreadCandidates)
	assert.Equal(t, []int{4, 8}, c.o.QueueCandidates)

	for _, tt := range []struct{ json, want string }{
		{`{"repeats": 2}`, `"repeats" is not a flag this file can set`},
		{`{"repeat": "two"}`, `"repeat": invalid value "two"`},
		{`{"study": "other.json"}`, `"study" is not a flag this file can set`},
		{`{"revert": true}`, `"revert" is not a flag this file can set`},
		{`{"steps": ["access-log", false]}`, `"steps": item 2 of the list: want a string or a number, got false`},
		{`{"steps": ["nope"]}`, `-steps: unknown step "nope"`},
		{`["apply"]`, "want a JSON object of flag names and values"},
		{`{"keep": true}`, "-keep leaves -apply's changes in place: give -apply too"},
	} {
		bad := filepath.Join(t.TempDir(), "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte(tt.json), 0o644))
		_, err := parseArgs([]string{"-study", bad}, &bytes.Buffer{})
		require.ErrorIs(t, err, cliflag.ErrUsage, tt.json)
		assert.ErrorContains(t, err, tt.want, tt.json)
	}
	_, err = parseArgs([]string{"-study", filepath.Join(t.TempDir(), "missing.json")}, &bytes.Buffer{})
	assert.ErrorContains(t, err, "missing.json: no such file or directory")
}

// TestParseArgs: a bare duration is seconds (wrk2's -d60), -search is a
// boolean, and the two rates go where their names say.
func TestParseArgs(t *testing.T) {
	c, err := parseArgs([]string{"-duration", "60", "-warmup", "1m", "-warmup-interval", "2.5", "-search=false",
		"-latency-rate", "1000", "-capacity-rate", "500000"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, c.o.Duration)
	assert.Equal(t, time.Minute, c.o.WarmUp)
	assert.Equal(t, 2500*time.Millisecond, c.o.WarmUpStep)
	assert.Equal(t, study.SearchOff, c.o.Search)
	assert.Equal(t, 1000.0, c.o.Rate)
	assert.Equal(t, 500000.0, c.o.CapacityRate)
	c, err = parseArgs(nil, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, study.DefaultOptions(), c.o, "no flag: every default")
}

// TestReadmeSteps: README.md's table of steps lists the steps of the
// program, in its order, and its flag list names every flag -h lists.
func TestReadmeSteps(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	var steps []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| ").FindAllStringSubmatch(readme, -1) {
		if slices.Contains(study.StepNames(), m[1]) {
			steps = append(steps, m[1])
		}
	}
	assert.Equal(t, study.StepNames(), steps, "README.md's table of steps")
	out, _, code := runCLI(t, "-h")
	require.Equal(t, 0, code)
	i := strings.Index(readme, "## Command line")
	require.GreaterOrEqual(t, i, 0)
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(out, -1) {
		assert.Regexp(t, "-"+regexp.QuoteMeta(m[1])+"\\b", readme[i:], "README.md's command line names -%s", m[1])
	}
}
