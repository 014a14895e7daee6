package bootcfg

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns that stems from one of
// these conditions matches it with errors.Is.
var (
	// ErrSyntax: a file or a kernel command line could not be parsed (an
	// unterminated quote, a command substitution without its end).
	ErrSyntax = errors.New("bootcfg: syntax error")
	// ErrInvalidParam: a kernel parameter that cannot be written on a
	// command line (empty key, a quote or newline in its value, ...).
	ErrInvalidParam = errors.New("bootcfg: invalid kernel parameter")
	// ErrDynamic: the value of a variable is computed by the shell
	// (command substitution, a reference to an unknown variable, a
	// condition), so it cannot be read or edited without executing the
	// file.
	ErrDynamic = errors.New("bootcfg: value computed by the shell")
	// ErrNoTool: none of update-grub, grub2-mkconfig, grub-mkconfig or
	// grubby was found.
	ErrNoTool = errors.New("bootcfg: no bootloader configuration tool found")
	// ErrNoIOMMUState: neither /sys/kernel/iommu_groups nor the kernel log
	// says anything about the IOMMU.
	ErrNoIOMMUState = errors.New("bootcfg: IOMMU state not found")
)

// SyntaxError locates a syntax error in a file or a command line.
type SyntaxError struct {
	File   string // path, or "" for a string parsed directly
	Line   int    // 1-based line of the start of the construct
	Offset int    // byte offset of the start of the construct
	Msg    string // what is wrong and what was expected
}

// Error returns "bootcfg: FILE:LINE: message".
func (e *SyntaxError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("bootcfg: %s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("bootcfg: offset %d: %s", e.Offset, e.Msg)
}

// Is reports whether target is ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// dynamicError says which assignment makes a variable's value unknowable
// without running the shell.
type dynamicError struct {
	Name   string // the variable
	File   string // the file holding the assignment
	Line   int    // its line
	Reason string // e.g. "command substitution $(sed ...)"
}

// Error names the variable, the file and line, and the expansion.
func (e *dynamicError) Error() string {
	return fmt.Sprintf("bootcfg: %s is computed by the shell at %s:%d (%s); edit that file by hand or remove the expansion", e.Name, e.File, e.Line, e.Reason)
}

// Is reports whether target is ErrDynamic.
func (e *dynamicError) Is(target error) bool { return target == ErrDynamic }
