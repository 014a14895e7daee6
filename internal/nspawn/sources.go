package nspawn

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// HostMirror returns the archive URI the apt sources under root
// (ROOT/etc/apt/sources.list, and the *.list and *.sources files of
// ROOT/etc/apt/sources.list.d, one-line and deb822 forms) give for suite's
// main component: the first enabled "deb" entry, in apt's file order,
// whose suites include suite and whose components include main, with an
// http, https or file URI. It returns "" when there is none (debootstrap
// then uses its own default). Unreadable files are skipped: they are
// someone else's.
func HostMirror(root, suite string) string {
	files := []string{filepath.Join(root, "etc", "apt", "sources.list")}
	d := filepath.Join(root, "etc", "apt", "sources.list.d")
	des, _ := os.ReadDir(d)
	var names []string
	for _, de := range des {
		if n := de.Name(); strings.HasSuffix(n, ".list") || strings.HasSuffix(n, ".sources") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, filepath.Join(d, n))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var entries []aptSource
		if strings.HasSuffix(f, ".sources") {
			entries = parseDeb822(data)
		} else {
			entries = parseOneLine(data)
		}
		for _, e := range entries {
			if e.matches(suite) {
				return e.uris[0]
			}
		}
	}
	return ""
}

// aptSource is one source entry of either form.
type aptSource struct {
	types, uris, suites, components []string
	enabled                         bool
}

func (e aptSource) matches(suite string) bool {
	if !e.enabled || len(e.uris) == 0 || !has(e.types, "deb") || !has(e.suites, suite) || !has(e.components, "main") {
		return false
	}
	u := e.uris[0]
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "file:/")
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parseOneLine reads sources.list(5)'s one-line form:
// "deb [opt=val ...] URI SUITE COMPONENT...".
func parseOneLine(data []byte) []aptSource {
	var res []aptSource
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := sc.Text()
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		e := aptSource{types: f[:1], enabled: true}
		rest := f[1:]
		if strings.HasPrefix(rest[0], "[") {
			for len(rest) > 0 {
				done := strings.HasSuffix(rest[0], "]")
				rest = rest[1:]
				if done {
					break
				}
			}
		}
		if len(rest) < 2 {
			continue
		}
		e.uris, e.suites, e.components = rest[:1], rest[1:2], rest[2:]
		res = append(res, e)
	}
	return res
}

// parseDeb822 reads sources.list(5)'s deb822 form: stanzas of "Field:
// value" separated by blank lines; Types, URIs, Suites, Components and
// Enabled are used.
func parseDeb822(data []byte) []aptSource {
	var res []aptSource
	cur := aptSource{enabled: true}
	seen := false
	last := ""
	flush := func() {
		if seen {
			res = append(res, cur)
		}
		cur, seen, last = aptSource{enabled: true}, false, ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		if strings.HasPrefix(l, "#") {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' { // a continuation line
			cur.add(last, l)
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		seen, last = true, strings.ToLower(strings.TrimSpace(k))
		cur.add(last, v)
	}
	flush()
	return res
}

func (e *aptSource) add(field, v string) {
	f := strings.Fields(v)
	switch field {
	case "types":
		e.types = append(e.types, f...)
	case "uris":
		e.uris = append(e.uris, f...)
	case "suites":
		e.suites = append(e.suites, f...)
	case "components":
		e.components = append(e.components, f...)
	case "enabled":
		if len(f) > 0 && strings.EqualFold(f[0], "no") {
			e.enabled = false
		}
	}
}
