package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// DefaultBackupSuffix is appended to a file's name to make its backup.
const DefaultBackupSuffix = ".nettune.bak"

// Options tune WriteFile. A nil *Options means the defaults.
type Options struct {
	// BackupSuffix names the backup: path + BackupSuffix.
	// Default: DefaultBackupSuffix.
	BackupSuffix string
	// NoBackup skips the backup. Default: false (a backup is kept).
	NoBackup bool
	// Perm is the mode of a file that does not exist yet. Default: 0644.
	// An existing file keeps its own mode.
	Perm os.FileMode
	// FS is the file system seam; tests wrap it to inject faults.
	// Default: the real file system (OS).
	FS FS
}

// Result says what WriteFile did.
type Result struct {
	Path    string // the file actually replaced (a symlink's target)
	Changed bool   // false when the bytes were already identical: nothing written
	Backup  string // the backup path when one was written by this call
	InPlace bool   // true when rename was impossible and the file was rewritten in place
}

// File is what FS.CreateTemp and FS.OpenFile return.
type File interface {
	io.Writer
	Name() string
	Sync() error
	Close() error
	Chmod(mode os.FileMode) error
	Chown(uid, gid int) error
}

// FS is the file system operations WriteFile uses. OS is the real one.
type FS interface {
	CreateTemp(dir, pattern string) (File, error)
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	SyncDir(dir string) error
}

// OS is the real file system.
type OS struct{}

// CreateTemp creates a new file in dir with O_EXCL (os.CreateTemp).
func (OS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

// OpenFile is os.OpenFile.
func (OS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm)
}

// Rename is os.Rename.
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove is os.Remove.
func (OS) Remove(name string) error { return os.Remove(name) }

// SyncDir opens dir and fsyncs it, making a rename in it durable.
func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// ErrNotRegular is matched by errors.Is when the target exists but is not a
// regular file (a directory, device, FIFO or socket).
var ErrNotRegular = errors.New("atomicfile: not a regular file")

// ErrUnchanged is matched by errors.Is when WriteFile failed before it
// touched the file: the original is as it was, and the error says so.
var ErrUnchanged = errors.New("atomicfile: the original is unchanged")

// unchangedError is a failure that left the target as it was.
type unchangedError struct {
	err    error
	target string
}

func (e *unchangedError) Error() string   { return e.err.Error() + "; " + e.target + " is unchanged" }
func (e *unchangedError) Unwrap() []error { return []error{e.err, ErrUnchanged} }

// WriteFile replaces the file at path with data, safely (see the package
// documentation). A missing file is created. It returns what it did. On an
// error before the replace, the original is unchanged, no temp file
// remains, a backup this call made is removed again (there is nothing to
// restore), and the error ends "PATH is unchanged" and matches
// ErrUnchanged. When a rename is impossible and the in-place rewrite fails,
// the file may be cut short: the backup is kept and the error names it.
func WriteFile(path string, data []byte, opts *Options) (res Result, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BackupSuffix == "" {
		o.BackupSuffix = DefaultBackupSuffix
	}
	if o.Perm == 0 {
		o.Perm = 0o644
	}
	if o.FS == nil {
		o.FS = OS{}
	}

	target, err := resolve(path)
	if err != nil {
		return Result{}, err
	}
	res = Result{Path: target}
	touched := false
	defer func() {
		if err == nil || touched {
			return
		}
		if res.Backup != "" {
			if rerr := o.FS.Remove(res.Backup); rerr == nil {
				res.Backup = ""
			}
		}
		err = &unchangedError{err: err, target: target}
	}()

	mode, uid, gid, exists := o.Perm, -1, -1, false
	var old []byte
	switch fi, err := os.Stat(target); {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return res, fmt.Errorf("atomicfile: %s (%s): %w", target, fi.Mode().Type(), ErrNotRegular)
		}
		exists = true
		mode = fi.Mode().Perm()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
		if old, err = os.ReadFile(target); err != nil {
			return res, fmt.Errorf("atomicfile: read %s: %w", target, err)
		}
		if bytes.Equal(old, data) {
			return res, nil
		}
	case errors.Is(err, os.ErrNotExist):
	default:
		return res, fmt.Errorf("atomicfile: stat %s: %w", target, err)
	}

	if exists && !o.NoBackup {
		b, err := backup(o.FS, target, target+o.BackupSuffix, old, mode, uid, gid)
		if err != nil {
			return res, err
		}
		res.Backup = b
	}

	dir := filepath.Dir(target)
	tmp, err := o.FS.CreateTemp(dir, "."+filepath.Base(target)+".tmp-")
	if err != nil {
		return res, fmt.Errorf("atomicfile: create temp file in %s: %w", dir, err)
	}
	tmpName := tmp.Name()
	committed := false
	defer func() {
		if !committed {
			o.FS.Remove(tmpName)
		}
	}()
	if err := writeAll(tmp, data, mode, uid, gid); err != nil {
		return res, fmt.Errorf("atomicfile: write %s: %w", tmpName, err)
	}
	if rerr := o.FS.Rename(tmpName, target); rerr != nil {
		if !errors.Is(rerr, syscall.EBUSY) && !errors.Is(rerr, syscall.EXDEV) {
			return res, fmt.Errorf("atomicfile: rename %s to %s: %w", tmpName, target, rerr)
		}
		// A bind-mounted file cannot be replaced by rename: rewrite it in
		// place. The backup above still holds the original.
		touched = true
		if err := rewriteInPlace(o.FS, target, data); err != nil {
			kept := "no backup was made (NoBackup)"
			if b := target + o.BackupSuffix; !o.NoBackup {
				kept = "the original is in " + b
			}
			return res, fmt.Errorf("atomicfile: rename %s to %s refused (%v), and rewriting in place failed, so %s may be cut short (%s): %w", tmpName, target, rerr, target, kept, err)
		}
		res.InPlace = true
		res.Changed = true
		return res, nil
	}
	committed = true
	touched = true
	res.Changed = true
	if err := o.FS.SyncDir(dir); err != nil {
		return res, fmt.Errorf("atomicfile: %s replaced, but fsync of directory %s failed: %w", target, dir, err)
	}
	return res, nil
}

// resolve follows symlinks to the file that must be replaced. A dangling
// link resolves to its (missing) target, which is then created.
func resolve(path string) (string, error) {
	p := path
	for i := 0; i < 40; i++ {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("atomicfile: %w", err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("atomicfile: %w", err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", fmt.Errorf("atomicfile: %s: too many levels of symbolic links", path)
}

func writeAll(f File, data []byte, mode os.FileMode, uid, gid int) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if uid >= 0 && (uid != os.Geteuid() || gid != os.Getegid()) {
		if err := f.Chown(uid, gid); err != nil {
			f.Close()
			return fmt.Errorf("keep owner %d:%d: %w", uid, gid, err)
		}
	}
	return f.Close()
}

// backup copies the original to name unless name already exists (the
// first backup is the admin's file; a later one could be our own output).
// It returns name when it wrote it, "" when a backup was already there.
func backup(fsys FS, target, name string, old []byte, mode os.FileMode, uid, gid int) (string, error) {
	if _, err := os.Lstat(name); err == nil {
		return "", nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("atomicfile: backup %s: %w", name, err)
	}
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return "", fmt.Errorf("atomicfile: backup of %s to %s: %w", target, name, err)
	}
	if err := writeAll(f, old, mode, uid, gid); err != nil {
		fsys.Remove(name)
		return "", fmt.Errorf("atomicfile: backup of %s to %s: %w", target, name, err)
	}
	return name, nil
}

func rewriteInPlace(fsys FS, target string, data []byte) error {
	f, err := fsys.OpenFile(target, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Restore copies the backup made by WriteFile back over path (safely, with
// WriteFile and no new backup) and removes the backup. Restoring when no
// backup exists is not an error and changes nothing, so Restore is
// idempotent. It reports whether a backup was restored.
func Restore(path string, opts *Options) (bool, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BackupSuffix == "" {
		o.BackupSuffix = DefaultBackupSuffix
	}
	target, err := resolve(path)
	if err != nil {
		return false, err
	}
	name := target + o.BackupSuffix
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("atomicfile: read backup %s: %w", name, err)
	}
	o.NoBackup = true
	if _, err := WriteFile(target, data, &o); err != nil {
		return false, err
	}
	if err := os.Remove(name); err != nil {
		return true, fmt.Errorf("atomicfile: %s restored, but removing backup %s: %w", target, name, err)
	}
	return true, nil
}
