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
// # Privileges
//
// Reading channels and IRQs needs none. Changing channel counts needs
// CAP_NET_ADMIN; setting IRQ affinity needs root.
package nic
