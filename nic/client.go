package nic

import (
	"github.com/nettune/nettune/internal/hostfs"
)

// Options configures a Client. A nil *Options is the zero value: the
// running host, in the caller's network namespace.
type Options struct {
	// Root is the directory standing for the host's "/": sysfs is read at
	// Root/sys and procfs at Root/proc. Default: "/". A container that
	// mounts the host at /host passes "/host"; tests pass a fixture tree.
	Root string
	// NetNS is the path of a network namespace file, such as
	// /run/netns/NAME (ip netns add) or /proc/PID/ns/net. The ethtool
	// socket is opened in it and interfaces are listed from it. Default:
	// "" — the namespace of the calling thread when New runs.
	//
	// sysfs shows the interfaces of the namespace it was mounted in, so
	// for another namespace the sysfs details (Physical, NUMANode, IRQs)
	// are found only when Root holds a sysfs mounted inside it; interfaces
	// are matched by ifindex, never by name alone.
	NetNS string
}

// Client reads and changes NICs: interfaces and their addresses, ethtool
// channels, queue IRQs and their CPU affinity. It holds one ethtool socket;
// call Close when done. A Client is safe for concurrent use, except Close.
type Client struct {
	root  hostfs.Root
	netns string
	eth   ethtoolAPI
}

// ethtoolAPI is the part of github.com/safchain/ethtool nic uses; tests
// put a fake in its place to produce errnos a veth cannot.
type ethtoolAPI interface {
	GetChannels(intf string) (ethtoolChannels, error)
	SetChannels(intf string, ch ethtoolChannels) error
	DriverInfo(intf string) (driver, busInfo string, err error)
	Close()
}

// ethtoolChannels mirrors struct ethtool_channels without the cmd word.
type ethtoolChannels struct {
	MaxRX, MaxTX, MaxOther, MaxCombined uint32
	RX, TX, Other, Combined             uint32
}

// New returns a Client for opts (nil for the defaults). It opens an
// ethtool socket (AF_INET, SOCK_DGRAM) in opts.NetNS, which needs
// CAP_SYS_ADMIN to enter; none is needed otherwise.
func New(opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	root, err := hostfs.New(o.Root)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	eth, err := openEthtool(o.NetNS)
	if err != nil {
		return nil, &Error{Op: "open ethtool socket", Request: o.NetNS, Err: err}
	}
	return &Client{root: root, netns: o.NetNS, eth: eth}, nil
}

// NewDefault returns a Client for the running host in the caller's network
// namespace: New(nil).
func NewDefault() (*Client, error) { return New(nil) }

// Close releases the ethtool socket.
func (c *Client) Close() error {
	if c.eth != nil {
		c.eth.Close()
		c.eth = nil
	}
	return nil
}
