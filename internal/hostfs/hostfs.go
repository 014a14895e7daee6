package hostfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The host directories nettune reads and writes, relative to a Root.
const (
	// DefaultRoot is the root of the running host.
	DefaultRoot = "/"
	// SysDir is where sysfs is mounted.
	SysDir = "/sys"
	// ProcDir is where procfs is mounted.
	ProcDir = "/proc"
	// EtcDir holds host configuration files such as default/grub.
	EtcDir = "/etc"
)

// maxAttrSize bounds one sysfs read; the kernel never returns more than a
// page from a sysfs attribute, but some cpulists on huge hosts approach it.
const maxAttrSize = 64 << 10

// Root is a directory standing for the host's "/". The zero value is not
// usable; build one with New or Default.
type Root struct {
	dir   string
	write func(path, value string) error // fault-injection seam; nil = real write
}

// New returns a Root at dir, which must exist and be a directory.
func New(dir string) (Root, error) {
	if dir == "" {
		dir = DefaultRoot
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Root{}, fmt.Errorf("hostfs: root %q: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return Root{}, fmt.Errorf("hostfs: root %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return Root{}, fmt.Errorf("hostfs: root %q is not a directory", dir)
	}
	return Root{dir: abs}, nil
}

// Default returns the Root of the running host, "/".
func Default() Root { return Root{dir: DefaultRoot} }

// Dir returns the root directory.
func (r Root) Dir() string {
	if r.dir == "" {
		return DefaultRoot
	}
	return r.dir
}

// IsHost reports whether r is the running host's "/".
func (r Root) IsHost() bool { return r.Dir() == DefaultRoot }

// Path joins elem under the root. Elements are cleaned and may not climb
// above the root: "../x" stays inside it.
func (r Root) Path(elem ...string) string {
	p := filepath.Join(append([]string{string(filepath.Separator)}, elem...)...)
	return filepath.Join(r.Dir(), p)
}

// Sys returns the path of /sys/elem... under the root.
func (r Root) Sys(elem ...string) string { return r.Path(append([]string{SysDir}, elem...)...) }

// Proc returns the path of /proc/elem... under the root.
func (r Root) Proc(elem ...string) string { return r.Path(append([]string{ProcDir}, elem...)...) }

// Etc returns the path of /etc/elem... under the root.
func (r Root) Etc(elem ...string) string { return r.Path(append([]string{EtcDir}, elem...)...) }

// WithWriteFunc returns a copy of r whose WriteAttr first calls fn with
// the full path and value: when fn returns an error, that error is the
// write's result and nothing is written; when it returns nil the write goes
// ahead. Tests use it to inject kernel refusals (EBUSY, EINVAL) into
// otherwise real fixture trees.
func (r Root) WithWriteFunc(fn func(path, value string) error) Root {
	r.write = fn
	return r
}

// PathError records a failed read or write of a host file.
type PathError struct {
	Op    string // "read" or "write"
	Path  string // full path
	Value string // value written; empty for reads
	Err   error  // usually a syscall.Errno
}

func (e *PathError) Error() string {
	if e.Op == "write" {
		return fmt.Sprintf("write %q to %s: %v", e.Value, e.Path, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *PathError) Unwrap() error { return e.Err }

// Is maps ENODEV and ENXIO (a device or CPU that is not there) to
// os.ErrNotExist, in addition to what the wrapped errno already matches.
func (e *PathError) Is(target error) bool {
	if target == os.ErrNotExist {
		var errno syscall.Errno
		if errors.As(e.Err, &errno) {
			return errno == syscall.ENODEV || errno == syscall.ENXIO
		}
	}
	return false
}

func wrap(op, path, value string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &PathError{Op: op, Path: path, Value: value, Err: err}
}

// attrBufs recycles the read buffers of ReadAttr, so reading the
// thousands of attributes of a large host allocates only what it returns.
var attrBufs = sync.Pool{New: func() any { b := make([]byte, maxAttrSize); return &b }}

// ReadAttr reads a sysfs or procfs attribute in one read(2), without
// stat, and returns a copy of its bytes.
func ReadAttr(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, wrap("read", path, "", err)
	}
	defer f.Close()
	bp := attrBufs.Get().(*[]byte)
	defer attrBufs.Put(bp)
	n, err := f.Read(*bp)
	if err != nil && err != io.EOF {
		return nil, wrap("read", path, "", err)
	}
	return append([]byte(nil), (*bp)[:n]...), nil
}

// ReadString reads an attribute with ReadAttr and trims white space and
// trailing NUL bytes (some captured trees end each file with one).
func ReadString(path string) (string, error) {
	b, err := ReadAttr(path)
	if err != nil {
		return "", err
	}
	return Trim(string(b)), nil
}

// Trim removes trailing NULs and surrounding white space from a value read
// from sysfs or procfs.
func Trim(s string) string {
	return strings.Trim(s, " \t\n\v\f\r\x00")
}

// ReadInt reads an attribute holding one decimal integer ("1\n", "-1\n").
func ReadInt(path string) (int64, error) {
	s, err := ReadString(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, wrap("parse", path, "", fmt.Errorf("value %q is not a decimal integer", s))
	}
	return n, nil
}

// ReadFile reads a whole file of any size (/proc/interrupts, meminfo,
// /etc/default/grub) with read calls until EOF.
func ReadFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, wrap("read", path, "", err)
	}
	return b, nil
}

// Exists reports whether path exists (following symlinks).
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Filesystem magic numbers from statfs(2).
const (
	sysfsMagic = 0x62656572
	procMagic  = 0x9fa0
)

// WriteAttr writes value to a kernel attribute file in place: open
// O_WRONLY (no O_CREAT, no O_TRUNC), one write(2), close. On the host root
// the file must be on sysfs or procfs. Under any other root (a fixture tree
// of ordinary files) the file is also truncated, so the fixture then reads
// back as the kernel would show it.
//
// The error is a *PathError with the path and value; errors.Is works with
// os.ErrPermission, os.ErrNotExist and the raw errno (syscall.EBUSY,
// syscall.EINVAL).
func (r Root) WriteAttr(path, value string) error {
	if r.write != nil {
		if err := r.write(path, value); err != nil {
			return wrap("write", path, value, err)
		}
	}
	flags := os.O_WRONLY
	if r.IsHost() {
		var st syscall.Statfs_t
		if err := syscall.Statfs(path, &st); err != nil {
			return wrap("write", path, value, err)
		}
		if st.Type != sysfsMagic && st.Type != procMagic {
			return wrap("write", path, value, fmt.Errorf("refusing to write: not on sysfs or procfs (filesystem magic %#x)", st.Type))
		}
	} else {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return wrap("write", path, value, err)
	}
	if _, err := f.Write([]byte(value)); err != nil {
		f.Close()
		return wrap("write", path, value, err)
	}
	if err := f.Close(); err != nil {
		return wrap("write", path, value, err)
	}
	return nil
}
