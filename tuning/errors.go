package tuning

import "errors"

// Errors callers branch on with errors.Is.
var (
	// ErrNotHotpluggable: the CPU has no cpuN/online file, so the kernel
	// cannot take it offline (x86 cpu0 on most machines). It also matches
	// errors.ErrUnsupported.
	ErrNotHotpluggable error = unsupported("tuning: cpu is not hot-pluggable")
	// ErrUnknownCPU: a negative CPU id, or one the host does not have
	// (not in /sys/devices/system/cpu/present).
	ErrUnknownCPU = errors.New("tuning: no such cpu")
	// ErrAllOffline: the change would leave no CPU online.
	ErrAllOffline = errors.New("tuning: refusing to take every cpu offline")
	// ErrNotApplied: the kernel accepted a write but reading the state
	// back shows a different value.
	ErrNotApplied = errors.New("tuning: change not applied")
	// ErrPendingJournal: a journal still records changes that were
	// applied and never reverted: a previous run crashed or was killed,
	// and its changes must be reverted before a new run starts.
	ErrPendingJournal = errors.New("tuning: journal has unreverted changes")
	// ErrJournalLocked: CreateJournal, RevertJournal or tuning/persist's
	// VerifyJournal finds the journal locked by its owner, a run that is
	// still alive. The error names that run's PID. Reverting under a live
	// run would undo its changes while it measures them.
	ErrJournalLocked = errors.New("tuning: journal is in use by a live run")
	// ErrTornJournal: a journal holds a record cut short (a crash or a
	// full disk while it was written), is empty, or its first record is
	// cut: what it says cannot be read whole. errors.As gives a
	// *TornRecordError for a torn step record.
	ErrTornJournal = errors.New("tuning: journal has a torn record")
)

// unsupported is a sentinel that also matches errors.ErrUnsupported.
type unsupported string

// Error returns the message.
func (e unsupported) Error() string { return string(e) }

// Is reports whether target is errors.ErrUnsupported.
func (e unsupported) Is(target error) bool { return target == errors.ErrUnsupported }
