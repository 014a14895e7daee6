package nic

import (
	"context"
	"errors"
	"fmt"
)

// ErrOtherNetNS is matched by errors.Is when a ChannelsEdit is applied or
// undone from another network namespace than the one it was planned in:
// an interface of the same name there is another device.
var ErrOtherNetNS = errors.New("nic: another network namespace than the change's")

// ChannelsEdit is one channel-count change on one interface as a value,
// the shape tuning.Reversible takes (Describe, Apply, Verify, Undo), for
// `ethtool -L IF combined N`: what the device had, what it gets, and the
// network namespace it lives in. Marshalled as JSON it is all a journal
// needs to undo the change from another process after a crash. Apply,
// Verify and Undo open an ethtool socket in the calling thread's namespace
// and need CAP_NET_ADMIN.
type ChannelsEdit struct {
	Interface string   `json:"interface"`
	Before    Channels `json:"before"`
	After     Channels `json:"after"`
	// NetNS is the inode of the network namespace the edit was planned
	// in (/proc/thread-self/ns/net); Apply and Undo refuse in another
	// one (ErrOtherNetNS). 0 (a record from before this field) is not
	// checked.
	NetNS uint64 `json:"netns,omitempty"`
}

// Kind is the journal kind of ChannelsEdit records: a channel count set with ETHTOOL_SCHANNELS.
func (ChannelsEdit) Kind() string { return "nic-channels" }

// PlanChannelsEdit returns the edit that applies u to an interface whose
// channels are now before, in the calling thread's network namespace. u
// is checked against the maxima as Channels.With checks it.
func PlanChannelsEdit(ifname string, before Channels, u ChannelsUpdate) (ChannelsEdit, error) {
	if err := checkName(ifname); err != nil {
		return ChannelsEdit{}, &Error{Op: "plan channels", Interface: ifname, Err: err}
	}
	after, err := before.With(u)
	if err != nil {
		return ChannelsEdit{}, err
	}
	ns, err := netnsInode()
	if err != nil {
		return ChannelsEdit{}, &Error{Op: "plan channels", Interface: ifname, Err: err}
	}
	return ChannelsEdit{Interface: ifname, Before: before, After: after, NetNS: ns}, nil
}

// Changed reports whether the edit changes any count.
func (e ChannelsEdit) Changed() bool { return e.change().Changed() }

func (e ChannelsEdit) change() ChannelsChange {
	return ChannelsChange{Interface: e.Interface, Before: e.Before, After: e.After}
}

// Update is the ethtool -L request of the edit: the counts that change.
func (e ChannelsEdit) Update() ChannelsUpdate {
	return ChannelsChange{Interface: e.Interface, Before: e.After, After: e.Before}.Undo()
}

// Describe is the command and its effect: "ethtool -L eth0 combined 8:
// combined 63 -> 8".
func (e ChannelsEdit) Describe() string {
	return fmt.Sprintf("ethtool -L %s %s: %s", e.Interface, e.Update(), e.change())
}

// Apply sets the After counts (ETHTOOL_SCHANNELS).
func (e ChannelsEdit) Apply(context.Context) error {
	return e.set("apply", e.Update())
}

// Verify re-reads the channels and checks they are After's. From another
// network namespace than the edit's it reads nothing and fails
// (ErrOtherNetNS): an interface of the same name there is another device.
func (e ChannelsEdit) Verify(context.Context) error {
	if err := e.checkNetNS("verify"); err != nil {
		return err
	}
	c, err := NewDefault()
	if err != nil {
		return err
	}
	defer c.Close()
	got, err := c.Channels(e.Interface)
	if err != nil {
		return err
	}
	if got.counts() != e.After.counts() {
		return &Error{Op: "verify channels", Interface: e.Interface, Request: e.change().String(),
			Err: fmt.Errorf("%w: device has %s", ErrNotApplied, ChannelsChange{Before: e.After, After: got})}
	}
	return nil
}

// Undo sets the Before counts again; a device already there is left
// alone (ETHTOOL_SCHANNELS writes nothing when nothing changes).
func (e ChannelsEdit) Undo(context.Context) error {
	return e.set("undo", e.Before.Update())
}

func (e ChannelsEdit) set(op string, u ChannelsUpdate) error {
	if err := e.checkNetNS(op); err != nil {
		return err
	}
	c, err := NewDefault()
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.SetChannels(e.Interface, u)
	return err
}

// checkNetNS refuses, for op, a thread in another network namespace than
// the edit's (a record without NetNS is not checked).
func (e ChannelsEdit) checkNetNS(op string) error {
	if e.NetNS == 0 {
		return nil
	}
	ns, err := netnsInode()
	if err != nil {
		return &Error{Op: op + " channels", Interface: e.Interface, Err: err}
	}
	if ns != e.NetNS {
		return &Error{Op: op + " channels", Interface: e.Interface, Request: fmt.Sprintf("in network namespace %d", e.NetNS),
			Err: fmt.Errorf("%w (this thread is in %d): run it in that namespace (ip netns exec NAME …)", ErrOtherNetNS, ns)}
	}
	return nil
}
