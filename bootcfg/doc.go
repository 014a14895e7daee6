// Package bootcfg reads and edits the kernel command line the bootloader
// will pass at the next boot, and reports what the running kernel got.
//
// It parses the GRUB defaults file (/etc/default/grub and the drop-ins in
// /etc/default/grub.d/*.cfg) the way /bin/sh reads it, without executing it;
// sets or removes kernel parameters in GRUB_CMDLINE_LINUX or
// GRUB_CMDLINE_LINUX_DEFAULT, changing only the bytes of that one
// assignment; reads the running command line from /proc/cmdline; reports
// the IOMMU state from /sys/kernel/iommu_groups/*/type and from the
// kernel log; and regenerates the bootloader configuration (update-grub,
// grub2-mkconfig, grubby) only when explicitly asked, through a command
// runner.
//
// Kernel parameter syntax: Documentation/admin-guide/kernel-parameters.rst.
// IOMMU parameters: iommu.strict and iommu.passthrough in the same file.
//
// # Privileges
//
// Reading needs none (dmesg may need root where kernel.dmesg_restrict=1).
// Writing /etc/default/grub and regenerating the boot config need root.
// Nothing here takes effect before a reboot.
package bootcfg
