package nic

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// inNetNS runs fn on an OS thread that has entered the network namespace
// at path; with an empty path it runs fn on the caller's goroutine. The
// thread goes back to its own namespace after fn and only then returns to
// the Go scheduler. When it cannot go back, the goroutine exits still
// locked, so the runtime ends the thread; the runtime cannot end the
// process's main thread, so the thread's way back is what keeps the
// process as a whole (its /proc/PID/ns/net) out of the namespace.
func inNetNS(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open this thread's network namespace: %w", err)
			return
		}
		defer unix.Close(home)
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open network namespace %s: %w", path, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			// setns changes nothing when it fails.
			runtime.UnlockOSThread()
			done <- fmt.Errorf("enter network namespace %s: %w", path, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(home, unix.CLONE_NEWNET); err != nil {
			// No UnlockOSThread: the thread ends with the goroutine.
			done <- errors.Join(ferr, fmt.Errorf("leave network namespace %s: %w", path, err))
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// linuxEthtool adapts *ethtool.Ethtool to ethtoolAPI.
type linuxEthtool struct{ e *ethtool.Ethtool }

func openEthtool(netns string) (ethtoolAPI, error) {
	var e *ethtool.Ethtool
	err := inNetNS(netns, func() error {
		var err error
		e, err = ethtool.NewEthtool()
		return err
	})
	if err != nil {
		return nil, err
	}
	return linuxEthtool{e}, nil
}

// GetChannels is ETHTOOL_GCHANNELS.
func (l linuxEthtool) GetChannels(intf string) (ethtoolChannels, error) {
	if err := checkName(intf); err != nil {
		return ethtoolChannels{}, err
	}
	ch, err := l.e.GetChannels(intf)
	if err != nil {
		return ethtoolChannels{}, err
	}
	return ethtoolChannels{
		MaxRX: ch.MaxRx, MaxTX: ch.MaxTx, MaxOther: ch.MaxOther, MaxCombined: ch.MaxCombined,
		RX: ch.RxCount, TX: ch.TxCount, Other: ch.OtherCount, Combined: ch.CombinedCount,
	}, nil
}

// SetChannels is ETHTOOL_SCHANNELS.
func (l linuxEthtool) SetChannels(intf string, ch ethtoolChannels) error {
	if err := checkName(intf); err != nil {
		return err
	}
	// ETHTOOL_SCHANNELS reads only the four counts; the maxima are sent
	// as read so the struct is the one the kernel gave.
	_, err := l.e.SetChannels(intf, ethtool.Channels{
		MaxRx: ch.MaxRX, MaxTx: ch.MaxTX, MaxOther: ch.MaxOther, MaxCombined: ch.MaxCombined,
		RxCount: ch.RX, TxCount: ch.TX, OtherCount: ch.Other, CombinedCount: ch.Combined,
	})
	return err
}

// DriverInfo is ETHTOOL_GDRVINFO: driver name and bus address.
func (l linuxEthtool) DriverInfo(intf string) (string, string, error) {
	if err := checkName(intf); err != nil {
		return "", "", err
	}
	d, err := l.e.DriverInfo(intf)
	if err != nil {
		return "", "", err
	}
	return d.Driver, d.BusInfo, nil
}

// Close closes the socket.
func (l linuxEthtool) Close() { l.e.Close() }

// checkName rejects names the ioctl would silently truncate or that no
// interface can have: the kernel's IFNAMSIZ is 16 bytes with the NUL.
func checkName(name string) error {
	if name == "" || len(name) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q: want 1 to %d bytes: %w", name, unix.IFNAMSIZ-1, unix.ENODEV)
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' || name[i] == 0 || name[i] == ' ' || name[i] == ':' {
			return fmt.Errorf("interface name %q: '/', ':', space and NUL are not allowed: %w", name, unix.ENODEV)
		}
	}
	return nil
}

// netnsInode returns the inode of the calling thread's network namespace
// (/proc/thread-self/ns/net): what tells two namespaces apart, as
// `ls -iL /proc/PID/ns/net` or lsns show it.
func netnsInode() (uint64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return 0, fmt.Errorf("stat /proc/thread-self/ns/net: %w", err)
	}
	return st.Ino, nil
}
