package nic

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nettune/nettune/internal/hostfs"
)

// IRQAffinityEdit is setting the CPU affinity of a NIC's queue interrupts
// as a value, the shape tuning.Reversible takes (Describe, Apply, Verify,
// Undo): each IRQ's CPUs before and after, and the host root whose
// /proc/irq it writes. Marshalled as JSON it is all a journal needs to put
// the affinities back from another process after a crash. Writing
// /proc/irq/N/smp_affinity_list needs root.
type IRQAffinityEdit struct {
	Interface string        `json:"interface"`
	Root      string        `json:"root,omitempty"` // "" is "/"
	Before    []IRQAffinity `json:"before"`
	After     []IRQAffinity `json:"after"`
}

// Kind is the journal kind of IRQAffinityEdit records.
func (IRQAffinityEdit) Kind() string { return "nic-irq-affinity" }

// PlanQueueSpreadEdit is PlanQueueSpread as an edit: the spread of
// ifname's queue interrupts over cpus, with each IRQ's affinity now. It
// changes nothing.
func (c *Client) PlanQueueSpreadEdit(ifname string, cpus []int) (IRQAffinityEdit, error) {
	plan, err := c.PlanQueueSpread(ifname, cpus)
	if err != nil {
		return IRQAffinityEdit{}, err
	}
	e := IRQAffinityEdit{Interface: ifname, Root: c.root.Dir(), After: plan}
	for _, a := range plan {
		cur, err := c.IRQAffinity(a.IRQ)
		if err != nil {
			return IRQAffinityEdit{}, err
		}
		e.Before = append(e.Before, IRQAffinity{IRQ: a.IRQ, CPUs: cur})
	}
	return e, nil
}

// Changed reports whether an IRQ gets other CPUs than it has.
func (e IRQAffinityEdit) Changed() bool {
	for i, a := range e.After {
		if i >= len(e.Before) || CPUList(e.Before[i].CPUs) != CPUList(a.CPUs) {
			return true
		}
	}
	return false
}

// Describe lists each IRQ's change: "eth0's queue IRQs: irq 38 cpus
// 0-1 -> 1, irq 39 cpus 0-1 -> 1".
func (e IRQAffinityEdit) Describe() string {
	var parts []string
	for i, a := range e.After {
		before := "?"
		if i < len(e.Before) {
			before = CPUList(e.Before[i].CPUs)
		}
		parts = append(parts, fmt.Sprintf("irq %d cpus %s -> %s", a.IRQ, before, CPUList(a.CPUs)))
	}
	return e.Interface + "'s queue IRQs: " + strings.Join(parts, ", ")
}

// Apply sets each IRQ's After CPUs; on a failure the IRQs already set are
// put back (Client.ApplyIRQAffinity).
func (e IRQAffinityEdit) Apply(context.Context) error { return e.set(e.After) }

// Undo sets each IRQ's Before CPUs again.
func (e IRQAffinityEdit) Undo(context.Context) error { return e.set(e.Before) }

// Verify re-reads each IRQ's affinity and checks it is After's.
func (e IRQAffinityEdit) Verify(context.Context) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	for _, a := range e.After {
		got, err := c.IRQAffinity(a.IRQ)
		if err != nil {
			return err
		}
		if !slices.Equal(got, a.CPUs) {
			return opError("verify irq affinity", e.Interface, a.String(),
				fmt.Errorf("%w: irq %d has cpus %s", ErrNotApplied, a.IRQ, CPUList(got)))
		}
	}
	return nil
}

func (e IRQAffinityEdit) set(plan []IRQAffinity) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	_, err = c.ApplyIRQAffinity(plan)
	return err
}

// client is a Client of the edit's root for /proc/irq alone (no ethtool
// socket: the affinities are files).
func (e IRQAffinityEdit) client() (*Client, error) {
	r, err := hostfs.New(e.Root)
	if err != nil {
		return nil, &Error{Op: "open", Interface: e.Interface, Err: err}
	}
	return &Client{root: r}, nil
}
