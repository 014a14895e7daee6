package tomcatconf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nettune/nettune/internal/atomicfile"
	"github.com/nettune/nettune/internal/udiff"
)

// The changes below are values in the shape tuning.Reversible takes:
// Describe, Apply, Verify and Undo, and marshalled as JSON, all a journal
// needs to undo them from another process after a crash.

// ServerXMLEdit is one rewrite of a server.xml as a value: the bytes the
// file had when the edit was planned and the bytes it gets (the Arm
// guide's access log off, or its Connector attributes).
type ServerXMLEdit struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Kind is the journal kind of ServerXMLEdit records: a server.xml rewrite.
func (ServerXMLEdit) Kind() string { return "tomcat-server-xml" }

// EditServerXML reads the server.xml at path, applies edit to its parsed
// form and returns the edit that would write the result, without writing
// anything. A file that does not parse, or an edit that fails, is an
// error naming the file.
func EditServerXML(path string, edit func(*Config) error) (ServerXMLEdit, error) {
	old, err := os.ReadFile(path)
	if err != nil {
		return ServerXMLEdit{}, fmt.Errorf("tomcatconf: %w", err)
	}
	cfg, err := Parse(path, old)
	if err != nil {
		return ServerXMLEdit{}, err
	}
	if err := edit(cfg); err != nil {
		return ServerXMLEdit{}, fmt.Errorf("tomcatconf: edit %s: %w", path, err)
	}
	return ServerXMLEdit{Path: path, Before: string(old), After: string(cfg.Bytes())}, nil
}

// Changed reports whether the edit changes any byte.
func (e ServerXMLEdit) Changed() bool { return e.Before != e.After }

// Describe is the unified diff of the edit, as diff -u prints it.
func (e ServerXMLEdit) Describe() string {
	return udiff.Unified("a"+e.Path, "b"+e.Path, []byte(e.Before), []byte(e.After))
}

// Apply writes After safely (a temporary file in the same directory,
// fsync, rename, the mode and owner kept). A file that no longer holds
// Before, nor After, was changed by someone else since the edit was
// planned: it is left as it is and Apply fails, naming the file.
func (e ServerXMLEdit) Apply(context.Context) error {
	cur, err := os.ReadFile(e.Path)
	if err != nil {
		return fmt.Errorf("tomcatconf: %w", err)
	}
	switch string(cur) {
	case e.After:
		return nil
	case e.Before:
	default:
		return fmt.Errorf("tomcatconf: %s changed since the edit was planned: left as it is, plan the edit again", e.Path)
	}
	_, err = atomicfile.WriteFile(e.Path, []byte(e.After), &atomicfile.Options{NoBackup: true})
	return err
}

// Verify re-reads the file and checks it holds After; the error names
// the first line that differs ("line 160 is …, want …").
func (e ServerXMLEdit) Verify(context.Context) error {
	got, err := os.ReadFile(e.Path)
	if err != nil {
		return fmt.Errorf("tomcatconf: verify %w", err)
	}
	if string(got) != e.After {
		return fmt.Errorf("tomcatconf: verify %s: content differs from what was written: %s", e.Path, udiff.FirstDifference(got, []byte(e.After)))
	}
	return nil
}

// Expected is what Verify checks, on one line (persist.Expecter): the
// file as the edit wrote it, with the size of the edit.
func (e ServerXMLEdit) Expected() string {
	removed, added := udiff.ChangedLines([]byte(e.Before), []byte(e.After))
	return fmt.Sprintf("%s as the edit wrote it (-%d +%d lines)", e.Path, removed, added)
}

// Undo writes Before back, safely, unless the file holds it already.
func (e ServerXMLEdit) Undo(context.Context) error {
	if e.Path == "" {
		return errors.New("tomcatconf: server.xml edit record has no path")
	}
	if cur, err := os.ReadFile(e.Path); err == nil && string(cur) == e.Before {
		return nil
	}
	_, err := atomicfile.WriteFile(e.Path, []byte(e.Before), &atomicfile.Options{NoBackup: true})
	return err
}

// RestartChange is a program's hold on an instance it restarts with
// changed files (a tuning study): how the instance runs (its Instance,
// inline in the JSON) and whether it ran before. Apply restarts it;
// Undo stops every JVM of its base, also one a killed program left or was
// still launching (StopAll), and starts it again as recorded if it ran
// before.
type RestartChange struct {
	Instance
	WasRunning bool `json:"was_running"`
	// ReadyURL is the page Start waits for. Default "": the Connector's
	// port answering.
	ReadyURL string `json:"ready_url,omitempty"`
	// Last is what the last Apply started (not journaled).
	Last StartResult `json:"-"`
}

// Kind is the journal kind of RestartChange records: the hold on a Tomcat instance a program restarts.
func (RestartChange) Kind() string { return "tomcat-instance" }

// Describe says what the hold does.
func (c *RestartChange) Describe() string {
	end := "leaves it stopped, as found"
	if c.WasRunning {
		end = "starts it again as found"
	}
	return fmt.Sprintf("restart Tomcat (CATALINA_BASE %s) with the changed files; undo stops its JVMs and %s", c.Base, end)
}

// Apply restarts the instance (Instance.Restart: through its unit under
// ControlSystemd, else stop by PID and start) and keeps the result in
// Last.
func (c *RestartChange) Apply(ctx context.Context) error {
	res, err := c.Instance.Restart(ctx, &StartOptions{ReadyURL: c.ReadyURL})
	c.Last = res
	return err
}

// Verify checks that one JVM of the base runs.
func (c *RestartChange) Verify(context.Context) error {
	_, err := c.Instance.PID()
	return err
}

// Undo stops every JVM of the base and, when the instance ran before,
// starts it again as recorded (through its unit under ControlSystemd,
// with the unit's own limits: no NoFile drop-in), keeping the start's
// result in Last.
func (c *RestartChange) Undo(ctx context.Context) error {
	if c.Home == "" || c.Base == "" {
		return errors.New("tomcatconf: restart record has no home or base")
	}
	in := c.Instance
	in.CPUs = nil // as found: on the CPUs this process may use
	if _, err := in.StopAll(ctx, nil); err != nil {
		return err
	}
	if !c.WasRunning {
		return nil
	}
	if in.Control == ControlSystemd {
		in.NoFile = 0
	}
	res, err := in.Start(ctx, &StartOptions{ReadyURL: c.ReadyURL})
	c.Last = res
	return err
}

// DropInChange is a change to a unit's drop-in as a value: the runtime one,
// or the persistent one of a Persistent Unit; the file as it was (Existed,
// Previous) and the settings it gets.
type DropInChange struct {
	Unit string `json:"unit"`
	Root string `json:"root,omitempty"`
	// Persistent is the Unit's: the drop-in under /etc/systemd/system.
	Persistent bool   `json:"persistent,omitempty"`
	Path       string `json:"path"`
	Existed    bool   `json:"existed"`
	Previous   string `json:"previous,omitempty"`
	Next       DropIn `json:"next"`
	// ManagerNoFile is PID 1's hard open-files limit when planned (with
	// a LimitNOFILE): SetDropIn writes no more than it.
	ManagerNoFile uint64 `json:"manager_nofile,omitempty"`
	// Runner runs systemctl (Unit.Runner). Default nil: on this host. Not
	// journaled.
	Runner Runner `json:"-"`
}

// Kind is the journal kind of DropInChange records: a unit's drop-in write.
func (DropInChange) Kind() string { return "systemd-drop-in" }

// PlanDropIn returns the change that sets the drop-in to what set makes of
// its current settings (read with ReadDropIn), without writing anything.
func (u *Unit) PlanDropIn(set func(*DropIn)) (DropInChange, error) {
	p, err := u.DropInPath()
	if err != nil {
		return DropInChange{}, err
	}
	cur, existed, err := u.ReadDropIn()
	if err != nil {
		return DropInChange{}, err
	}
	c := DropInChange{Unit: u.name(), Root: u.Root, Persistent: u.Persistent, Path: p, Existed: existed, Runner: u.Runner}
	if existed {
		b, err := os.ReadFile(p)
		if err != nil {
			return DropInChange{}, fmt.Errorf("tomcatconf: %w", err)
		}
		c.Previous = string(b)
	}
	c.Next = DropIn{LimitNOFILE: cur.LimitNOFILE, CPUAffinity: slices.Clone(cur.CPUAffinity)}
	set(&c.Next)
	if c.Next.LimitNOFILE != 0 {
		if c.ManagerNoFile, err = u.ManagerNoFile(); err != nil {
			return DropInChange{}, err
		}
	}
	return c, nil
}

// unit returns the Unit whose drop-in is the record's Path: the file the
// change was planned on is the one Apply writes, Verify reads and Undo
// puts back, also when the record's Persistent says otherwise (a record
// cut or written by hand). The runtime and the persistent drop-in have
// the same name, so taking the wrong one removes the other's file. A
// Path that is neither of the unit's drop-ins is an error.
func (c DropInChange) unit() (*Unit, error) {
	u := &Unit{Name: c.Unit, Root: c.Root, Runner: c.Runner, Persistent: c.Persistent}
	if c.Path == "" {
		return u, nil
	}
	var tried []string
	for _, persistent := range []bool{c.Persistent, !c.Persistent} {
		u.Persistent = persistent
		p, err := u.DropInPath()
		if err != nil {
			return nil, err
		}
		if p == c.Path {
			return u, nil
		}
		tried = append(tried, p)
	}
	return nil, fmt.Errorf("tomcatconf: drop-in record of %s: path %s is not the unit's drop-in (want %s): left as it is",
		u.name(), c.Path, strings.Join(tried, " or "))
}

// Written is Next as SetDropIn writes it: LimitNOFILE capped at the
// manager's hard limit.
func (c DropInChange) Written() DropIn {
	d := c.Next
	if c.ManagerNoFile > 0 && d.LimitNOFILE > c.ManagerNoFile {
		d.LimitNOFILE = c.ManagerNoFile
	}
	return d
}

// Capped reports whether LimitNOFILE is written lower than asked, at the
// manager's hard limit.
func (c DropInChange) Capped() bool { return c.Written().LimitNOFILE != c.Next.LimitNOFILE }

// Describe names the file, the settings and when they take effect.
func (c DropInChange) Describe() string {
	kind := "runtime drop-in"
	if c.Persistent {
		kind = "persistent drop-in (read at every boot)"
	}
	s := fmt.Sprintf("%s %s (%s) + systemctl daemon-reload; takes effect at the next restart", kind, c.Path, c.Next)
	if c.Capped() {
		s += fmt.Sprintf("\nLimitNOFILE=%d capped to %d, systemd's own hard limit (PID 1): a higher value makes the unit fail to start",
			c.Next.LimitNOFILE, c.ManagerNoFile)
	}
	return s
}

// Apply writes the drop-in and reloads systemd (SetDropIn). It needs root.
func (c DropInChange) Apply(ctx context.Context) error {
	u, err := c.unit()
	if err != nil {
		return err
	}
	_, err = u.SetDropIn(ctx, c.Next)
	return err
}

// Verify re-reads the drop-in and checks it holds what Apply wrote.
func (c DropInChange) Verify(context.Context) error {
	u, err := c.unit()
	if err != nil {
		return err
	}
	got, ok, err := u.ReadDropIn()
	if err != nil {
		return err
	}
	want := c.Written()
	if !ok || got.LimitNOFILE != want.LimitNOFILE || !slices.Equal(got.CPUAffinity, want.CPUAffinity) {
		return fmt.Errorf("tomcatconf: verify %s: holds %s, want %s", c.Path, got, want)
	}
	return nil
}

// Undo writes Previous back to Path, or removes Path when it did not
// exist, then reloads systemd (RestoreDropIn). A Path that is not the
// unit's runtime or persistent drop-in is an error, and nothing changes.
func (c DropInChange) Undo(ctx context.Context) error {
	if c.Unit == "" {
		return errors.New("tomcatconf: drop-in record has no unit")
	}
	u, err := c.unit()
	if err != nil {
		return err
	}
	return u.RestoreDropIn(ctx, DropInResult{Path: c.Path, Existed: c.Existed, Previous: []byte(c.Previous)})
}

// String is d's settings on one line, as the file has them:
// "LimitNOFILE=20000 CPUAffinity=0"; "no setting" when none is set.
func (d DropIn) String() string {
	b, err := d.Render()
	if err != nil {
		return err.Error()
	}
	var settings []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && l[0] != '#' && l[0] != '[' {
			settings = append(settings, l)
		}
	}
	if len(settings) == 0 {
		return "no setting"
	}
	return strings.Join(settings, " ")
}
