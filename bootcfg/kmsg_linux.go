package bootcfg

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// kernelLog returns the kernel log as dmesg prints it ("[    0.291380]
// iommu: ..."), read from /dev/kmsg under the root without blocking: every
// record still in the ring buffer, and nothing waited for. Under a fixture
// root, dev/kmsg may be a regular file of records or of dmesg text.
// Reading needs root when kernel.dmesg_restrict=1 (errors.Is
// os.ErrPermission).
func (h *Host) kernelLog() (string, error) {
	p := h.root.Path("dev", "kmsg")
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("bootcfg: kernel log: %w", err)
	}
	var b strings.Builder
	if fi.Mode().IsRegular() {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("bootcfg: kernel log: %w", err)
		}
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if rec, ok := kmsgRecord(line); ok {
				b.WriteString(rec)
			} else if line != "" && !strings.HasPrefix(line, " ") {
				b.WriteString(line)
			}
		}
		return b.String(), nil
	}
	// Read the device with raw syscalls: os.File would hand a non-blocking
	// character device to the runtime poller, and a read at the end of the
	// buffer would then wait for new messages instead of failing with
	// EAGAIN.
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("bootcfg: kernel log: %w", &os.PathError{Op: "open", Path: p, Err: err})
	}
	defer syscall.Close(fd)
	buf := make([]byte, 16<<10)
	for range 1 << 20 { // bounded: the ring buffer holds far fewer records
		n, err := syscall.Read(fd, buf)
		switch {
		case err == syscall.EAGAIN || n == 0 && err == nil:
			return b.String(), nil
		case err == syscall.EPIPE:
			continue // a record was overwritten while we read: skip it
		case err == syscall.EINTR:
			continue
		case err != nil:
			return b.String(), fmt.Errorf("bootcfg: read %s: %w", p, err)
		}
		if rec, ok := kmsgRecord(string(buf[:n])); ok {
			b.WriteString(rec)
		}
	}
	return b.String(), nil
}

// kmsgRecord turns "6,339,5140900,-;message\n SUBSYSTEM=..." into
// "[    5.140900] message\n" (Documentation/ABI/testing/dev-kmsg).
func kmsgRecord(r string) (string, bool) {
	head, msg, ok := strings.Cut(r, ";")
	if !ok {
		return "", false
	}
	fields := strings.Split(head, ",")
	if len(fields) < 4 {
		return "", false
	}
	var usec int64
	for _, c := range fields[2] {
		if c < '0' || c > '9' {
			return "", false
		}
		usec = usec*10 + int64(c-'0')
	}
	msg, _, _ = strings.Cut(msg, "\n")
	return fmt.Sprintf("[%5d.%06d] %s\n", usec/1e6, usec%1e6, msg), true
}
