package numa

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// PinChange is pinning one process, every thread of it, to CPUs (the
// non-destructive alternative to taking the other CPUs offline) as a
// value in the shape tuning.Reversible takes: Describe, Apply, Verify and
// Undo, and as JSON what a journal needs to undo it. The CPUs usually come
// from Topology.PickCPUs: the node's CPUs nearest a NIC.
type PinChange struct {
	// Root is the host root of the Host that planned it ("/" here).
	Root string `json:"root,omitempty"`
	PID  int    `json:"pid"`
	CPUs CPUSet `json:"cpus"`
	// Before is every thread's affinity when planned, what Undo puts back.
	Before ProcessAffinity `json:"before"`
}

// Kind is the journal kind of PinChange records: a process pinned to CPUs.
func (PinChange) Kind() string { return "cpu-affinity" }

// PlanPin returns the change that pins process pid to cpus, reading its
// threads' affinity now (/proc/PID/task, sched_getaffinity(2)) and
// writing nothing.
func (h *Host) PlanPin(pid int, cpus CPUSet) (PinChange, error) {
	if cpus.IsEmpty() {
		return PinChange{}, fmt.Errorf("numa: pin process %d: no CPU given", pid)
	}
	before, err := h.Affinity(pid)
	if err != nil {
		return PinChange{}, err
	}
	return PinChange{Root: h.Root(), PID: pid, CPUs: cpus, Before: before}, nil
}

func (c PinChange) host() (*Host, error) {
	if c.Root == "" {
		return NewDefault(), nil
	}
	return New(c.Root)
}

// Describe names the process, its thread count and the CPUs.
func (c PinChange) Describe() string {
	now := "unknown"
	if len(c.Before.Threads) > 0 {
		now = c.Before.Threads[0].CPUs.String()
	}
	return fmt.Sprintf("pin process %d (%d threads) to CPUs %s (now %s)", c.PID, len(c.Before.Threads), c.CPUs, now)
}

// Apply pins the process (Host.Pin); a failure leaves no thread pinned.
func (c PinChange) Apply(context.Context) error {
	h, err := c.host()
	if err != nil {
		return err
	}
	_, err = h.Pin(c.PID, c.CPUs)
	return err
}

// Verify checks that the process may run on exactly CPUs
// (/proc/PID/status Cpus_allowed_list).
func (c PinChange) Verify(context.Context) error {
	h, err := c.host()
	if err != nil {
		return err
	}
	got, err := h.AllowedCPUs(c.PID)
	if err != nil {
		return err
	}
	if !got.Equal(c.CPUs) {
		return fmt.Errorf("numa: verify pin of process %d: it may run on CPUs %s, want %s", c.PID, got, c.CPUs)
	}
	return nil
}

// Undo puts every thread's recorded affinity back. A process that has
// exited since has nothing to undo.
func (c PinChange) Undo(context.Context) error {
	h, err := c.host()
	if err != nil {
		return err
	}
	if err := h.RestoreAffinity(c.Before); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
