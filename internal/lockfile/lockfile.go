package lockfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLocked is matched by errors.Is when another open file description (in
// practice another process, or another Acquire in this one) holds the lock.
var ErrLocked = errors.New("lockfile: held by another owner")

// HeldError is the refusal of TryLock and Acquire: the lock at Path is held,
// by the process PID when it could be read (0 when the holder had not yet
// written its PID, or wrote none).
type HeldError struct {
	Path string
	PID  int
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("lockfile: %s is locked by PID %d", e.Path, e.PID)
	}
	return fmt.Sprintf("lockfile: %s is locked by a process that has not written its PID", e.Path)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *HeldError) Is(target error) bool { return target == ErrLocked }

// Lock is a held lock. Unlock releases it; so does the owner's death.
type Lock struct {
	path string
	f    *os.File
}

// Acquire creates the lock file at path (and its directory) if needed,
// takes an exclusive flock on it without waiting, and writes this
// process's PID into it. When another owner holds it, it returns a
// *HeldError naming that owner's PID.
func Acquire(path string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lockfile: directory of %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lockfile: open %s: %w", path, err)
	}
	if err := TryLock(f); err != nil {
		f.Close()
		return nil, err
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(pid, 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lockfile: write PID to %s: %w", path, err)
	}
	return &Lock{path: path, f: f}, nil
}

// TryLock takes an exclusive flock on f without waiting. When another
// owner holds it, it returns a *HeldError whose PID is read from f's
// content: the decimal PID Acquire writes, or the "pid" field of the JSON
// object on f's first line, which is how a journal names its owner.
func TryLock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return &HeldError{Path: f.Name(), PID: holderPID(f.Name())}
		default:
			return fmt.Errorf("lockfile: flock %s: %w", f.Name(), err)
		}
	}
}

// holderPID reads the holder's PID from the file. The holder writes it
// just after it takes the lock, so an empty file is read again for up to
// 200 ms before the PID is reported unknown (0).
func holderPID(path string) int {
	for i := 0; i < 20; i++ {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		if pid := ParsePID(b); pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// ParsePID returns the PID a lock file holds: a decimal number on the
// first line, or the "pid" number of a JSON object on it; 0 when neither.
func ParsePID(b []byte) int {
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	line = bytes.TrimSpace(line)
	if n, err := strconv.Atoi(string(line)); err == nil && n > 0 {
		return n
	}
	_, rest, ok := bytes.Cut(line, []byte(`"pid":`))
	if !ok {
		return 0
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(string(rest[:end]))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// Path returns the lock file's name.
func (l *Lock) Path() string { return l.path }

// Unlock releases the lock and closes the file. The file stays, so the
// next owner locks the same inode (removing it could let two owners lock
// two different files of the same name). Unlocking twice is a no-op.
func (l *Lock) Unlock() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("lockfile: close %s: %w", l.path, err)
	}
	return nil
}
