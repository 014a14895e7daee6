package nic

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/internal/persistfile"
	"github.com/nettune/nettune/internal/udiff"
)

// TunedNet is a tuned [net] plugin instance that sets an interface's
// channel counts at every tuned start (tuned 2.16 and later): what a
// persist.TunedProfile carries in its Extra sections (parse Render's text
// with persist.ParseTunedConf). tuned's net plugin (2.20) takes only
// devices whose sysfs path is not under /sys/devices/virtual: a veth,
// bridge or bond gets no instance ("no matching devices available" in
// tuned's log); persist those counts with a LinkFile instead.
type TunedNet struct {
	// Instance is the section name. Default: "net_nettune_IF", with
	// type=net, so an included profile's own [net] section is left alone.
	Instance string
	// Device is the interface, tuned's devices=.
	Device string
	// Channels are the counts, tuned's channels= in `ethtool -L` form:
	// "combined 8", or "rx 8 tx 8" for a device without combined channels
	// (veth). Build it with Channels.QueueUpdate.
	Channels ChannelsUpdate
}

// TunedNet returns the [net] instance that sets ifname to n queues in the
// form its channels take (Channels.QueueUpdate): combined, or rx and tx.
func (ch Channels) TunedNet(ifname string, n uint32) TunedNet {
	return TunedNet{Device: ifname, Channels: ch.QueueUpdate(n)}
}

func (t TunedNet) instance() string {
	if t.Instance != "" {
		return t.Instance
	}
	return "net_nettune_" + t.Device
}

// Render returns the section's tuned.conf text:
//
//	[net_nettune_eth0]
//	type=net
//	priority=-1
//	devices=eth0
//	channels=combined 8
//
// priority=-1 puts the instance before the included profiles' [net]
// (priority 0), so it gets the device: tuned gives a device to the first
// instance that claims it. The counts come in ethtool's order (rx, tx,
// other, combined), the order `tuned-adm verify` compares them in. An
// invalid name or an empty update is an error.
func (t TunedNet) Render() ([]byte, error) {
	if err := checkName(t.Device); err != nil {
		return nil, fmt.Errorf("nic: tuned [net] device %q: %w", t.Device, err)
	}
	inst := t.instance()
	if inst == "" || strings.ContainsAny(inst, "[]#;=\n\r \t") {
		return nil, fmt.Errorf("nic: tuned [net] instance name %q: want a name without brackets, '#', ';', '=' or white space", inst)
	}
	if t.Channels.IsEmpty() {
		return nil, fmt.Errorf("nic: tuned [net] for %s: no channel count to set", t.Device)
	}
	return []byte(fmt.Sprintf("[%s]\ntype=net\npriority=-1\ndevices=%s\nchannels=%s\n", inst, t.Device, t.Channels)), nil
}

// LinkSetting is one Key=Value line of a systemd .link file.
type LinkSetting struct {
	Key, Value string
}

// LinkFile is a systemd.link(5) file that sets an interface's channel
// counts whenever udev sets the device up (at boot, or when it appears),
// for hosts without tuned: /etc/systemd/network/FILE. udev applies only
// the first .link file (in lexical order of the file names) whose [Match]
// matches, so this one must sort before the file that applies now, and
// carries over that file's [Link] settings (NamePolicy=, MACAddressPolicy=,
// ...): without them the interface could be renamed.
type LinkFile struct {
	// File is the name under /etc/systemd/network, e.g.
	// "10-nettune-eth0.link".
	File string
	// Match is the [Match] section: the device's current properties
	// (MACAddress=, OriginalName=, Driver=, Path=).
	Match []LinkSetting
	// Link is the [Link] section before the channel counts: the settings
	// carried over from the file that applied before.
	Link []LinkSetting
	// Channels become CombinedChannels=, RxChannels=, TxChannels=,
	// OtherChannels= (systemd 239 and later).
	Channels ChannelsUpdate
	// CarriedFrom is the .link file Link was carried over from; "" when
	// none applied (systemd's defaults were used). Not rendered.
	CarriedFrom string
}

// Render returns the file's text. An empty [Match] (it would match every
// interface), an empty update, or a line break in a value is an error.
func (l LinkFile) Render() ([]byte, error) {
	if !strings.HasSuffix(l.File, ".link") || strings.ContainsAny(l.File, "/\n") || l.File == ".link" {
		return nil, fmt.Errorf("nic: .link file name %q: want NAME.link", l.File)
	}
	if len(l.Match) == 0 {
		return nil, fmt.Errorf("nic: .link file %s: an empty [Match] would apply to every interface", l.File)
	}
	if l.Channels.IsEmpty() {
		return nil, fmt.Errorf("nic: .link file %s: no channel count to set", l.File)
	}
	var b bytes.Buffer
	b.WriteString("# Written by nettune (nic.LinkFile); remove it to undo it.\n")
	if l.CarriedFrom != "" {
		fmt.Fprintf(&b, "# [Link] carries over %s, which applied before.\n", l.CarriedFrom)
	}
	write := func(section string, kv []LinkSetting) error {
		fmt.Fprintf(&b, "[%s]\n", section)
		for _, s := range kv {
			if s.Key == "" || strings.ContainsAny(s.Key, "=\n\r ") || strings.ContainsAny(s.Value, "\n\r") {
				return fmt.Errorf("nic: .link file %s: [%s] %s=%q: want a key without '=' or spaces and a one-line value", l.File, section, s.Key, s.Value)
			}
			fmt.Fprintf(&b, "%s=%s\n", s.Key, s.Value)
		}
		return nil
	}
	if err := write("Match", l.Match); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	link := append([]LinkSetting(nil), l.Link...)
	for i, p := range l.Channels.fields() {
		if p != nil {
			link = append(link, LinkSetting{Key: linkChannelKeys[i], Value: fmt.Sprint(*p)})
		}
	}
	if err := write("Link", link); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// linkChannelKeys are systemd.link's names for ethtool's four counts.
var linkChannelKeys = [4]string{"RxChannels", "TxChannels", "OtherChannels", "CombinedChannels"}

// systemdDefaultLink is the [Link] section of systemd's own
// 99-default.link (systemd 252, Debian bookworm), used when no .link file
// applied to the device (no udev database) and none is installed.
var systemdDefaultLink = []LinkSetting{
	{"NamePolicy", "keep kernel database onboard slot path"},
	{"AlternativeNamesPolicy", "database onboard slot path"},
	{"MACAddressPolicy", "persistent"},
}

// linkDirs are where udev looks for .link files, in priority order.
var linkDirs = [][]string{
	{"etc", "systemd", "network"},
	{"run", "systemd", "network"},
	{"usr", "local", "lib", "systemd", "network"},
	{"usr", "lib", "systemd", "network"},
	{"lib", "systemd", "network"},
}

// LinkFile returns the .link file that gives ifname the counts u at every
// boot, built from the device's current properties under the Client's
// root: [Match] MACAddress= when the address is the device's own
// (addr_assign_type 0, permanent, or 3, set by userspace), otherwise
// OriginalName= (a veth's random address changes with every creation),
// and Driver= when sysfs names one. [Link] carries over the file udev
// applied to the device (ID_NET_LINK_FILE in /run/udev/data/nIFINDEX),
// or, without a udev database, 99-default.link, or systemd's defaults;
// when the carried settings name no NamePolicy= and no Name=, Name= is
// set to the current name. The file is called "10-nettune-IF.link"; when
// the carried-over file does not sort after it, that is an error.
func (c *Client) LinkFile(ifname string, u ChannelsUpdate) (LinkFile, error) {
	d, err := c.Device(ifname)
	if err != nil {
		return LinkFile{}, err
	}
	lf := LinkFile{File: "10-nettune-" + ifname + ".link", Channels: u}
	dir := c.root.Sys("class", "net", ifname)
	addr, _ := hostfs.ReadString(filepath.Join(dir, "address"))
	assign, _ := hostfs.ReadString(filepath.Join(dir, "addr_assign_type"))
	addr, assign = hostfs.Trim(addr), hostfs.Trim(assign)
	if addr != "" && addr != "00:00:00:00:00:00" && (assign == "0" || assign == "3") {
		lf.Match = append(lf.Match, LinkSetting{"MACAddress", addr})
	} else {
		lf.Match = append(lf.Match, LinkSetting{"OriginalName", ifname})
	}
	if d.Driver != "" {
		lf.Match = append(lf.Match, LinkSetting{"Driver", d.Driver})
	}

	from := ""
	if d.Index > 0 {
		from = udevProperty(c.root.Path("run", "udev", "data", fmt.Sprintf("n%d", d.Index)), "ID_NET_LINK_FILE")
	}
	if from == "" {
		for _, ld := range linkDirs {
			p := "/" + filepath.Join(append(ld, "99-default.link")...)
			if _, err := os.Stat(c.root.Path(p)); err == nil {
				from = p
				break
			}
		}
	}
	if from != "" {
		if filepath.Base(from) <= lf.File {
			return LinkFile{}, fmt.Errorf("nic: %s is set up by %s, which sorts before %s: the new file would never apply", ifname, from, lf.File)
		}
		data, err := os.ReadFile(c.root.Path(from))
		if err != nil {
			return LinkFile{}, fmt.Errorf("nic: read the .link file that applies to %s: %w", ifname, err)
		}
		lf.Link, lf.CarriedFrom = linkSection(data), from
	} else {
		lf.Link = append([]LinkSetting(nil), systemdDefaultLink...)
	}
	named := false
	for _, s := range lf.Link {
		if s.Key == "NamePolicy" || s.Key == "Name" {
			named = true
		}
	}
	if !named {
		lf.Link = append(lf.Link, LinkSetting{"Name", ifname})
	}
	return lf, nil
}

// linkSection returns the Key=Value lines of a .link file's [Link]
// section, without comments and without channel counts (the new file
// sets those).
func linkSection(data []byte) []LinkSetting {
	var res []LinkSetting
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if l[0] == '[' {
			in = l == "[Link]"
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !in || !ok || strings.HasSuffix(k, "Channels") {
			continue
		}
		res = append(res, LinkSetting{k, v})
	}
	return res
}

// udevProperty returns the value of E:KEY=VALUE in a udev database file,
// or "" when the file or the key is missing.
func udevProperty(path, key string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "E:"+key+"="); ok {
			return v
		}
	}
	return ""
}

// LinkFilePath returns ROOT/etc/systemd/network/FILE.
func (c *Client) LinkFilePath(l LinkFile) string {
	return c.root.Etc("systemd", "network", l.File)
}

// LinkFileEdit is writing a .link file as a value, in the shape
// tuning.Reversible takes (Describe, Apply, Verify, Undo): the bytes it
// gets and what was there before (the file existed? its bytes and mode;
// the directories the write creates), which Undo puts back. Marshalled as
// JSON it is all a journal needs.
type LinkFileEdit struct {
	Path     string      `json:"path"`
	Data     []byte      `json:"data"`
	Existed  bool        `json:"existed"`
	Previous []byte      `json:"previous,omitempty"`
	Mode     os.FileMode `json:"mode,omitempty"`
	Created  []string    `json:"created,omitempty"`
}

// Kind is the journal kind of LinkFileEdit records: a systemd .link file's write.
func (LinkFileEdit) Kind() string { return "nic-link-file" }

// PlanLinkFile returns the edit that writes l to
// ROOT/etc/systemd/network/FILE, reading what is there now; it changes
// nothing.
func (c *Client) PlanLinkFile(l LinkFile) (LinkFileEdit, error) {
	data, err := l.Render()
	if err != nil {
		return LinkFileEdit{}, err
	}
	p := c.LinkFilePath(l)
	r, err := persistfile.Plan(p)
	if err != nil {
		return LinkFileEdit{}, fmt.Errorf("nic: %w", err)
	}
	return LinkFileEdit{Path: p, Data: data, Existed: r.Existed, Previous: r.Previous, Mode: r.Mode, Created: r.Created}, nil
}

// Describe names the file and says when it takes effect.
func (e LinkFileEdit) Describe() string {
	verb := "write"
	if e.Existed {
		verb = "rewrite"
	}
	return fmt.Sprintf("%s %s (%d bytes); udev applies it when the device is next set up (a reboot)", verb, e.Path, len(e.Data))
}

// Apply writes the file safely (temp file, fsync, rename), creating its
// directory. It needs root.
func (e LinkFileEdit) Apply(context.Context) error {
	if _, err := persistfile.Write(e.Path, e.Data, 0o644); err != nil {
		return fmt.Errorf("nic: %w", err)
	}
	return nil
}

// Verify re-reads the file and checks it holds Data; the error names the
// first line that differs.
func (e LinkFileEdit) Verify(context.Context) error {
	got, err := os.ReadFile(e.Path)
	if err != nil {
		return fmt.Errorf("nic: verify %s: %w", e.Path, err)
	}
	if !bytes.Equal(got, e.Data) {
		return fmt.Errorf("nic: verify %s: content differs from what was written: %s", e.Path, udiff.FirstDifference(got, e.Data))
	}
	return nil
}

// Undo puts back the previous file, or none (and none of the directories
// Apply created, when empty). Undoing twice is not an error.
func (e LinkFileEdit) Undo(context.Context) error {
	r := persistfile.Record{Path: e.Path, Existed: e.Existed, Previous: e.Previous, Mode: e.Mode, Created: e.Created}
	if err := persistfile.Restore(r); err != nil {
		return fmt.Errorf("nic: %w", err)
	}
	return nil
}

// WriteLinkFile writes l to ROOT/etc/systemd/network/FILE safely and
// returns the applied edit, whose Undo puts back what was there. udev
// applies the file when the device is next set up (a reboot, or `udevadm
// trigger --action=add /sys/class/net/IF`). It needs root.
func (c *Client) WriteLinkFile(l LinkFile) (LinkFileEdit, error) {
	e, err := c.PlanLinkFile(l)
	if err != nil {
		return e, err
	}
	return e, e.Apply(context.Background())
}
