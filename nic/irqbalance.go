package nic

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nettune/nettune/internal/command"
)

// IRQBalanceUnit is the systemd unit Debian's and Fedora's irqbalance
// packages run it as.
const IRQBalanceUnit = "irqbalance.service"

// CommandRunner runs a command and returns what it wrote to stdout and
// stderr together; a non-zero exit is an error, returned with the output.
// Replace it to run systemctl in a container or to record the commands.
type CommandRunner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

type hostRunner struct{}

func (hostRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return command.Run(ctx, command.Spec{Path: name, Args: args})
}

// IRQBalanceStop is stopping irqbalance's systemd unit while IRQs are
// placed by hand (IRQAffinityEdit), as a value in the shape
// tuning.Reversible takes: irqbalance would move them again at its next
// pass (every 10 s). Undo starts the unit again when it was active.
// Marshalled as JSON it is all a journal needs; Runner is not journaled,
// so a revert after a crash runs systemctl on this host. Stopping a unit
// needs root.
type IRQBalanceStop struct {
	Unit string `json:"unit"`
	// WasActive is whether the unit was active when planned: only then
	// does Apply stop it and Undo start it.
	WasActive bool `json:"was_active"`
	// Runner runs systemctl. Default nil: on this host.
	Runner CommandRunner `json:"-"`
}

// Kind is the journal kind of IRQBalanceStop records.
func (IRQBalanceStop) Kind() string { return "nic-irqbalance-stop" }

// PlanIRQBalanceStop asks systemd (`systemctl is-active UNIT`, through r;
// nil: on this host) whether unit ("": IRQBalanceUnit) is active, and
// returns its stop. It changes nothing.
func PlanIRQBalanceStop(ctx context.Context, unit string, r CommandRunner) (IRQBalanceStop, error) {
	if unit == "" {
		unit = IRQBalanceUnit
	}
	s := IRQBalanceStop{Unit: unit, Runner: r}
	state, err := s.state(ctx)
	if err != nil {
		return IRQBalanceStop{}, err
	}
	s.WasActive = state == "active" || state == "activating" || state == "reloading"
	return s, nil
}

// unitStates are what `systemctl is-active` prints.
var unitStates = []string{"active", "reloading", "inactive", "failed", "activating", "deactivating", "maintenance", "refreshing"}

// state is the unit's ActiveState from `systemctl is-active`, which
// exits non-zero for any state but active: its output tells.
func (s IRQBalanceStop) state(ctx context.Context) (string, error) {
	out, err := s.run(ctx, "is-active", s.Unit)
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	for _, st := range unitStates {
		if line == st {
			return st, nil
		}
	}
	if err == nil {
		err = errors.New("unexpected output")
	}
	return "", fmt.Errorf("nic: systemctl is-active %s: %w: %q; want one of %s", s.Unit, err, line, strings.Join(unitStates, ", "))
}

func (s IRQBalanceStop) run(ctx context.Context, args ...string) ([]byte, error) {
	r := s.Runner
	if r == nil {
		r = hostRunner{}
	}
	return r.Run(ctx, "systemctl", args...)
}

// systemctl runs `systemctl VERB UNIT`, the output in the error.
func (s IRQBalanceStop) systemctl(ctx context.Context, verb string) error {
	out, err := s.run(ctx, verb, s.Unit)
	if err != nil {
		return fmt.Errorf("nic: systemctl %s %s: %w: %s", verb, s.Unit, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Describe says what Apply and Undo do.
func (s IRQBalanceStop) Describe() string {
	if !s.WasActive {
		return s.Unit + " is not active: nothing to stop"
	}
	return "stop " + s.Unit + " for the step (systemctl stop), so that it does not move the IRQs; start it again after"
}

// Apply stops the unit when it was active.
func (s IRQBalanceStop) Apply(ctx context.Context) error {
	if !s.WasActive {
		return nil
	}
	return s.systemctl(ctx, "stop")
}

// Verify checks the unit is not active (nor on its way to be).
func (s IRQBalanceStop) Verify(ctx context.Context) error {
	state, err := s.state(ctx)
	if err != nil {
		return err
	}
	if s.WasActive && (state == "active" || state == "activating" || state == "reloading") {
		return fmt.Errorf("nic: %s is %s after systemctl stop: %w", s.Unit, state, ErrNotApplied)
	}
	return nil
}

// Undo starts the unit again when it was active: a start of an active
// unit does nothing, so Undo may run twice.
func (s IRQBalanceStop) Undo(ctx context.Context) error {
	if !s.WasActive {
		return nil
	}
	return s.systemctl(ctx, "start")
}
