package rlimit

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		cur  Limit
		n    uint64
		want Limit
	}{
		{Limit{1024, 4096}, 512, Limit{1024, 4096}},
		{Limit{1024, 4096}, 1024, Limit{1024, 4096}},
		{Limit{1024, 4096}, 2048, Limit{2048, 4096}},
		{Limit{1024, 4096}, DefaultNoFile, Limit{DefaultNoFile, DefaultNoFile}},
	} {
		if got := Target(tc.cur, tc.n); got != tc.want {
			t.Errorf("Target(%v, %d) = %v, want %v", tc.cur, tc.n, got, tc.want)
		}
	}
}

// restore puts this process's limit back after a test.
func restore(t *testing.T) {
	prev, err := Get(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Set(0, prev); err != nil {
			t.Errorf("restore the open-files limit %v: %v", prev, err)
		}
	})
}

func TestGetSetSelf(t *testing.T) {
	restore(t)
	cur, err := Get(0)
	if err != nil {
		t.Fatal(err)
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if cur != (Limit{rl.Cur, rl.Max}) {
		t.Fatalf("Get(0) = %v, getrlimit says %d/%d", cur, rl.Cur, rl.Max)
	}
	want := Limit{Soft: min(cur.Hard, 1000), Hard: cur.Hard}
	if err := Set(0, want); err != nil {
		t.Fatal(err)
	}
	if got, _ := Get(0); got != want {
		t.Fatalf("after Set(%v): %v", want, got)
	}
	before, err := Raise(want.Soft + 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Get(0); before != want || got.Soft != want.Soft+1 {
		t.Fatalf("Raise: before %v, now %v", before, got)
	}
}

func TestGetMissingProcess(t *testing.T) {
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	// The reaped child's PID is free (reuse within the test is unlikely).
	if _, err := Get(cmd.Process.Pid); !errors.Is(err, os.ErrNotExist) || !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("Get of an exited process: %v, want ErrNotExist and ESRCH", err)
	}
}

func TestWithNoFileChildInheritsAndRestores(t *testing.T) {
	restore(t)
	prev, _ := Get(0)
	n := min(prev.Hard, 4000)
	if os.Geteuid() != 0 {
		n = min(prev.Hard, 3000)
	}
	cmd := exec.Command("/bin/sleep", "5")
	if err := WithNoFile(n, cmd.Start); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	got, err := Get(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if got.Soft != n {
		t.Fatalf("child's limit %v, want soft %d", got, n)
	}
	if now, _ := Get(0); now != prev {
		t.Fatalf("this process's limit %v after WithNoFile, want %v back", now, prev)
	}
	wantErr := errors.New("start failed")
	if err := WithNoFile(n, func() error { return wantErr }); err != wantErr {
		t.Fatalf("WithNoFile returned %v, want fn's error", err)
	}
}

func TestHint(t *testing.T) {
	if h := Hint(0, Limit{1, 2}, Limit{1, 1}, syscall.EINVAL); h != "" {
		t.Fatalf("hint for EINVAL: %q", h)
	}
	nr, ok := nrOpen()
	if !ok {
		t.Skip("no /proc/sys/fs/nr_open")
	}
	if h := Hint(0, Limit{nr + 1, nr + 1}, Limit{1024, 1024}, syscall.EPERM); h == "" {
		t.Fatal("no hint for a hard limit above fs.nr_open")
	}
	if h := Hint(1, Limit{10, 10}, Limit{10, 10}, syscall.EPERM); h != "changing another user's process needs CAP_SYS_RESOURCE" {
		t.Fatalf("hint for another process: %q", h)
	}
}

func TestString(t *testing.T) {
	if String(^uint64(0)) != "unlimited" || String(65535) != "65535" {
		t.Fatal(String(^uint64(0)), String(65535))
	}
}
