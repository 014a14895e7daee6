//go:build linux

package nic

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/nettune/nettune/internal/testutil"
)

var netnsSeq atomic.Int64

// VethNS is a network namespace a test created, holding a veth pair
// VethNS.Veth/VethNS.Peer with 8 RX and 8 TX queues each, the first one up
// with 10.213.7.1/24 and fd00:7::1/64.
type VethNS struct {
	Name, Path string
	Veth, Peer string
}

// Exec runs a command inside the namespace (ip netns exec) and returns its
// standard output and standard error.
func (ns VethNS) Exec(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.Name}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// NewVethNS creates a VethNS for a test that may change the host (root and
// NETTUNE_HOST_TESTS=1, else skipped); it is deleted in t.Cleanup. It is
// exported for nic's black-box tests only (test build).
func NewVethNS(t *testing.T) VethNS {
	t.Helper()
	testutil.RequireHostTests(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: ip (iproute2) not installed")
	}
	name := fmt.Sprintf("nettune-nic-%d-%d", os.Getpid(), netnsSeq.Add(1))
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", name, err, out)
		}
	})
	ns := VethNS{Name: name, Path: filepath.Join("/run/netns", name), Veth: "ntv0", Peer: "ntv1"}
	run("-n", name, "link", "add", ns.Veth, "numtxqueues", "8", "numrxqueues", "8",
		"type", "veth", "peer", "name", ns.Peer, "numtxqueues", "8", "numrxqueues", "8")
	run("-n", name, "addr", "add", "10.213.7.1/24", "dev", ns.Veth)
	run("-n", name, "addr", "add", "fd00:7::1/64", "dev", ns.Veth, "nodad")
	run("-n", name, "link", "set", ns.Veth, "up")
	return ns
}

// TestIntegrationKernelAgrees sends the requests Channels.With refuses
// straight to the ioctl on a real veth: the kernel refuses each with EINVAL,
// so refusing them first loses nothing.
func TestIntegrationKernelAgrees(t *testing.T) {
	ns := NewVethNS(t)
	eth, err := openEthtool(ns.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	cur, err := eth.GetChannels(ns.Veth)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []ChannelsUpdate{{RX: Count(9)}, {Combined: Count(1)}, {RX: Count(0)}, {TX: Count(0)}, {Other: Count(1)}} {
		if _, err := Channels(cur).With(u); err == nil {
			t.Fatalf("%s: With accepted it", u)
		}
		want, _ := Channels(cur).With(ChannelsUpdate{})
		dst := [4]*uint32{&want.RX, &want.TX, &want.Other, &want.Combined}
		for i, p := range u.fields() {
			if p != nil {
				*dst[i] = *p
			}
		}
		err := eth.SetChannels(ns.Veth, ethtoolChannels(want))
		e := opError("set channels", ns.Veth, u.String(), err)
		if !errors.Is(err, syscall.EINVAL) || !errors.Is(e, ErrRejected) {
			t.Errorf("%s: kernel said %v, want EINVAL (ErrRejected)", u, err)
		}
	}
}

// TestIntegrationNetNSLeavesNoThreadInside enters a namespace many times:
// the process's main thread (whose namespace /proc/self/ns/net shows) and
// every thread that ran inside must be back home afterwards. The runtime
// cannot end the main thread, so a thread left inside there kept the whole
// process in the namespace (seen from ip netns pids) until it exited.
func TestIntegrationNetNSLeavesNoThreadInside(t *testing.T) {
	ns := NewVethNS(t)
	home, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	// /run/netns/NAME is a bind mount of the namespace: its inode names it.
	var st syscall.Stat_t
	if err := syscall.Stat(ns.Path, &st); err != nil {
		t.Fatal(err)
	}
	inside := fmt.Sprintf("net:[%d]", st.Ino)
	var tids []int
	for i := 0; i < 200; i++ {
		err := inNetNS(ns.Path, func() error {
			got, err := os.Readlink("/proc/thread-self/ns/net")
			if err != nil {
				return err
			}
			if got != inside {
				return fmt.Errorf("fn ran in %s, want %s", got, inside)
			}
			tids = append(tids, syscall.Gettid())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.Readlink("/proc/self/ns/net"); err != nil || got != home {
			t.Fatalf("call %d: the main thread is in %s (%v), want %s", i, got, err, home)
		}
	}
	for _, tid := range tids {
		got, err := os.Readlink(fmt.Sprintf("/proc/self/task/%d/ns/net", tid))
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended
		}
		if err != nil {
			t.Fatal(err)
		}
		if got != home {
			t.Errorf("thread %d still runs in %s, want %s", tid, got, home)
		}
	}
}

// InNetNSForTest runs fn on a thread inside the namespace at path, for
// nic's black-box tests (test build).
var InNetNSForTest = inNetNS
