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
// Kernel parameter syntax: Documentation/admin-guide/kernel-parameters.rst
// (https://docs.kernel.org/admin-guide/kernel-parameters.html).
// IOMMU parameters: iommu.strict and iommu.passthrough in the same file.
//
// # The defaults file as the shell reads it
//
// [ParseFile] and [LoadConfig] find every assignment /bin/sh would perform
// when grub-mkconfig sources the files: double, single or no quotes,
// backslash escapes, backslash-newline continuations, comments and
// commented-out assignments, several assignments on a line, "export",
// "unset". Repeated assignments: the last wins, and [Config.Lookup] says
// which file and line set the effective value. NAME="$NAME more" (how
// drop-ins append) is followed exactly. Anything else only a shell can
// evaluate — $(...), backquotes, other variables, arithmetic, an
// assignment under if/case/&&/|| or in a background list — is reported
// as such ([Value.Dynamic]) and never guessed; editing such a value is
// refused with an error matching [ErrDynamic] that names the file and
// line.
//
// # Editing
//
// [Config.Plan] applies an [Edit] (parameters to set, keys to remove) to
// GRUB_CMDLINE_LINUX (every boot entry, recovery included) or
// GRUB_CMDLINE_LINUX_DEFAULT (normal entries only) — never the other one —
// and rewrites only the assignment(s) that carry the value: where a
// drop-in overrides the main file, the drop-in is edited. The quoting
// style is kept, and every other byte of every file. [Plan.Diff] is the
// unified diff; [Plan.Apply] writes through a temp file, fsync and rename
// with a first backup to <file>.nettune.bak, writes nothing when nothing
// changes, and puts back files already written when a later one fails.
// Kernel parameters follow the kernel's own rules ([ParseCmdline]): key,
// key=value, dotted module keys, '-' and '_' alike in keys, double-quoted
// values with spaces, and "--" before init's arguments.
//
// # The running kernel and the IOMMU
//
// [Host.Cmdline] parses /proc/cmdline with the same code, so
// [PendingReboot] can say whether a reboot is still needed. [Host.IOMMU]
// reports the default domain type (translated or passthrough), the flush
// policy (strict or lazy) and whether each was set on the command line,
// from /sys/kernel/iommu_groups/*/type when there are groups, else from
// the kernel log (/dev/kmsg; [ParseKernelLog] reads dmesg text), and says
// which source it used.
//
// # Regenerating
//
// Nothing here runs a bootloader tool as a side effect. [Host.Regenerate]
// finds grubby (BLS systems), update-grub, grub2-mkconfig or
// grub-mkconfig and runs it with a context; a failure's error names the
// tool and ends with its output. A [Runner] replaces the real run, to
// record the command or to make a dry run.
//
// # Host root
//
// [New] takes the directory standing for the host's "/" (a mounted image,
// "/host" in a container, a test fixture); every path is built under it.
// [NewDefault] is the running system.
//
// # Privileges
//
// Reading needs none (dmesg may need root where kernel.dmesg_restrict=1).
// Writing /etc/default/grub and regenerating the boot config need root.
// Nothing here takes effect before a reboot.
//
// # Errors
//
// Errors match [ErrSyntax] (with the file and line), [ErrInvalidParam],
// [ErrDynamic], [ErrNoTool], [ErrNoIOMMUState], and os.ErrNotExist or
// os.ErrPermission for files, through errors.Is.
package bootcfg
