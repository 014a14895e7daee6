package nic

import (
	"errors"
	"fmt"
)

// Channels reads interface ifname's channel counts with the
// ETHTOOL_GCHANNELS ioctl (what `ethtool -l IF` shows). It needs no
// privilege. Errors match ErrNoInterface (ENODEV) and ErrNotSupported
// (EOPNOTSUPP: a driver without channels, such as lo).
func (c *Client) Channels(ifname string) (Channels, error) {
	e, err := c.eth.GetChannels(ifname)
	if err != nil {
		return Channels{}, opError("get channels", ifname, "", err)
	}
	return Channels(e), nil
}

// PlanChannels reads ifname's channels and returns the change u would make,
// checked as the kernel checks it (see Channels.With), without changing the
// device: the dry run of SetChannels.
func (c *Client) PlanChannels(ifname string, u ChannelsUpdate) (ChannelsChange, error) {
	before, err := c.Channels(ifname)
	if err != nil {
		return ChannelsChange{}, err
	}
	after, err := before.With(u)
	if err != nil {
		return ChannelsChange{Interface: ifname, Before: before, After: before},
			opError("set channels", ifname, u.String(), err)
	}
	return ChannelsChange{Interface: ifname, Before: before, After: after}, nil
}

// SetChannels changes the channel counts u names on ifname with the
// ETHTOOL_SCHANNELS ioctl (`ethtool -L IF ...`), keeping the counts u does
// not name, then reads the device back. It needs CAP_NET_ADMIN.
//
// The returned change holds the counts before (pass Before.Update() to
// SetChannels to restore them) and as read back after. A request above a
// maximum or leaving no RX or TX channel is refused before the ioctl with
// ErrExceedsMaximum or ErrNoRXOrTX; a request equal to the current counts
// makes no ioctl. Kernel refusals match ErrBusy (EBUSY), ErrNotSupported
// (EOPNOTSUPP), ErrPermission (EPERM), ErrNoInterface (ENODEV) and
// ErrRejected (EINVAL from the driver), and the change then reports what
// the device has after the refusal; when the device reads back other
// counts than requested the error matches ErrNotApplied and the change
// still reports what the device now has.
func (c *Client) SetChannels(ifname string, u ChannelsUpdate) (ChannelsChange, error) {
	plan, err := c.PlanChannels(ifname, u)
	if err != nil || !plan.Changed() {
		return plan, err
	}
	if err := c.eth.SetChannels(ifname, ethtoolChannels(plan.After)); err != nil {
		// Report what the device has now, which is the state before
		// unless the driver failed half way.
		plan.After = plan.Before
		if now, rerr := c.Channels(ifname); rerr == nil {
			plan.After = now
		}
		return plan, opError("set channels", ifname, u.String(), err)
	}
	got, err := c.Channels(ifname)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			err = e.Err
		}
		return plan, opError("set channels", ifname, u.String(), fmt.Errorf("read back: %w", err))
	}
	want := plan.After
	plan.After = got
	if got.counts() != want.counts() {
		return plan, opError("set channels", ifname, u.String(),
			fmt.Errorf("%w: want %s, device has %s", ErrNotApplied, want.Update(), got.Update()))
	}
	return plan, nil
}
