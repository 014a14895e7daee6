//go:build linux

package study

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/nettune/nettune/nic"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// nicQueuesKind sets the NIC's queue count to Tomcat's CPUs, searched
// over candidates.
func nicQueuesKind() Kind {
	return Kind{Name: StepNICQueues, Title: func(h Host) string { return fmt.Sprintf("NIC queues = %d CPUs", h.CPUs.N) },
		Plan: (*planner).nicQueues, Needs: Needs{HostLock: true, Measures: nicQueuesMeasures, Persist: persistNICQueues, GuideUplift: uplift(5.9)}}
}

// nicQueues sets the NIC's queue count to the number of CPUs Tomcat gets
// (ethtool -L IF combined N, or rx N tx N), capped at the device's
// maximum. A virtual device is a NIC for this step when it has channels to
// set: a veth made with numrxqueues/numtxqueues N has rx and tx channels up
// to N; lo and one-queue devices are skipped.
func (p *planner) nicQueues(context.Context) (*tuning.Change, error) {
	n, nc := uint32(p.h.CPUs.N), p.h.NIC
	virtual := nc.Name == "lo" || nc.Virtual
	switch {
	case nc.Name == "":
		return &tuning.Change{Skip: "no NIC: " + nc.Why}, nil
	case nc.Channels == nil && virtual:
		return &tuning.Change{Describe: fmt.Sprintf("ethtool -L %s combined %d", nc.Name, n),
			Skip: fmt.Sprintf("no physical NIC: %s, without channels to set (%s)",
				firstNonEmpty(nc.Why, nc.Name+" is the loopback"), errText(nc.ChannelsErr, "none reported"))}, nil
	case nc.Channels == nil:
		return &tuning.Change{Describe: fmt.Sprintf("ethtool -L %s combined %d", nc.Name, n),
			Skip: fmt.Sprintf("channels unknown: %v", nc.ChannelsErr)}, nil
	}
	ch := *nc.Channels
	limit := ch.MaxQueues()
	switch {
	case limit == 0:
		return &tuning.Change{Skip: nc.Name + " has no combined or rx/tx channels to set"}, nil
	case limit == 1 && virtual:
		return &tuning.Change{Skip: fmt.Sprintf("no physical NIC, and virtual %s has one queue (ethtool -l: %s): "+
			"no queue count to set (a veth made with numrxqueues N numtxqueues N has N)", nc.Name, channelsText(ch))}, nil
	}
	var notes []string
	if virtual {
		notes = append(notes, fmt.Sprintf("%s is virtual, with channels to set (%s)", nc.Name, channelsText(ch)))
	}
	if n > limit {
		notes = append(notes, fmt.Sprintf("%d CPUs capped at %s's maximum of %d queues", n, nc.Name, limit))
		n = limit
	}
	e, err := nic.PlanChannelsEdit(nc.Name, ch, ch.QueueUpdate(n))
	if err != nil {
		return &tuning.Change{Skip: err.Error()}, nil
	}
	desc := e.Describe()
	for _, note := range notes {
		desc += "\n(" + note + ")"
	}
	if p.o.Search != SearchOff {
		s := queueSearch(nc.Name, ch, p.o.queueCandidates(uint32(p.h.CPUs.N), limit, ch.Queues()))
		p.f.search(s)
		desc += "\n" + s.Plan()
	}
	// A device already at the rule's count is left alone, unless the
	// search measures the others against it: then the step is applied as
	// it is (journaled; ETHTOOL_SCHANNELS writes nothing) and measured.
	searchFrom := !e.Changed() && p.o.Search != SearchOff && os.Geteuid() == 0
	if !e.Changed() && !searchFrom {
		return &tuning.Change{Describe: desc}, nil
	}
	if os.Geteuid() != 0 {
		return &tuning.Change{Describe: desc, Skip: "not permitted: changing channels needs CAP_NET_ADMIN (run as root)"}, nil
	}
	c, err := tuning.ChangeFor(e)
	if err != nil {
		return nil, err
	}
	c.Describe = desc
	if searchFrom {
		c.Describe += fmt.Sprintf("\n(%s already has %d queues: kept as it is and measured, for the search)", nc.Name, ch.Queues())
	}
	return c, nil
}

// nicQueuesMeasures: none without a queue count to set; the rule, and
// with -search each measured candidate.
func nicQueuesMeasures(h Host, o Options) int {
	ch := h.NIC.Channels
	if ch == nil || ch.MaxQueues() < 2 {
		return 0
	}
	if o.Search == SearchOff {
		return 1
	}
	return 1 + measuredCandidates(o.queueCandidates(uint32(h.CPUs.N), ch.MaxQueues(), ch.Queues()))
}

// channelsText is ch's maxima and counts in short: "rx 8/8, tx 8/8" (the
// current count, then the maximum) for the kinds the device has.
func channelsText(ch nic.Channels) string {
	var parts []string
	for _, k := range []struct {
		name     string
		cur, max uint32
	}{{"rx", ch.RX, ch.MaxRX}, {"tx", ch.TX, ch.MaxTX}, {"other", ch.Other, ch.MaxOther}, {"combined", ch.Combined, ch.MaxCombined}} {
		if k.max > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", k.name, k.cur, k.max))
		}
	}
	if len(parts) == 0 {
		return "no channels"
	}
	return strings.Join(parts, ", ")
}

// persistNICQueues keeps the queue count (the search's, else one per
// CPU of Tomcat's, capped at the device's maximum): in the tuned profile
// for a physical NIC, else in a systemd .link file.
func persistNICQueues(pp *persistPlan) error {
	h, p := pp.h, pp.p
	if h.NIC.Channels == nil {
		return nil
	}
	n := min(uint32(pp.place.Tomcat.Len()), h.NIC.Channels.MaxQueues())
	if v := pp.f.chosen(StepNICQueues); v > 0 {
		n = uint32(v) // the search's choice
	}
	u := h.NIC.Channels.QueueUpdate(n)
	if p.Tuned && !h.NIC.Virtual {
		text, err := h.NIC.Channels.TunedNet(h.NIC.Name, n).Render()
		if err != nil {
			return err
		}
		p.Profile.Extra, err = persist.ParseTunedConf(text, "net instance")
		return err
	}
	c, err := nic.New(&nic.Options{Root: h.Root})
	if err != nil {
		return err
	}
	l, err := c.LinkFile(h.NIC.Name, u)
	c.Close()
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("channels of %s: no .link file: %v", h.NIC.Name, err))
	} else {
		p.Link = &l
	}
	if p.Tuned {
		p.Notes = append(p.Notes, fmt.Sprintf("%s is virtual: tuned's net plugin skips it, so a .link file carries its channels", h.NIC.Name))
	}
	return nil
}

// queueSearch is the nic-queues step's search on ifname, whose channels
// were orig before the step: each candidate sets the queue count
// (ethtool -L), the one before the step puts orig's counts back.
func queueSearch(ifname string, orig nic.Channels, cands []Candidate) *Search {
	return &Search{Step: StepNICQueues, Setting: "queues", Candidates: cands,
		set: func(ctx context.Context, c Candidate) error {
			cl, err := nic.NewDefault()
			if err != nil {
				return err
			}
			defer cl.Close()
			cur, err := cl.Channels(ifname)
			if err != nil {
				return err
			}
			u := cur.QueueUpdate(uint32(c.Value))
			if c.Previous {
				u = orig.Update()
			}
			e, err := nic.PlanChannelsEdit(ifname, cur, u)
			if err != nil {
				return err
			}
			if !e.Changed() {
				return nil
			}
			return e.Apply(ctx)
		}}
}

// queueCandidates are the queue counts' candidates, with
// -queues-candidates.
func (o Options) queueCandidates(cpus, limit, current uint32) []Candidate {
	return queueCandidates(cpus, limit, current, o.QueueCandidates)
}
