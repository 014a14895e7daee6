// Package nic finds the network interface that holds an address and
// controls its queues: ethtool channel counts (the ETHTOOL_GCHANNELS and
// ETHTOOL_SCHANNELS ioctls, as `ethtool -l` and `ethtool -L`), which IRQ
// serves which queue (/sys/class/net/IF/device/msi_irqs and
// /proc/interrupts), and the CPUs those IRQs are delivered to
// (/proc/irq/N/smp_affinity_list).
//
// Channels: Documentation/networking/ethtool-netlink.rst (CHANNELS_GET/SET).
// IRQ affinity: Documentation/core-api/irq/irq-affinity.rst.
//
// It replaces the NIC-queue step of the Arm Neoverse Tomcat tuning guide:
// find the NIC of the host's IP (`ip addr`), read its channels
// (`ethtool -l`: 63 combined on the guide's mlx5), set them to the number
// of online CPUs (`ethtool -L IF combined 8`), verify.
//
// # Interfaces
//
// Client.Interfaces lists the interfaces of the Client's network namespace
// with their addresses (netlink, like `ip addr`); InterfaceByAddr finds the
// one holding an IPv4 or IPv6 address. Client.Device reads
// /sys/class/net/IF: ifindex, the device/ link (physical or virtual),
// device/driver, the PCI address and numa_node (of the device or its
// nearest ancestor: a virtio NIC's PCI function holds it).
//
// # Channels
//
// Client.Channels reads the counts; Client.SetChannels changes only the
// counts a ChannelsUpdate names (the ioctl sends all four, so the others
// are sent as read), checks the request first as the kernel does
// (ErrExceedsMaximum, ErrNoRXOrTX, in the kernel's own words), makes no
// ioctl when nothing changes, reads the device back (safchain/ethtool's
// SetChannels returns what it was given, not what the driver did) and
// returns the counts before and after, so ChannelsChange.Undo restores
// them. NICs without combined channels (veth, some Intel NICs) are set
// through rx and tx; Channels.QueueUpdate picks the right form, and
// Channels.MaxQueues says how many queue pairs it can give at most.
// Client.PlanChannels is the dry run. FormatChannels prints exactly what
// `ethtool -l` prints; ParseChannels reads it back.
//
// # Queues and IRQs
//
// Client.QueueIRQs joins the device's MSI IRQs with their names in
// /proc/interrupts (mlx5_comp3@pci:..., eth0-TxRx-3, virtio2-input.0),
// their per-CPU counts and affinity. Client.SpreadQueueIRQs gives each
// queue one CPU of a CPU list (its rx and tx IRQs share it), as vendors'
// set_irq_affinity scripts do, returning the previous affinities; a failed
// write undoes the writes before it. PlanQueueSpread is its dry run.
// irqbalance moves IRQs again at its next pass: IRQBalanceStop
// (PlanIRQBalanceStop) stops its systemd unit for as long as IRQs placed
// by hand must hold, and starts it again on Undo.
//
// # Channels across reboots
//
// A channel count set with ethtool is gone after a reboot. Channels.TunedNet
// renders it as a tuned [net] instance (devices=IF, channels=combined N,
// or rx N tx N for a device without combined channels) that a tuned
// profile (package tuning) carries. Where tuned is absent,
// Client.LinkFile builds a systemd.link(5) file ([Link]
// CombinedChannels=, RxChannels=, TxChannels=, systemd 239 and later)
// matched on the device's current properties, which carries over the
// [Link] settings of the file udev applied before (only the first
// matching .link file applies: without its NamePolicy= the interface could
// be renamed); PlanLinkFile returns the write as a LinkFileEdit that
// Undo reverts.
//
// # Errors
//
// Device errors are *Error values naming the operation, the interface and
// the request. errors.Is maps the kernel's errnos: ErrNoInterface and
// os.ErrNotExist (ENODEV), ErrNotSupported and os.ErrNotExist (EOPNOTSUPP),
// ErrNotSupported alone (EIO when an IRQ's affinity is kernel-managed),
// ErrBusy (EBUSY),
// ErrPermission and os.ErrPermission (EPERM, EACCES), ErrRejected (EINVAL
// from the driver). Parse errors match ErrSyntax.
//
// # Host root and network namespaces
//
// Options.Root points sysfs and procfs reads at another tree (a container's
// /host, a captured tree); Options.NetNS (/run/netns/NAME,
// /proc/PID/ns/net) opens the ethtool socket and lists interfaces inside
// that namespace, on a locked OS thread that is discarded afterwards.
// sysfs shows the interfaces of the namespace it was mounted in, so sysfs
// details are used only for an interface whose ifindex matches.
//
// # Privileges
//
// Reading interfaces, channels and IRQs needs none. Changing channel
// counts needs CAP_NET_ADMIN; setting IRQ affinity needs root; entering
// another network namespace needs CAP_SYS_ADMIN.
package nic
