package bootcfg

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/nettune/nettune/internal/hostfs"
)

// The variables holding the kernel command line in /etc/default/grub.
// grub-mkconfig puts GRUB_CMDLINE_LINUX on every Linux entry, recovery
// entries included, and GRUB_CMDLINE_LINUX_DEFAULT only on the normal
// entries, after it.
const (
	CmdlineLinux        = "GRUB_CMDLINE_LINUX"
	CmdlineLinuxDefault = "GRUB_CMDLINE_LINUX_DEFAULT"
)

// File is one parsed shell file: /etc/default/grub or a drop-in.
type File struct {
	Path string

	assignments []*assignment  // in the order the shell performs them
	commands    []shellCommand // the commands it runs, in order
	data        string
}

// Bytes returns the file's content as read.
func (f *File) Bytes() []byte { return []byte(f.data) }

// ParseFile parses data, the content of the shell file at path (used in
// positions and errors), the way /bin/sh would read it with ".", but
// without executing anything. A syntax error (an unterminated quote or
// command substitution) matches ErrSyntax and names the file and line.
//
// A file with DOS line endings (CR LF) is refused the same way, naming the
// first such line: /bin/sh, which grub-mkconfig sources the file with,
// keeps the CR as part of the line, so GRUB_CMDLINE_LINUX="quiet" CR reads
// as "quiet\r". Neither reading that value nor writing a new one into the
// quotes would say what the shell does.
func ParseFile(path string, data []byte) (*File, error) {
	if i := bytes.Index(data, []byte("\r\n")); i >= 0 {
		return nil, &SyntaxError{File: path, Line: bytes.Count(data[:i], []byte{'\n'}) + 1, Offset: i,
			Msg: `line ends in CR LF (a DOS line ending); /bin/sh, which grub-mkconfig sources this file with, reads the CR as part of the value, so it is not edited: convert the file (dos2unix FILE, or sed -i 's/\r$//' FILE) and run again`}
	}
	as, cmds, err := parseScript(path, string(data))
	if err != nil {
		return nil, err
	}
	return &File{Path: path, assignments: as, commands: cmds, data: string(data)}, nil
}

// Config is the GRUB defaults: the main file and its drop-ins, in the
// order grub-mkconfig sources them.
type Config struct {
	Files []*File // Files[0] is the main file
}

// LoadConfig reads the defaults file at path (e.g. /etc/default/grub) and
// the drop-ins path.d/*.cfg (e.g. /etc/default/grub.d/*.cfg), in the order
// grub-mkconfig's shell glob sorts them (bytewise, as in the C locale). A
// missing drop-in directory is not an error; a missing main file is (it
// matches os.ErrNotExist).
func LoadConfig(path string) (*Config, error) {
	data, err := hostfs.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bootcfg: read GRUB defaults: %w", err)
	}
	main, err := ParseFile(path, data)
	if err != nil {
		return nil, err
	}
	c := &Config{Files: []*File{main}}
	dropins, err := filepath.Glob(filepath.Join(path+".d", "*.cfg"))
	if err != nil {
		return nil, fmt.Errorf("bootcfg: list drop-ins of %s: %w", path, err)
	}
	sort.Strings(dropins)
	for _, p := range dropins {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue // a dangling link: grub-mkconfig's [ -e ] skips it
		}
		if err != nil {
			return nil, fmt.Errorf("bootcfg: drop-in: %w", err)
		}
		if fi.IsDir() {
			continue
		}
		data, err := hostfs.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("bootcfg: read drop-in: %w", err)
		}
		f, err := ParseFile(p, data)
		if err != nil {
			return nil, err
		}
		c.Files = append(c.Files, f)
	}
	return c, nil
}

// Value is the effective value of a variable after the shell has sourced
// every file.
type Value struct {
	Name string
	// Value is what the shell assigns, when Known.
	Value string
	// Known is false when the value depends on something only a shell can
	// evaluate: a command substitution, another variable, a condition.
	Known bool
	// Dynamic is nil when Known; otherwise an error matching ErrDynamic
	// that names the file, the line and the expansion.
	Dynamic error
	// Set is false when no file assigns the variable (Value is "").
	Set bool
	// File and Line locate the assignment that sets the effective value:
	// the last one the shell performs ("" and 0 when not Set). For a
	// value built by NAME="$NAME more" lines, that is the last of them.
	File string
	Line int

	// origin is that assignment; chain is the assignments that build the
	// value: the last plain assignment and every NAME="$NAME ..." after
	// it, in order. A chain that starts with a self-append starts from
	// the unset (empty) value.
	origin *assignment
	chain  []*assignment
}

// assignments returns every assignment of name, in the order the shell
// performs them, across all files.
func (c *Config) assignments(name string) []*assignment {
	var as []*assignment
	for _, f := range c.Files {
		for _, a := range f.assignments {
			if a.Name == name {
				as = append(as, a)
			}
		}
	}
	return as
}

// Names returns the names of all variables assigned, sorted.
func (c *Config) Names() []string {
	seen := map[string]bool{}
	var names []string
	for _, f := range c.Files {
		for _, a := range f.assignments {
			if !seen[a.Name] {
				seen[a.Name] = true
				names = append(names, a.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// Lookup returns the effective value of name. Repeated assignments: the
// last wins. NAME="$NAME more" appends to the value built so far (a
// variable not yet assigned is empty, as in grub-mkconfig's clean
// environment). Any other expansion or a conditional assignment makes the
// value unknown (Known false, Dynamic set) until a later plain assignment.
func (c *Config) Lookup(name string) Value {
	v := Value{Name: name, Known: true}
	for _, a := range c.assignments(name) {
		v.Set = true
		v.origin, v.File, v.Line = a, a.File, a.Line
		switch {
		case a.Static():
			v.Value, v.Known, v.Dynamic = a.Value, true, nil
			v.chain = []*assignment{a}
		case a.SelfAppend():
			v.chain = append(v.chain, a)
			if v.Known {
				v.Value += a.appendLit
			}
		default:
			v.Value, v.Known = "", false
			v.Dynamic = &dynamicError{Name: name, File: a.File, Line: a.Line, Reason: a.reason()}
			v.chain = []*assignment{a}
		}
	}
	return v
}

// Cmdline parses the effective value of name (CmdlineLinux or
// CmdlineLinuxDefault) as a kernel command line. An unknown value returns
// an error matching ErrDynamic.
func (c *Config) Cmdline(name string) (*Cmdline, error) {
	v := c.Lookup(name)
	if !v.Known {
		return nil, v.Dynamic
	}
	cl, err := ParseCmdline(v.Value)
	if err != nil {
		return nil, fmt.Errorf("bootcfg: %s in %s: %w", name, v.origin.File, err)
	}
	return cl, nil
}

// BootCmdline returns what grub-mkconfig puts on a normal boot entry:
// GRUB_CMDLINE_LINUX followed by GRUB_CMDLINE_LINUX_DEFAULT (without the
// root= and BOOT_IMAGE= parameters GRUB adds itself).
func (c *Config) BootCmdline() (*Cmdline, error) {
	l, err := c.Cmdline(CmdlineLinux)
	if err != nil {
		return nil, err
	}
	d, err := c.Cmdline(CmdlineLinuxDefault)
	if err != nil {
		return nil, err
	}
	return ParseCmdline(l.String() + " " + d.String())
}
