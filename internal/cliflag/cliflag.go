// Package cliflag is what every example program's command line shares:
// exit statuses (0 ok, 1 failure, 2 usage), -h that describes every flag
// with its default, -version from the binary's build information, "was
// this flag given" for refusing flag combinations, and durations where a
// bare number means seconds, as in wrk2's -d60.
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
)

// ErrUsage marks an error in the command line (an unknown flag, a bad
// value, a refused combination): the program exits ExitUsage.
var ErrUsage = errors.New("usage")

// Exit statuses.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// usageError is a command-line error: its text is the cause's alone, and
// it is both ErrUsage and the cause for errors.Is.
type usageError struct{ err error }

func (e usageError) Error() string   { return e.err.Error() }
func (e usageError) Unwrap() []error { return []error{ErrUsage, e.err} }

// Usagef returns a command-line error, compatible with errors.Is(err,
// ErrUsage), formatted as fmt.Errorf does (%w wraps).
func Usagef(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// Usage marks err, when not nil, as a command-line error.
func Usage(err error) error {
	if err == nil || errors.Is(err, ErrUsage) {
		return err
	}
	return usageError{err}
}

// ExitCode is the exit status for a run's error: ExitOK for nil and
// flag.ErrHelp (-h or -version answered), ExitUsage for an error
// compatible with ErrUsage, else ExitFailure.
func ExitCode(err error) int {
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.Is(err, ErrUsage):
		return ExitUsage
	}
	return ExitFailure
}

// Exit prints err, if any, as one "name: err" line on stderr, a usage
// error with a pointer to -h, and exits with ExitCode(err). Only a
// program's main calls it.
func Exit(name string, err error) {
	code := ExitCode(err)
	switch code {
	case ExitUsage:
		fmt.Fprintf(os.Stderr, "%s: %v (%s -h lists the flags)\n", name, err, name)
	case ExitFailure:
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	}
	os.Exit(code)
}

// VersionHelp describes -version in -h.
const VersionHelp = "print the module, its version and the VCS commit built from, then exit"

// FlagSet is a flag.FlagSet with the programs' conventions: -h prints
// the synopsis and every flag with its description and default on
// stdout, -version prints Version, a parse error is returned as a usage
// error without being printed, and Given tells which flags were set.
type FlagSet struct {
	*flag.FlagSet
	name, synopsis string
	stdout         io.Writer
	version        bool
}

// New returns the flag set of program name. synopsis is the first lines
// of -h ("usage: name [flags]"); -h and -version write to stdout.
func New(name, synopsis string, stdout io.Writer) *FlagSet {
	f := &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), name: name, synopsis: synopsis, stdout: stdout}
	f.SetOutput(io.Discard) // parse errors are returned, and printed once by Exit
	f.Usage = func() {}
	f.BoolVar(&f.version, "version", false, VersionHelp)
	return f
}

// Parse parses args. After -h or -version it has printed the answer
// and returns flag.ErrHelp; a bad flag or value is a usage error.
func (f *FlagSet) Parse(args []string) error {
	err := f.FlagSet.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		f.PrintUsage(f.stdout)
		return flag.ErrHelp
	case err != nil:
		return Usage(err)
	case f.version:
		fmt.Fprint(f.stdout, Version(f.name))
		return flag.ErrHelp
	}
	return nil
}

// PrintUsage writes the synopsis and every flag, described with its
// default, to w.
func (f *FlagSet) PrintUsage(w io.Writer) {
	if f.synopsis != "" {
		fmt.Fprintln(w, f.synopsis)
	}
	fmt.Fprintln(w, "flags:")
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
}

// Given returns the flags set on the command line (flag's Visit),
// whatever their value: "-search=true" is given, though it is the
// default.
func (f *FlagSet) Given() Given {
	set := Given{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// Given is a set of flag names, those given on a command line.
type Given map[string]bool

// Other returns the first flag of g, in lexicographical order, that is
// none of names; "" when there is none.
func (g Given) Other(names ...string) string {
	var other []string
	for name := range g {
		if !slices.Contains(names, name) {
			other = append(other, name)
		}
	}
	slices.Sort(other)
	if len(other) == 0 {
		return ""
	}
	return other[0]
}

// NoArgs refuses positional arguments after the flags.
func (f *FlagSet) NoArgs() error {
	if f.NArg() > 0 {
		return Usagef("unexpected arguments %q: every option is a flag", f.Args())
	}
	return nil
}
