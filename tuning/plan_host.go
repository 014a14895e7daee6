package tuning

import (
	"context"
	"encoding/json"
	"fmt"
)

// Undo kinds of the changes a Host makes; Host.Reverters reverts them.
const (
	// undoCPUs restores a CPUSnapshot (which CPUs were online).
	undoCPUs = "cpu-online"
	// undoSysctl restores a sysctl's value; its data is a sysctlUndo.
	undoSysctl = "sysctl"
)

// sysctlUndo is the journal record of a sysctl change: the value before
// and the value set (what Host.VerifyUndo checks; nil in a record from
// before it was kept).
type sysctlUndo struct {
	Name  string  `json:"name"`
	Value string  `json:"value"`
	Set   *string `json:"set,omitempty"`
}

// cpuOnlineUndo is the journal record of KeepOnlineChange: the snapshot
// RestoreCPUs puts back, and the CPUs kept online (what Host.VerifyUndo
// checks; nil in a record from before it was kept). Its JSON is the
// snapshot's with a "want" field.
type cpuOnlineUndo struct {
	CPUSnapshot
	Want *CPUSet `json:"want,omitempty"`
}

// Reverters returns the revert functions for the changes this package
// makes, bound to h's root, under the Undo kinds "file" (FileChange),
// "cpu-online" (KeepOnlineChange) and "sysctl" (SysctlChange). Callers
// add their own kinds (NIC channels, IRQ affinity, tuning/persist's files
// and profile switch) to the map, with AddReverter.
func (h *Host) Reverters() Reverters {
	return Reverters{
		undoFile: revertFile,
		undoCPUs: func(ctx context.Context, data json.RawMessage) error {
			var snap CPUSnapshot
			if err := json.Unmarshal(data, &snap); err != nil {
				return fmt.Errorf("tuning: cpu-online undo record: %w", err)
			}
			return h.RestoreCPUs(ctx, snap)
		},
		undoSysctl: func(_ context.Context, data json.RawMessage) error {
			var u sysctlUndo
			if err := json.Unmarshal(data, &u); err != nil {
				return fmt.Errorf("tuning: sysctl undo record: %w", err)
			}
			cur, err := h.Sysctl(u.Name)
			if err != nil {
				return err
			}
			if cur == u.Value {
				return nil
			}
			_, err = h.SetSysctl(u.Name, u.Value)
			return err
		},
	}
}

// KeepOnlineChange prepares a Change that keeps only want online (the Arm
// Neoverse Tomcat tuning guide's "echo 0 > cpuN/online" for every other
// CPU): Describe is the
// plan, the undo record the current snapshot, Apply KeepOnline and Verify
// a re-read of the online list. An unchanged state gives a Change without
// Apply; CPUs that cannot go offline make it a Skip with the reason.
func (h *Host) KeepOnlineChange(want CPUSet) (*Change, error) {
	plan, err := h.PlanKeepOnline(want)
	if err != nil {
		return nil, err
	}
	if plan.IsEmpty() && len(plan.Blocked) == 0 {
		return &Change{Describe: fmt.Sprintf("online CPUs already %s", want)}, nil
	}
	if len(plan.Blocked) > 0 {
		return &Change{Describe: plan.String(), Skip: fmt.Sprintf("cannot take CPU %d offline: %v", plan.Blocked[0].CPU, plan.Blocked[0].Err)}, nil
	}
	snap, err := h.CPUSnapshot()
	if err != nil {
		return nil, err
	}
	undo, err := NewUndo(undoCPUs, cpuOnlineUndo{CPUSnapshot: snap, Want: &want})
	if err != nil {
		return nil, err
	}
	return &Change{
		Describe: plan.String(),
		Undo:     []Undo{undo},
		Apply: func(ctx context.Context) error {
			_, err := h.KeepOnline(ctx, want, nil)
			return err
		},
		Verify: func(context.Context) error { return h.verifyOnline(want) },
	}, nil
}

// verifyOnline checks that exactly want is online.
func (h *Host) verifyOnline(want CPUSet) error {
	got, err := h.OnlineCPUs()
	if err != nil {
		return err
	}
	if !got.Equal(want) {
		return fmt.Errorf("tuning: online CPUs are %s, wanted %s", got, want)
	}
	return nil
}

// SysctlChange prepares a Change that sets the sysctl name to value (the
// ApacheBench walkthrough's net.ipv4.tcp_max_tw_buckets), recording the
// current value to restore.
func (h *Host) SysctlChange(name, value string) (*Change, error) {
	cur, err := h.Sysctl(name)
	if err != nil {
		return nil, err
	}
	if cur == value {
		return &Change{Describe: fmt.Sprintf("%s already %s", name, value)}, nil
	}
	undo, err := NewUndo(undoSysctl, sysctlUndo{Name: name, Value: cur, Set: &value})
	if err != nil {
		return nil, err
	}
	return &Change{
		Describe: fmt.Sprintf("%s: %s -> %s", name, cur, value),
		Undo:     []Undo{undo},
		Apply: func(context.Context) error {
			_, err := h.SetSysctl(name, value)
			return err
		},
		Verify: func(context.Context) error { return h.verifySysctl(name, value) },
	}, nil
}

// verifySysctl checks that the sysctl name reads value (field by field,
// as SetSysctl compares).
func (h *Host) verifySysctl(name, value string) error {
	got, err := h.Sysctl(name)
	if err != nil {
		return err
	}
	if !sameFields(got, value) {
		return fmt.Errorf("%w: sysctl %s is %q, want %q", ErrNotApplied, name, got, value)
	}
	return nil
}
