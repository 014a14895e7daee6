package bootcfg

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nettune/nettune/internal/atomicfile"
)

// Edit says which kernel parameters to change in which variable.
type Edit struct {
	// Var is the variable to edit: CmdlineLinux (every boot entry) or
	// CmdlineLinuxDefault (normal entries only). Default: CmdlineLinux.
	Var string
	// Set: each parameter replaces every occurrence of its key (at the
	// position of the first) or is appended.
	Set []Param
	// Remove: every occurrence of these keys is removed.
	Remove []string
}

// Change is the rewrite of one assignment (or one added line).
type Change struct {
	Path  string // the file
	Line  int    // the assignment's line (for an added line: the new line)
	Old   string // the assignment as it was ("" when Added)
	New   string // the assignment as it will be
	Added bool   // a new assignment appended to the file
	// Requoted is true when an unquoted value had to be put in double
	// quotes (it now holds a space or a shell character).
	Requoted bool
}

// Plan is an edit computed against the files, not yet written.
type Plan struct {
	Var     string   // the variable edited
	Before  string   // its effective value before
	After   string   // and after
	Changes []Change // one per rewritten assignment; empty: nothing to do
	// Set and Remove repeat the edit, for Regenerate's grubby arguments.
	Set    []Param
	Remove []string
	// Shadowed lists the parameters of Set that GRUB_CMDLINE_LINUX_DEFAULT
	// gives another value (or keeps when removed): it follows
	// GRUB_CMDLINE_LINUX on normal boot entries, and the kernel applies the
	// last occurrence. Only computed when editing GRUB_CMDLINE_LINUX and
	// _DEFAULT is known.
	Shadowed []Param

	files []fileEdit
	fs    atomicfile.FS // fault-injection seam for tests; nil = real
}

type fileEdit struct {
	path     string
	old, new []byte
}

// Changed reports whether applying the plan would change any file.
func (p *Plan) Changed() bool { return len(p.files) > 0 }

// Files returns the paths of the files the plan rewrites.
func (p *Plan) Files() []string {
	var ps []string
	for _, f := range p.files {
		ps = append(ps, f.path)
	}
	return ps
}

// segment is one assignment of a value chain, as a parsed parameter list.
type segment struct {
	a      *assignment
	cl     *Cmdline
	before string
}

// Plan computes the edit of e.Var: it applies e to the effective value and
// rewrites only the assignments that must change — the plain assignment
// that sets the value, or the NAME="$NAME ..." lines that carry the
// parameters involved, wherever (main file or drop-in) they are. A
// variable assigned nowhere gets a new line at the end of the main file,
// unless that file is empty (0 bytes, or only blanks): then Plan refuses,
// saying so, rather than turn it into a one-line file. Each rewritten assignment keeps its quoting style; every other byte of
// every file is kept.
//
// It refuses a value the shell computes (command substitution, another
// variable, a condition) with an error naming the file and line (errors.Is
// ErrDynamic), and an invalid parameter (ErrInvalidParam).
// Plan writes nothing; Apply does.
func (c *Config) Plan(e Edit) (*Plan, error) {
	name := e.Var
	if name == "" {
		name = CmdlineLinux
	}
	if name != CmdlineLinux && name != CmdlineLinuxDefault {
		return nil, fmt.Errorf("bootcfg: variable %q: want %s or %s", name, CmdlineLinux, CmdlineLinuxDefault)
	}
	for _, p := range e.Set {
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	v := c.Lookup(name)
	if !v.Known {
		return nil, v.Dynamic
	}
	plan := &Plan{Var: name, Before: v.Value, Set: e.Set, Remove: e.Remove}
	if name == CmdlineLinux {
		if d, err := c.Cmdline(CmdlineLinuxDefault); err == nil {
			for _, p := range e.Set {
				if got, ok := d.Get(p.Key); ok && (got.Value != p.Value || got.HasValue != p.HasValue) {
					plan.Shadowed = append(plan.Shadowed, got)
				}
			}
			for _, k := range e.Remove {
				if got, ok := d.Get(k); ok {
					plan.Shadowed = append(plan.Shadowed, got)
				}
			}
		}
	}

	if !v.Set {
		cl := &Cmdline{}
		if _, err := cl.Set(e.Set...); err != nil {
			return nil, err
		}
		plan.After = cl.String()
		if plan.After == "" {
			return plan, nil
		}
		main := c.Files[0]
		if strings.TrimSpace(main.data) == "" {
			// Debian and Fedora ship this file with content; an empty one
			// most often lost it (a failed write, a full disk), and one
			// line would then silently replace every other setting.
			return nil, fmt.Errorf("bootcfg: %s is empty (%d bytes), so %s is not set anywhere: it is not written as a one-line file; restore the file (Debian ships it as /usr/share/grub/default/grub), or write %s=%s into it by hand", main.Path, len(main.data), name, name, quoteValue(plan.After, quoteDouble))
		}
		text := name + "=" + quoteValue(plan.After, quoteDouble)
		prefix := ""
		if main.data != "" && !strings.HasSuffix(main.data, "\n") {
			prefix = "\n"
		}
		nd := main.data + prefix + text + "\n"
		plan.Changes = []Change{{Path: main.Path, Line: strings.Count(nd, "\n"), New: text, Added: true}}
		plan.files = []fileEdit{{path: main.Path, old: []byte(main.data), new: []byte(nd)}}
		return plan, c.verify(plan)
	}

	segs := make([]*segment, len(v.chain))
	for i, a := range v.chain {
		text := a.Value
		if a.SelfAppend() {
			text = a.appendLit
		}
		cl, err := ParseCmdline(text)
		if err != nil {
			return nil, fmt.Errorf("bootcfg: %s at %s:%d: %w", name, a.File, a.Line, err)
		}
		segs[i] = &segment{a: a, cl: cl, before: cl.String()}
	}
	// New parameters go where the kernel parameters end: before a "--",
	// else after the last one.
	tail := segs[len(segs)-1]
	for _, s := range segs {
		if s.cl.sep1 > 0 {
			tail = s
			break
		}
	}
	if tail.a.SelfAppend() {
		tail.cl.lead = " " // keep "$NAME" apart from what is appended
	}
	for _, p := range e.Set {
		first := -1
		for i, s := range segs {
			if len(s.cl.GetAll(p.Key)) > 0 {
				first = i
				break
			}
		}
		if first < 0 {
			tail.cl.set(p)
			continue
		}
		segs[first].cl.set(p)
		for _, s := range segs[first+1:] {
			s.cl.Remove(p.Key)
		}
	}
	for _, s := range segs {
		s.cl.Remove(e.Remove...)
	}

	var after strings.Builder
	edits := map[string][]repl{}
	var order []string
	for _, s := range segs {
		now := s.cl.String()
		after.WriteString(now)
		if now == s.before {
			continue
		}
		if s.a.Unset {
			return nil, fmt.Errorf("bootcfg: %s is unset at %s:%d (\"unset %s\"); add an assignment after that line by hand", name, s.a.File, s.a.Line, name)
		}
		var word string
		requoted := false
		if s.a.SelfAppend() {
			word = `"` + s.a.selfRef + escapeDouble(now) + `"`
		} else {
			style := s.a.Quote
			if style == quoteMixed || style == quoteNone && needsQuotes(now) {
				requoted = style == quoteNone
				style = quoteDouble
			}
			word = quoteValue(now, style)
		}
		newText := s.a.Name + "=" + word
		plan.Changes = append(plan.Changes, Change{Path: s.a.File, Line: s.a.Line, Old: s.a.Text(), New: newText, Requoted: requoted})
		if _, ok := edits[s.a.File]; !ok {
			order = append(order, s.a.File)
		}
		edits[s.a.File] = append(edits[s.a.File], repl{s.a.ValueStart, s.a.End, word})
	}
	plan.After = after.String()
	// The chain was edited piece by piece: the kernel must see what an edit
	// of the whole value gives. It differs only when a parameter is split
	// across assignments (NAME="${NAME},more").
	whole, err := ParseCmdline(v.Value)
	if err != nil {
		return nil, fmt.Errorf("bootcfg: %s in %s: %w", name, v.origin.File, err)
	}
	whole.Set(e.Set...)
	whole.Remove(e.Remove...)
	got, err := ParseCmdline(plan.After)
	if err != nil || !slices.Equal(got.Params(), whole.Params()) {
		return nil, fmt.Errorf("bootcfg: %s: a parameter is split across the assignments at %s:%d and before it; edit by hand", name, v.origin.File, v.origin.Line)
	}
	for _, path := range order {
		f := c.file(path)
		plan.files = append(plan.files, fileEdit{path: path, old: []byte(f.data), new: []byte(applyRepls(f.data, edits[path]))})
	}
	return plan, c.verify(plan)
}

type repl struct {
	start, end int
	text       string
}

func applyRepls(src string, rs []repl) string {
	var b strings.Builder
	at := 0
	for _, r := range rs { // in file order: chains follow source order
		b.WriteString(src[at:r.start])
		b.WriteString(r.text)
		at = r.end
	}
	b.WriteString(src[at:])
	return b.String()
}

func (c *Config) file(path string) *File {
	for _, f := range c.Files {
		if f.Path == path {
			return f
		}
	}
	return nil
}

// verify re-parses the planned files and checks that the edited variable
// reads as planned and every other variable reads as before: a bug in
// quoting is caught here, before anything is written.
func (c *Config) verify(p *Plan) error {
	nc := &Config{}
	for _, f := range c.Files {
		data := f.data
		for _, fe := range p.files {
			if fe.path == f.Path {
				data = string(fe.new)
			}
		}
		nf, err := ParseFile(f.Path, []byte(data))
		if err != nil {
			return fmt.Errorf("bootcfg: internal error: edited %s does not parse: %w", f.Path, err)
		}
		nc.Files = append(nc.Files, nf)
	}
	for _, name := range append(c.Names(), p.Var) {
		old, now := c.Lookup(name), nc.Lookup(name)
		want := old.Value
		if name == p.Var {
			want = p.After
		}
		if now.Known != old.Known || now.Value != want {
			return fmt.Errorf("bootcfg: internal error: the edit would make %s read %q, want %q; nothing written", name, now.Value, want)
		}
	}
	return nil
}

// quoteValue renders v as a shell word in style.
func quoteValue(v string, style quoteStyle) string {
	switch style {
	case quoteSingle:
		return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
	case quoteNone:
		return v
	}
	return `"` + escapeDouble(v) + `"`
}

func escapeDouble(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if strings.IndexByte("\\\"$`", v[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// needsQuotes reports whether v cannot stand unquoted after NAME=.
func needsQuotes(v string) bool {
	if strings.HasPrefix(v, "~") {
		return true
	}
	return strings.ContainsAny(v, " \t\n\"'\\$`;&|<>()*?[]#:~")
}

// Written is one file Apply replaced.
type Written struct {
	Path    string // the file replaced (a symlink's target)
	Backup  string // the backup made by this call, or "" when one existed
	InPlace bool   // rewritten in place (a bind-mounted file)
}

// Apply writes the planned files safely: each is replaced through a temp
// file, fsync and rename, keeping its mode and owner, after a first
// backup to <file>.nettune.bak. A plan with no change writes nothing.
// When a file fails, every file this call replaced is put back with its
// own original bytes and the backups this call made are removed, and the
// error names the file. That includes the failed file itself when it was
// already replaced (the directory fsync after the rename failed, or an
// in-place rewrite stopped half way); a file whose bytes already were the
// planned ones is left as it is. A failed put-back is joined into the
// error, naming the file and its backup.
// Writing /etc/default/grub needs root (errors.Is os.ErrPermission).
// Nothing is regenerated: call Regenerate for that.
func (p *Plan) Apply() ([]Written, error) {
	var done []written
	for _, fe := range p.files {
		res, err := atomicfile.WriteFile(fe.path, fe.new, &atomicfile.Options{FS: p.fs})
		w := written{fe: fe, Written: Written{Path: res.Path, Backup: res.Backup, InPlace: res.InPlace}}
		if err != nil {
			err = fmt.Errorf("bootcfg: write %s: %w", fe.path, err)
			if res.Path != "" && (res.Changed || changedOnDisk(res.Path, fe.old)) {
				done = append(done, w) // replaced before the failure: put it back too
			} else if res.Backup != "" {
				// The original is intact: the backup made for it goes.
				if rerr := p.filesys().Remove(res.Backup); rerr != nil {
					err = errors.Join(err, fmt.Errorf("bootcfg: remove backup %s: %w", res.Backup, rerr))
				}
			}
			if rerr := p.rollback(done); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return nil, err
		}
		if res.Changed {
			done = append(done, w)
		}
	}
	ws := make([]Written, len(done))
	for i, d := range done {
		ws[i] = d.Written
	}
	return ws, nil
}

// Undo puts back what Apply wrote: each planned file that holds the
// plan's new bytes gets its original bytes again, last file first,
// through the same temp file, fsync and rename (no new backup; the
// backups Apply made stay). A file that already holds its original bytes
// is left alone, so Undo after a failed or repeated Apply is safe. A file
// that holds other bytes was changed since (by hand, a package): it is
// left as it is, and the error names it and its backup. Nothing is
// regenerated: call Regenerate for that.
func (p *Plan) Undo() error {
	var errs []error
	for i := len(p.files) - 1; i >= 0; i-- {
		fe := p.files[i]
		cur, err := os.ReadFile(fe.path)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("bootcfg: undo %s: %w", fe.path, err))
			continue
		case bytes.Equal(cur, fe.old):
			continue
		case !bytes.Equal(cur, fe.new):
			errs = append(errs, fmt.Errorf("bootcfg: undo %s: the file changed since the plan was applied (neither its original nor the planned bytes); left as it is, the original is in %s",
				fe.path, fe.path+atomicfile.DefaultBackupSuffix))
			continue
		}
		if _, err := atomicfile.WriteFile(fe.path, fe.old, &atomicfile.Options{NoBackup: true, FS: p.fs}); err != nil {
			errs = append(errs, fmt.Errorf("bootcfg: undo %s: %w", fe.path, err))
		}
	}
	return errors.Join(errs...)
}

// written is a file Apply replaced, with the edit that replaced it: a
// rollback puts back exactly these files, each with its own old bytes.
type written struct {
	Written
	fe fileEdit
}

// changedOnDisk reports whether the file at path no longer holds old (a
// file that cannot be read counts as unchanged: there is nothing to
// compare, and WriteFile reported why).
func changedOnDisk(path string, old []byte) bool {
	b, err := os.ReadFile(path)
	return err == nil && !bytes.Equal(b, old)
}

func (p *Plan) filesys() atomicfile.FS {
	if p.fs == nil {
		return atomicfile.OS{}
	}
	return p.fs
}

// rollback writes each file's old bytes back, newest first, and removes
// the backup this Apply made for it.
func (p *Plan) rollback(done []written) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		d := done[i]
		if _, err := atomicfile.WriteFile(d.Path, d.fe.old, &atomicfile.Options{NoBackup: true, FS: p.fs}); err != nil {
			backup := d.Backup
			if backup == "" {
				backup = d.Path + atomicfile.DefaultBackupSuffix + ", made by an earlier run"
			}
			errs = append(errs, fmt.Errorf("bootcfg: could not put back %s (backup %s): %w", d.Path, backup, err))
			continue
		}
		if d.Backup != "" {
			if err := p.filesys().Remove(d.Backup); err != nil {
				errs = append(errs, fmt.Errorf("bootcfg: %s put back, but removing backup %s: %w", d.Path, d.Backup, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Diff returns the plan as a unified diff of each file (empty when nothing
// changes).
func (p *Plan) Diff() string {
	var b bytes.Buffer
	for _, fe := range p.files {
		b.WriteString(unifiedDiff(fe.path, string(fe.old), string(fe.new)))
	}
	return b.String()
}
