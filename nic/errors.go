package nic

import (
	"errors"
	"os"
	"syscall"
)

// Sentinel errors. Every error a Client returns for a device is an *Error;
// test it with errors.Is against these, against os.ErrNotExist and
// os.ErrPermission, or against the raw errno (syscall.EBUSY).
var (
	// ErrNoInterface means no interface has the name, or holds the
	// address, that was asked for (ENODEV from the kernel). It also
	// matches os.ErrNotExist.
	ErrNoInterface = errors.New("no such interface")
	// ErrNotSupported means the driver does not implement the operation
	// (EOPNOTSUPP: lo has no channels), or the kernel does not let user
	// space set this IRQ's affinity (EIO: a managed or per-CPU interrupt).
	// It also matches os.ErrNotExist and errors.ErrUnsupported.
	ErrNotSupported = errors.New("operation not supported by the device")
	// ErrBusy means the device refused the change for now (EBUSY: an XDP
	// program, an AF_XDP socket or a firmware operation holds the queues).
	ErrBusy = errors.New("device or resource busy")
	// ErrPermission means the caller lacks CAP_NET_ADMIN, or root for IRQ
	// affinity (EPERM, EACCES). It also matches os.ErrPermission.
	ErrPermission = errors.New("operation not permitted")
	// ErrExceedsMaximum is the kernel's refusal of a channel count above
	// the device's pre-set maximum, in the kernel's words. It is returned
	// before any ioctl is made, and also matches syscall.EINVAL.
	ErrExceedsMaximum error = kernelRejection("requested channel count exceeds maximum")
	// ErrNoRXOrTX is the kernel's refusal of channel counts that leave no
	// RX or no TX channel (no combined channel and rx or tx 0), in the
	// kernel's words. It is returned before any ioctl is made, and also
	// matches syscall.EINVAL.
	ErrNoRXOrTX error = kernelRejection("requested channel counts would result in no RX or TX channel being configured")
	// ErrRejected means the driver refused values that passed the
	// kernel's generic checks (EINVAL: an RSS table or AF_XDP socket that
	// needs more queues, an odd count the hardware cannot do).
	ErrRejected = errors.New("driver rejected the requested values")
	// ErrNotApplied means the kernel accepted a change but reading the
	// device back shows other values (a driver that rounds or clamps).
	ErrNotApplied = errors.New("device reports other values than were set")
	// ErrSyntax is matched by every parse failure (ethtool -l text,
	// ethtool -L arguments, /proc/interrupts).
	ErrSyntax = errors.New("invalid syntax")
)

// kernelRejection is a refusal the kernel's ethtool core makes with
// EINVAL (net/ethtool/channels.c); nic makes it before the ioctl.
type kernelRejection string

// Error returns the kernel's wording.
func (k kernelRejection) Error() string { return string(k) }

// Is makes a rejection match syscall.EINVAL, the errno the kernel returns.
func (k kernelRejection) Is(target error) bool { return target == syscall.EINVAL }

// Error is a failed operation on one interface or IRQ.
type Error struct {
	Op        string // "get channels", "set channels", "set irq affinity", ...
	Interface string // interface name; empty for IRQ-only operations
	Request   string // what was asked ("rx 2 tx 2", "irq 38 cpus 0-3"); empty for reads
	Err       error  // a syscall.Errno or one of the sentinels above, possibly wrapped
}

// Error reads "nic: OP REQUEST on IF: cause".
func (e *Error) Error() string {
	s := "nic: " + e.Op
	if e.Request != "" {
		s += " " + e.Request
	}
	if e.Interface != "" {
		s += " on " + e.Interface
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is maps the errnos the ethtool ioctls and /proc/irq writes return to
// nic's sentinels and to os.ErrNotExist / os.ErrPermission.
func (e *Error) Is(target error) bool {
	var errno syscall.Errno
	if !errors.As(e.Err, &errno) {
		return target == os.ErrNotExist && errors.Is(e.Err, ErrNoInterface)
	}
	switch errno {
	case syscall.ENODEV, syscall.ENXIO:
		return target == ErrNoInterface || target == os.ErrNotExist
	case syscall.EOPNOTSUPP:
		return target == ErrNotSupported || target == os.ErrNotExist || target == errors.ErrUnsupported
	case syscall.EBUSY:
		return target == ErrBusy
	case syscall.EPERM, syscall.EACCES:
		return target == ErrPermission
	case syscall.EINVAL:
		return target == ErrRejected
	}
	return false
}

func opError(op, ifname, req string, err error) error {
	return &Error{Op: op, Interface: ifname, Request: req, Err: err}
}
