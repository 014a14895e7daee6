package tomcatconf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultService is the systemd service of Debian's tomcat10 package.
const DefaultService = "tomcat10.service"

// serviceDirs are the directories systemd loads system units from, highest
// precedence first (systemd.unit(5), "System Unit Search Path").
var serviceDirs = []string{"etc/systemd/system", "run/systemd/system", "usr/local/lib/systemd/system", "lib/systemd/system", "usr/lib/systemd/system"}

// serviceFile is what a systemd service unit says about the process it
// runs: the account, the environment and the command, from the [Service]
// section of the unit file and its drop-ins. It is read, not run: Instance
// uses it to start Tomcat the way the unit does where systemd does not.
type serviceFile struct {
	// Name is the unit's name, e.g. "tomcat10.service".
	Name string
	// Paths are the files read, the unit file first, then its drop-ins
	// in the order applied.
	Paths []string
	// User and Group are User= and Group=; "" when unset (root).
	User, Group string
	// Environment holds the Environment= assignments as KEY=VALUE, in
	// order; an empty Environment= clears the ones before it.
	Environment []string
	// EnvironmentFiles are the EnvironmentFile= entries, in order.
	EnvironmentFiles []envFile
	// ExecStart is the last ExecStart= split into words, without its
	// prefix characters (-@:+!); nil when unset. $VARIABLES are not
	// expanded.
	ExecStart []string
	// WorkingDirectory is WorkingDirectory=; "" when unset.
	WorkingDirectory string
}

// EnvironmentFile is one EnvironmentFile= entry.
type envFile struct {
	Path string
	// Optional is the "-" prefix: a missing file is not an error.
	Optional bool
}

// readServiceFile reads the system unit name (e.g. DefaultService) as
// systemd would find it under root ("" or "/" for this host): the first
// of /etc/systemd/system, /run/systemd/system, /usr/local/lib/systemd/system,
// /lib/systemd/system and /usr/lib/systemd/system that holds it, then the
// drop-ins NAME.d/*.conf of all of them, by file name (a drop-in in a
// directory of higher precedence hides one of the same name). A missing
// unit is an error compatible with errors.Is(err, ErrNotFound); a unit
// masked by a link to /dev/null or an empty file is ErrNotFound too. It
// needs read access to the files only.
func readServiceFile(root, name string) (*serviceFile, error) {
	host, err := hostRoot(root)
	if err != nil {
		return nil, err
	}
	sf := &serviceFile{Name: name}
	var unit string
	for _, d := range serviceDirs {
		p := host.Path(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			unit = p
			break
		}
	}
	if unit == "" {
		return nil, fmt.Errorf("%w: no unit %s under %s", ErrNotFound, name, strings.Join(serviceDirs, ", "))
	}
	if target, err := filepath.EvalSymlinks(unit); err == nil && (target == os.DevNull || target == host.Path("dev", "null")) {
		return nil, fmt.Errorf("%w: unit %s is masked (%s links to %s)", ErrNotFound, name, unit, os.DevNull)
	}
	if fi, err := os.Stat(unit); err == nil && fi.Size() == 0 {
		return nil, fmt.Errorf("%w: unit %s is masked (%s is empty)", ErrNotFound, name, unit)
	}
	files := []string{unit}
	dropins := map[string]string{}
	for i := len(serviceDirs) - 1; i >= 0; i-- {
		m, _ := filepath.Glob(host.Path(serviceDirs[i], name+".d", "*.conf"))
		for _, p := range m {
			dropins[filepath.Base(p)] = p
		}
	}
	names := make([]string, 0, len(dropins))
	for n := range dropins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, dropins[n])
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("tomcatconf: read unit %s: %w", name, err)
		}
		err = sf.parse(p, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		sf.Paths = append(sf.Paths, p)
	}
	return sf, nil
}

// parseServiceFile parses one unit file's text (r, named file in errors)
// into a new serviceFile.
func parseServiceFile(file string, r io.Reader) (*serviceFile, error) {
	sf := &serviceFile{}
	if err := sf.parse(file, r); err != nil {
		return nil, err
	}
	return sf, nil
}

// parse applies the [Service] settings of one unit file or drop-in to sf,
// as systemd applies a drop-in over the unit.
func (sf *serviceFile) parse(file string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	section := ""
	n, start := 0, 0
	var cont strings.Builder
	for sc.Scan() {
		n++
		line := sc.Text()
		if cont.Len() == 0 {
			start = n
			t := strings.TrimSpace(line)
			if t == "" || t[0] == '#' || t[0] == ';' {
				continue
			}
		}
		// A trailing backslash continues the line; systemd joins the
		// parts with a space.
		if l := strings.TrimRight(line, " \t"); strings.HasSuffix(l, `\`) {
			cont.WriteString(strings.TrimSuffix(l, `\`))
			cont.WriteByte(' ')
			continue
		}
		cont.WriteString(line)
		l := strings.TrimSpace(cont.String())
		cont.Reset()
		if strings.HasPrefix(l, "[") {
			if !strings.HasSuffix(l, "]") {
				return fmt.Errorf("tomcatconf: %s:%d: section header %q: want [Name]", file, start, l)
			}
			section = l[1 : len(l)-1]
			continue
		}
		key, value, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("tomcatconf: %s:%d: %q: want KEY=VALUE", file, start, l)
		}
		if section != "Service" {
			continue
		}
		if err := sf.set(strings.TrimSpace(key), strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("tomcatconf: %s:%d: %s: %w", file, start, strings.TrimSpace(key), err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("tomcatconf: read %s: %w", file, err)
	}
	if cont.Len() > 0 {
		return fmt.Errorf("tomcatconf: %s:%d: the file ends in a continued line", file, start)
	}
	return nil
}

func (sf *serviceFile) set(key, value string) error {
	switch key {
	case "User":
		sf.User = value
	case "Group":
		sf.Group = value
	case "WorkingDirectory":
		sf.WorkingDirectory = value
	case "Environment":
		if value == "" {
			sf.Environment = nil
			return nil
		}
		words, err := splitWords(value)
		if err != nil {
			return err
		}
		for _, w := range words {
			k, _, ok := strings.Cut(w, "=")
			if !ok || !validEnvName(k) {
				return fmt.Errorf("assignment %q: want NAME=VALUE", w)
			}
		}
		sf.Environment = append(sf.Environment, words...)
	case "EnvironmentFile":
		if value == "" {
			sf.EnvironmentFiles = nil
			return nil
		}
		ef := envFile{Path: value}
		if p, ok := strings.CutPrefix(value, "-"); ok {
			ef = envFile{Path: p, Optional: true}
		}
		if !filepath.IsAbs(ef.Path) {
			return fmt.Errorf("%q: want an absolute path", value)
		}
		sf.EnvironmentFiles = append(sf.EnvironmentFiles, ef)
	case "ExecStart":
		if value == "" {
			sf.ExecStart = nil
			return nil
		}
		words, err := splitWords(strings.TrimLeft(value, "-@:+!"))
		if err != nil {
			return err
		}
		if len(words) == 0 {
			return fmt.Errorf("%q: want a command", value)
		}
		sf.ExecStart = words
	}
	return nil
}

// Env returns the environment the unit gives its process: Environment=,
// then the assignments of each EnvironmentFile= (which override it, as in
// systemd), read under root ("" or "/" for this host). A missing file
// without the "-" prefix is an error.
func (sf *serviceFile) Env(root string) ([]string, error) {
	host, err := hostRoot(root)
	if err != nil {
		return nil, err
	}
	env := append([]string(nil), sf.Environment...)
	for _, ef := range sf.EnvironmentFiles {
		data, err := os.ReadFile(host.Path(ef.Path))
		if err != nil {
			if ef.Optional && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("tomcatconf: %s: EnvironmentFile=%s: %w", sf.Name, ef.Path, err)
		}
		vars, err := parseEnvFile(ef.Path, data)
		if err != nil {
			return nil, err
		}
		env = append(env, vars...)
	}
	return env, nil
}

// Get returns the value of Environment= variable key, and whether it is set.
func (sf *serviceFile) Get(key string) (string, bool) {
	v, ok := "", false
	for _, kv := range sf.Environment {
		if k, val, _ := strings.Cut(kv, "="); k == key {
			v, ok = val, true
		}
	}
	return v, ok
}

func validEnvName(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		if c != '_' && !(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// splitWords splits a unit-file value into words as systemd does for
// Environment= and ExecStart=: separated by white space, with "double"
// or 'single' quotes around (parts of) a word and C escapes (\n \t \\ \"
// \' \s).
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("%q: a backslash at the end", s)
			}
			i++
			w.WriteByte(unescape(s[i]))
			in = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unterminated %c quote", s, quote)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 's':
		return ' '
	}
	return c
}

// parseEnvFile parses an EnvironmentFile: KEY=VALUE lines, # and ;
// comments, values optionally in double or single quotes.
func parseEnvFile(file string, data []byte) ([]string, error) {
	var env []string
	for i, line := range bytes.Split(data, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || !validEnvName(k) {
			return nil, fmt.Errorf("tomcatconf: %s:%d: %q: want NAME=VALUE", file, i+1, l)
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			words, err := splitWords(v)
			if err != nil || len(words) != 1 {
				return nil, fmt.Errorf("tomcatconf: %s:%d: value %s: want one quoted value", file, i+1, v)
			}
			v = words[0]
		}
		env = append(env, k+"="+v)
	}
	return env, nil
}
