package nic

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Channels are a NIC's channel counts, as ETHTOOL_GCHANNELS reports them
// and `ethtool -l` prints them. A channel is an IRQ with the queues it
// serves: RX-only, TX-only, combined (one RX and one TX queue), or other
// (link and management interrupts). A maximum of 0 means the device has no
// channels of that kind; ethtool prints "n/a" for both its lines.
type Channels struct {
	MaxRX, MaxTX, MaxOther, MaxCombined uint32 // pre-set maximums
	RX, TX, Other, Combined             uint32 // current hardware settings
}

// HasCombined reports whether the device has combined channels. Those that
// do not (veth, some Intel NICs) are set through RX and TX.
func (ch Channels) HasCombined() bool { return ch.MaxCombined > 0 }

// counts returns the current counts in ethtool's order: rx, tx, other, combined.
func (ch Channels) counts() [4]uint32 { return [4]uint32{ch.RX, ch.TX, ch.Other, ch.Combined} }

func (ch Channels) maxima() [4]uint32 {
	return [4]uint32{ch.MaxRX, ch.MaxTX, ch.MaxOther, ch.MaxCombined}
}

// channelKinds are ethtool's names for the four counts, in its order.
var channelKinds = [4]string{"rx", "tx", "other", "combined"}

// ChannelsUpdate names the channel counts to change; only non-nil fields
// are changed, the others keep the device's current value (the ioctl
// always sends all four). Count makes the pointers.
type ChannelsUpdate struct {
	RX, TX, Other, Combined *uint32
}

// Count returns a pointer to n, for ChannelsUpdate fields.
func Count(n uint32) *uint32 { return &n }

func (u ChannelsUpdate) fields() [4]*uint32 { return [4]*uint32{u.RX, u.TX, u.Other, u.Combined} }

// IsEmpty reports whether u names no count.
func (u ChannelsUpdate) IsEmpty() bool { return u == ChannelsUpdate{} }

// String renders u as `ethtool -L` arguments: "rx 2 tx 2", "combined 8".
func (u ChannelsUpdate) String() string {
	var parts []string
	for i, p := range u.fields() {
		if p != nil {
			parts = append(parts, channelKinds[i]+" "+strconv.FormatUint(uint64(*p), 10))
		}
	}
	return strings.Join(parts, " ")
}

// ParseChannelsUpdate parses `ethtool -L IF` arguments after the interface
// name: pairs of rx, tx, other or combined and a decimal count, each kind
// at most once ("combined 8", "rx 2 tx 2"). Errors match ErrSyntax.
func ParseChannelsUpdate(args []string) (ChannelsUpdate, error) {
	var u ChannelsUpdate
	if len(args) == 0 {
		return u, fmt.Errorf("nic: channels: no counts given: want rx N, tx N, other N or combined N: %w", ErrSyntax)
	}
	for i := 0; i < len(args); i += 2 {
		k := -1
		for j, name := range channelKinds {
			if args[i] == name {
				k = j
			}
		}
		if k < 0 {
			return ChannelsUpdate{}, fmt.Errorf("nic: channels: %q is not a channel kind: want rx, tx, other or combined: %w", args[i], ErrSyntax)
		}
		if i+1 >= len(args) {
			return ChannelsUpdate{}, fmt.Errorf("nic: channels: %s without a count: want %s N: %w", args[i], args[i], ErrSyntax)
		}
		n, err := strconv.ParseUint(args[i+1], 10, 32)
		if err != nil {
			return ChannelsUpdate{}, fmt.Errorf("nic: channels: %s %q: want a decimal count 0-%d: %w", args[i], args[i+1], uint32(1<<32-1), ErrSyntax)
		}
		f := [4]**uint32{&u.RX, &u.TX, &u.Other, &u.Combined}[k]
		if *f != nil {
			return ChannelsUpdate{}, fmt.Errorf("nic: channels: %s given twice: %w", args[i], ErrSyntax)
		}
		*f = Count(uint32(n))
	}
	return u, nil
}

// QueueUpdate returns the update that gives a device n queue pairs, as
// the Arm Neoverse Tomcat tuning guide's `ethtool -L IF combined N` does:
// combined n when the device has combined channels, rx n and tx n
// otherwise.
func (ch Channels) QueueUpdate(n uint32) ChannelsUpdate {
	if ch.HasCombined() {
		return ChannelsUpdate{Combined: Count(n)}
	}
	return ChannelsUpdate{RX: Count(n), TX: Count(n)}
}

// MaxQueues returns the most queue pairs QueueUpdate can give the
// device: the combined maximum when it has combined channels, the smaller
// of the rx and tx maxima otherwise. A device whose MaxQueues is 1 or 0
// (lo, a veth created with one queue) has no queue count to tune.
func (ch Channels) MaxQueues() uint32 {
	if ch.HasCombined() {
		return ch.MaxCombined
	}
	return min(ch.MaxRX, ch.MaxTX)
}

// Queues returns the queue pairs the device has now, as MaxQueues counts
// them: its combined channels when it has combined ones, the smaller of
// its rx and tx channels otherwise.
func (ch Channels) Queues() uint32 {
	if ch.HasCombined() {
		return ch.Combined
	}
	return min(ch.RX, ch.TX)
}

// With returns ch with the counts u names changed, after the checks the
// kernel makes before it calls the driver (net/ethtool/channels.c): every
// count at most its maximum (ErrExceedsMaximum), and at least one RX and
// one TX channel — combined > 0, or rx > 0 and tx > 0 (ErrNoRXOrTX). The
// returned errors carry the kernel's wording and say which count failed.
func (ch Channels) With(u ChannelsUpdate) (Channels, error) {
	want := ch
	dst := [4]*uint32{&want.RX, &want.TX, &want.Other, &want.Combined}
	for i, p := range u.fields() {
		if p != nil {
			*dst[i] = *p
		}
	}
	cur, max := want.counts(), ch.maxima()
	for i := range cur {
		if cur[i] > max[i] {
			hint := ""
			if max[i] == 0 {
				hint = fmt.Sprintf(" (the device has no %s channels", channelKinds[i])
				if i == 3 {
					hint += "; set rx and tx instead"
				}
				hint += ")"
			}
			return ch, fmt.Errorf("%w: %s %d, maximum %d%s", ErrExceedsMaximum, channelKinds[i], cur[i], max[i], hint)
		}
	}
	if want.Combined == 0 && (want.RX == 0 || want.TX == 0) {
		return ch, fmt.Errorf("%w: rx %d, tx %d, combined %d", ErrNoRXOrTX, want.RX, want.TX, want.Combined)
	}
	return want, nil
}

// Update returns the ChannelsUpdate that sets all four current counts of
// ch: the one that restores ch.
func (ch Channels) Update() ChannelsUpdate {
	return ChannelsUpdate{RX: Count(ch.RX), TX: Count(ch.TX), Other: Count(ch.Other), Combined: Count(ch.Combined)}
}

// ChannelsChange is a channel change on one interface, planned or made.
type ChannelsChange struct {
	Interface string
	Before    Channels // as read before the change: pass Before.Update() to restore
	After     Channels // planned (PlanChannels) or read back (SetChannels)
}

// Changed reports whether any current count differs.
func (c ChannelsChange) Changed() bool { return c.Before.counts() != c.After.counts() }

// String lists the counts that change, "combined 63 -> 8", or "no change".
func (c ChannelsChange) String() string {
	b, a := c.Before.counts(), c.After.counts()
	var parts []string
	for i := range b {
		if b[i] != a[i] {
			parts = append(parts, fmt.Sprintf("%s %d -> %d", channelKinds[i], b[i], a[i]))
		}
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}

// FormatOptions changes how FormatChannels lays out its text. A nil
// *FormatOptions is the zero value.
type FormatOptions struct {
	// ZeroForNA prints absent values as 0 instead of "n/a", as ethtool did
	// over the ioctl before it used netlink (ethtool < 5.6). Default: false.
	ZeroForNA bool
}

// FormatChannels writes ch for interface ifname exactly as `ethtool -l`
// lays it out: a title line, "Pre-set maximums:" and "Current hardware
// settings:", each with RX, TX, Other and Combined separated from the value
// by tabs. A kind whose maximum is 0 prints "n/a" in both sections, as the
// kernel then leaves both attributes out of its netlink reply.
func FormatChannels(w io.Writer, ifname string, ch Channels, opts *FormatOptions) error {
	var o FormatOptions
	if opts != nil {
		o = *opts
	}
	var b bytes.Buffer
	max, cur := ch.maxima(), ch.counts()
	labels := [4]string{"RX:\t\t", "TX:\t\t", "Other:\t\t", "Combined:\t"}
	section := func(title string, v [4]uint32) {
		b.WriteString(title + "\n")
		for i, l := range labels {
			b.WriteString(l)
			if max[i] == 0 && !o.ZeroForNA {
				b.WriteString("n/a\n")
			} else {
				b.WriteString(strconv.FormatUint(uint64(v[i]), 10) + "\n")
			}
		}
	}
	fmt.Fprintf(&b, "Channel parameters for %s:\n", ifname)
	section("Pre-set maximums:", max)
	section("Current hardware settings:", cur)
	_, err := w.Write(b.Bytes())
	return err
}

// ParseChannels parses `ethtool -l` output: the interface name and the
// counts. Values may be separated by tabs or spaces (text copied from a web
// page loses its tabs) and may be "n/a" or, from old ethtool, 0. A current
// count given where the maximum is n/a, a missing or repeated line, or any
// other line is an error matching ErrSyntax that names the line.
func ParseChannels(r io.Reader) (string, Channels, error) {
	var (
		name    string
		ch      Channels
		section = -1 // 0 maximums, 1 current
		seen    [2][4]bool
		lineNo  int
	)
	fail := func(line, why string) (string, Channels, error) {
		return "", Channels{}, fmt.Errorf("nic: ethtool -l line %d %q: %s: %w", lineNo, line, why, ErrSyntax)
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "Channel parameters for ") && strings.HasSuffix(t, ":"):
			if lineNo != 1 || name != "" {
				return fail(line, "title must be the first line")
			}
			name = strings.TrimSuffix(strings.TrimPrefix(t, "Channel parameters for "), ":")
			if name == "" || strings.ContainsAny(name, " \t") {
				return fail(line, "want an interface name")
			}
			continue
		case t == "Pre-set maximums:":
			if name == "" || section != -1 {
				return fail(line, "out of order: want the title, then Pre-set maximums, then Current hardware settings")
			}
			section = 0
			continue
		case t == "Current hardware settings:":
			if section != 0 {
				return fail(line, "out of order: want Pre-set maximums first")
			}
			section = 1
			continue
		}
		if section < 0 {
			return fail(line, "value before a section heading")
		}
		key, val, ok := strings.Cut(t, ":")
		k := -1
		for i, l := range [4]string{"RX", "TX", "Other", "Combined"} {
			if key == l {
				k = i
			}
		}
		if !ok || k < 0 {
			return fail(line, "want RX:, TX:, Other: or Combined: and a value")
		}
		if seen[section][k] {
			return fail(line, key+" given twice in the section")
		}
		seen[section][k] = true
		val = strings.TrimSpace(val)
		var n uint64
		if val != "n/a" {
			var err error
			if n, err = strconv.ParseUint(val, 10, 32); err != nil {
				return fail(line, "want a decimal count or n/a")
			}
		}
		dst := [2][4]*uint32{
			{&ch.MaxRX, &ch.MaxTX, &ch.MaxOther, &ch.MaxCombined},
			{&ch.RX, &ch.TX, &ch.Other, &ch.Combined},
		}[section][k]
		*dst = uint32(n)
		if section == 1 && n != 0 && ch.maxima()[k] == 0 {
			return fail(line, "a current count where the maximum is n/a or 0")
		}
	}
	if err := sc.Err(); err != nil {
		return "", Channels{}, fmt.Errorf("nic: ethtool -l: %w", err)
	}
	if seen != [2][4]bool{{true, true, true, true}, {true, true, true, true}} {
		return "", Channels{}, fmt.Errorf("nic: ethtool -l: want the title and RX, TX, Other and Combined in both sections: %w", ErrSyntax)
	}
	return name, ch, nil
}

// Undo returns the update that puts back the counts the change altered:
// only those, with their values before.
func (c ChannelsChange) Undo() ChannelsUpdate {
	var u ChannelsUpdate
	b, a := c.Before.counts(), c.After.counts()
	dst := [4]**uint32{&u.RX, &u.TX, &u.Other, &u.Combined}
	for i := range b {
		if b[i] != a[i] {
			*dst[i] = Count(b[i])
		}
	}
	return u
}
