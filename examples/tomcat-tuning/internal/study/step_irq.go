//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/tuning"
)

// stepIRQ is the kind of the user's IRQ steps: irq:spread in -steps.
const stepIRQ = "irq"

// irqKind places the NIC's queue interrupts: irq:spread gives each queue
// one of Tomcat's CPUs, in queue order, as vendors' set_irq_affinity
// scripts do (nic.Client.PlanQueueSpreadEdit), journaled as a
// nic.IRQAffinityEdit and undone after. When irqbalance runs, its unit is
// stopped first (nic.IRQBalanceStop) and started again after the IRQs are
// put back.
func irqKind() Kind {
	return Kind{Name: stepIRQ, Arg: "spread", With: irqStep}
}

// irqStep is the step of irq:ARG; spread is the only placement.
func irqStep(arg string) (Kind, error) {
	if arg != "spread" {
		return Kind{}, fmt.Errorf("placement %q: the one placement is spread", arg)
	}
	name := stepIRQ + ":" + arg
	return Kind{Name: name, Title: title("the NIC's queue IRQs spread over Tomcat's CPUs"),
		Plan: func(p *planner, ctx context.Context) (*tuning.Change, error) { return p.irqSpread(ctx, name) },
		Needs: Needs{HostLock: true, Measures: irqMeasures, Persist: func(pp *persistPlan) error {
			pp.p.Notes = append(pp.p.Notes, name+": IRQ affinities last until the next boot (/proc/irq keeps nothing): "+
				"irqbalance's --banirq, or a unit that writes them at boot, keeps them")
			return nil
		}}}, nil
}

// irqMeasures is 0 where the step is skipped whatever happens: no NIC, or
// a virtual one (its traffic raises no queue interrupts).
func irqMeasures(h Host, _ Options) int {
	if h.NIC.Name == "" || h.NIC.Virtual {
		return 0
	}
	return 1
}

// irqSpread plans the spread of the NIC's queue IRQs over the CPUs
// Tomcat runs on at this step, or says why it cannot.
func (p *planner) irqSpread(ctx context.Context, step string) (*tuning.Change, error) {
	n := p.h.NIC
	switch {
	case n.Name == "":
		return &tuning.Change{Skip: "no NIC serves the target"}, nil
	case n.Virtual:
		return &tuning.Change{Skip: n.Name + " is virtual (no device/): its traffic raises no queue interrupts to place"}, nil
	}
	stop, skip, err := p.irqbalanceStop(ctx)
	if err != nil || skip != "" {
		return &tuning.Change{Skip: skip}, err
	}
	place, _ := placedBefore(p.h, p.o, step)
	c, err := nic.New(&nic.Options{Root: p.h.Root})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	e, err := c.PlanQueueSpreadEdit(n.Name, place.Tomcat.IDs())
	if errors.Is(err, nic.ErrNotSupported) {
		return &tuning.Change{Skip: fmt.Sprintf("%s: %v", n.Name, err)}, nil
	}
	if err != nil {
		return nil, err
	}
	if !e.Changed() && stop == nil {
		return &tuning.Change{Describe: e.Describe() + ": already so"}, nil
	}
	ch, err := tuning.ChangeFor(e)
	if err != nil || stop == nil {
		return ch, err
	}
	return withIRQBalanceStopped(*stop, ch)
}

// irqbalanceStop is irqbalance's unit stopped for the step when
// irqbalance runs (nil when it does not), or why the step cannot run: an
// irqbalance that systemd's irqbalance.service does not run. On a fixture
// root the process is read from its /proc and the unit taken for active.
func (p *planner) irqbalanceStop(ctx context.Context) (*nic.IRQBalanceStop, string, error) {
	pids, _ := loadgen.FindProcess(p.h.Root, "irqbalance")
	if len(pids) == 0 {
		return nil, "", nil
	}
	if !p.h.Live {
		return &nic.IRQBalanceStop{Unit: nic.IRQBalanceUnit, WasActive: true}, "", nil
	}
	stop, err := nic.PlanIRQBalanceStop(ctx, "", nil)
	if err != nil {
		return nil, "", err
	}
	if !stop.WasActive {
		return nil, fmt.Sprintf("irqbalance (PID %d) runs, not as %s, and would move the IRQs again: stop it for the study and start it after", pids[0], nic.IRQBalanceUnit), nil
	}
	return &stop, "", nil
}

// withIRQBalanceStopped is the change ch made with irqbalance stopped
// first: stop's undo record before ch's, so that a revert (last first)
// puts the IRQs back before irqbalance starts again.
func withIRQBalanceStopped(stop nic.IRQBalanceStop, ch *tuning.Change) (*tuning.Change, error) {
	sc, err := tuning.ChangeFor(stop)
	if err != nil {
		return nil, err
	}
	return &tuning.Change{
		Describe: sc.Describe + "\n" + ch.Describe,
		Undo:     append(sc.Undo, ch.Undo...),
		Apply: func(ctx context.Context) error {
			if err := sc.Apply(ctx); err != nil {
				return err
			}
			return ch.Apply(ctx)
		},
		Verify: func(ctx context.Context) error {
			if err := sc.Verify(ctx); err != nil {
				return err
			}
			if ch.Verify == nil {
				return nil
			}
			return ch.Verify(ctx)
		},
	}, nil
}
