package persist

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
)

// TunedConf is a tuned.conf file as tuned reads it: Python's configparser
// with "=" as the only delimiter, "#" and ";" starting a full-line comment,
// " #" starting an inline comment, keys kept as written (case and all),
// indented lines continuing the previous value, and duplicate sections and
// keys merged (the last value wins, in the place of the first). Comments
// are not kept.
type TunedConf struct {
	Sections []TunedSection
}

// TunedSection is one [name] section of a tuned.conf.
type TunedSection struct {
	Name    string
	Options []Setting
}

// Setting is one key=value line: of a tuned.conf section, or of a
// sysctl.d file.
type Setting struct {
	Key   string
	Value string // a tuned.conf value continued on indented lines holds "\n"
}

// Section returns the section called name and whether there is one.
func (c TunedConf) Section(name string) (TunedSection, bool) {
	for _, s := range c.Sections {
		if s.Name == name {
			return s, true
		}
	}
	return TunedSection{}, false
}

// Get returns the value of key in the section called section, and whether
// it is set.
func (c TunedConf) Get(section, key string) (string, bool) {
	s, ok := c.Section(section)
	if !ok {
		return "", false
	}
	return s.Get(key)
}

// Get returns the value of key and whether it is set.
func (s TunedSection) Get(key string) (string, bool) {
	for _, o := range s.Options {
		if o.Key == key {
			return o.Value, true
		}
	}
	return "", false
}

// set sets key to value, in the place of an existing key.
func (s *TunedSection) set(key, value string) {
	for i := range s.Options {
		if s.Options[i].Key == key {
			s.Options[i].Value = value
			return
		}
	}
	s.Options = append(s.Options, Setting{Key: key, Value: value})
}

// section returns the section called name, appending it when missing.
func (c *TunedConf) section(name string) *TunedSection {
	for i := range c.Sections {
		if c.Sections[i].Name == name {
			return &c.Sections[i]
		}
	}
	c.Sections = append(c.Sections, TunedSection{Name: name})
	return &c.Sections[len(c.Sections)-1]
}

// Merge adds other's sections to c: a section c already has gets other's
// options (other's value wins), a new one is appended. It is what tuned
// does with two files of the same profile, and how a caller adds a [net]
// section rendered by package nic (parsed with ParseTunedConf).
func (c *TunedConf) Merge(other TunedConf) {
	for _, s := range other.Sections {
		dst := c.section(s.Name)
		for _, o := range s.Options {
			dst.set(o.Key, o.Value)
		}
	}
}

// ParseTunedConf parses the text of a tuned.conf (see TunedConf). name is
// the file's name for error messages. An option before the first section,
// a line that is neither a section, a key=value nor a continuation, and an
// empty key are errors naming the line, as tuned's own parser rejects
// them.
func ParseTunedConf(data []byte, name string) (TunedConf, error) {
	var (
		c         TunedConf
		cur       = -1 // index of the current section
		opt       = -1 // index of the current option in it; -1: none
		indent    = 0
		lastEmpty = 0 // empty lines seen after the current value
	)
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		n := i + 1
		commentAt := inlineComment(line)
		if t := strings.TrimLeftFunc(line, unicode.IsSpace); strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
			commentAt = 0
		}
		value := line
		if commentAt >= 0 {
			value = line[:commentAt]
		}
		value = strings.TrimSpace(value)
		if value == "" {
			// configparser keeps empty lines inside a multi-line value
			// (and strips them at the end), unless the line had a
			// comment.
			if commentAt < 0 && opt >= 0 {
				lastEmpty++
			}
			continue
		}
		lead := len(line) - len(strings.TrimLeftFunc(line, unicode.IsSpace))
		if cur >= 0 && opt >= 0 && lead > indent {
			o := &c.Sections[cur].Options[opt]
			o.Value += strings.Repeat("\n", lastEmpty+1) + value
			lastEmpty = 0
			continue
		}
		indent, lastEmpty = lead, 0
		if value[0] == '[' {
			if end := strings.LastIndexByte(value, ']'); end > 1 {
				name := value[1:end]
				cur = -1
				for k := range c.Sections {
					if c.Sections[k].Name == name {
						cur = k
					}
				}
				if cur < 0 {
					c.Sections = append(c.Sections, TunedSection{Name: name})
					cur = len(c.Sections) - 1
				}
				opt = -1
				continue
			}
		}
		if cur < 0 {
			return c, fmt.Errorf("persist: %s line %d: %q comes before any [section]; a tuned.conf starts with a section such as [main]", name, n, value)
		}
		key, val, ok := strings.Cut(value, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return c, fmt.Errorf("persist: %s line %d: %q is not key=value", name, n, value)
		}
		val = strings.TrimSpace(val)
		s := &c.Sections[cur]
		opt = -1
		for k := range s.Options {
			if s.Options[k].Key == key {
				s.Options[k].Value, opt = val, k
			}
		}
		if opt < 0 {
			s.Options = append(s.Options, Setting{Key: key, Value: val})
			opt = len(s.Options) - 1
		}
	}
	return c, nil
}

// inlineComment returns the index of the '#' that starts an inline
// comment (at the start of the line or after white space), or -1.
func inlineComment(line string) int {
	prevSpace := true
	for j, r := range line {
		if r == '#' && prevSpace {
			return j
		}
		prevSpace = unicode.IsSpace(r)
	}
	return -1
}

// Render returns the file's text: each section, then its options as
// key=value, a continued value on lines indented by a tab, a blank line
// between sections. A name, key or value tuned would read back differently
// (a key holding "=", a value holding " #", white space at either end, a
// value ending in an empty line, ...) is an error naming it.
func (c TunedConf) Render() ([]byte, error) {
	var b bytes.Buffer
	for i, s := range c.Sections {
		if err := checkSectionName(s.Name); err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s]\n", s.Name)
		for _, o := range s.Options {
			if err := checkOption(s.Name, o); err != nil {
				return nil, err
			}
			lines := strings.Split(o.Value, "\n")
			for i, line := range lines {
				switch {
				case i == 0:
					fmt.Fprintf(&b, "%s=%s\n", o.Key, line)
				case line == "":
					b.WriteByte('\n') // kept inside a value, as configparser keeps it
				default:
					fmt.Fprintf(&b, "\t%s\n", line)
				}
			}
		}
	}
	return b.Bytes(), nil
}

func checkSectionName(name string) error {
	if name == "" || strings.TrimSpace(name) != name || strings.ContainsAny(name, "]\n\r#;") {
		return fmt.Errorf("persist: tuned.conf section name %q: want a non-empty name without ']', '#', ';', line breaks or surrounding white space", name)
	}
	return nil
}

func checkOption(section string, o Setting) error {
	k := o.Key
	if k == "" || strings.TrimSpace(k) != k || strings.ContainsAny(k, "=\n\r") || strings.ContainsAny(k[:1], "#;[") || inlineComment(k) >= 0 {
		return fmt.Errorf("persist: tuned.conf [%s] key %q: want a non-empty key without '=', line breaks, an inline ' #', surrounding white space, or a leading '#', ';' or '['", section, k)
	}
	lines := strings.Split(o.Value, "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) != line || strings.ContainsRune(line, '\r') || inlineComment(line) > 0 {
			return fmt.Errorf("persist: tuned.conf [%s] %s=%q: a value line must not have surrounding white space or an inline ' #' (tuned would drop it)", section, k, o.Value)
		}
		if i > 0 && (i == len(lines)-1 && line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";")) {
			return fmt.Errorf("persist: tuned.conf [%s] %s=%q: a continued value must not end in an empty line or have comment lines", section, k, o.Value)
		}
	}
	return nil
}
