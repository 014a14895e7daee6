package tomcatconf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nettune/nettune/internal/command"
)

// CopyTo makes dir a new CATALINA_BASE for in's Tomcat: empty logs/,
// temp/ and work/, and copies of Base/conf and Base/webapps with links
// followed (cp -rL; Debian's conf/ is a link to /etc/tomcat10). In the
// copy's server.xml the Connector q selects listens on port. When in's
// Account is not this process's user, the whole tree is given to that
// account (lchown, which needs root), so the copy runs as the instance
// does. dir must be empty or absent; on error CopyTo removes what it made.
//
// The returned Instance has in's Home, account, command, environment,
// open-files limit and Runner, dir as Base, and ControlProcess: no unit
// runs it. It is not started. Reading a root:tomcat 0640 conf/ needs root
// or the tomcat group.
func (in *Instance) CopyTo(ctx context.Context, dir string, q ConnectorQuery, port int) (*Instance, error) {
	acct, err := in.Account()
	if err != nil {
		return nil, err
	}
	made, err := makeEmptyDir(dir)
	if err != nil {
		return nil, err
	}
	if err := in.copyTree(ctx, dir, q, port, acct); err != nil {
		if rerr := made.undo(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	return &Instance{Home: in.Home, Base: dir, User: acct.Name, Group: in.Group,
		RunCommand: in.RunCommand, Env: in.Env, NoFile: in.NoFile, Runner: in.Runner,
		Control: ControlProcess}, nil
}

func (in *Instance) copyTree(ctx context.Context, dir string, q ConnectorQuery, port int, acct Account) error {
	for _, d := range []string{"logs", "temp", "work"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return fmt.Errorf("tomcatconf: copy of %s: %w", in.Base, err)
		}
	}
	for _, d := range []string{"conf", "webapps"} {
		s := command.Spec{Path: "cp", Args: []string{"-rL", filepath.Join(in.Base, d), dir}}
		if _, err := command.Run(ctx, s); err != nil {
			return fmt.Errorf("tomcatconf: copy %s: %w", d, err)
		}
	}
	cfg, err := Load(filepath.Join(dir, "conf", "server.xml"))
	if err != nil {
		return err
	}
	if _, err := cfg.SetConnector(q, []Attr{{Name: "port", Value: strconv.Itoa(port)}}, nil); err != nil {
		return err
	}
	if _, err := cfg.Save(&SaveOptions{NoBackup: true}); err != nil {
		return err
	}
	if int(acct.UID) == os.Geteuid() {
		return nil
	}
	if err := chownTree(dir, int(acct.UID), int(acct.GID)); err != nil {
		return fmt.Errorf("tomcatconf: give the copy %s to %s: %w", dir, acct.Name, err)
	}
	return nil
}

// madeDir says what makeEmptyDir made, for undo.
type madeDir struct {
	path    string
	created bool // the directory itself; else only its contents
}

// makeEmptyDir creates dir, or checks that it is an empty directory.
func makeEmptyDir(dir string) (madeDir, error) {
	m := madeDir{path: dir}
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.Mkdir(dir, 0o755); err != nil {
			return m, fmt.Errorf("tomcatconf: %w", err)
		}
		m.created = true
	case err != nil:
		return m, fmt.Errorf("tomcatconf: %w", err)
	case len(ents) > 0:
		return m, fmt.Errorf("tomcatconf: copy to %s: the directory is not empty", dir)
	}
	return m, nil
}

// undo removes what makeEmptyDir and the copy made.
func (m madeDir) undo() error {
	if m.created {
		return os.RemoveAll(m.path)
	}
	ents, err := os.ReadDir(m.path)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		errs = append(errs, os.RemoveAll(filepath.Join(m.path, e.Name())))
	}
	return errors.Join(errs...)
}

// chownTree gives dir and everything under it to uid:gid (links
// themselves, not their targets).
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
