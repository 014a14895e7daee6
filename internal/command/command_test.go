package command

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunOutput(t *testing.T) {
	out, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "echo out; echo err >&2"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != "out\nerr\n" {
		t.Fatalf("output %q, want stdout and stderr together", got)
	}
}

func TestRunEnvDir(t *testing.T) {
	dir := t.TempDir()
	out, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", `printf "%s %s" "$X" "$(pwd)"`}, Env: []string{"X=1"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "1 "+dir; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestRunFailure(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "echo no such thing; exit 3"}})
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err %v (%T), want *Error", err, err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("err %v does not wrap exit status 3", err)
	}
	if got, want := err.Error(), "/bin/sh -c echo no such thing; exit 3: exit status 3: no such thing"; got != want {
		t.Fatalf("message\n %q\nwant\n %q", got, want)
	}
}

func TestRunMissing(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: "/nonexistent/tool"})
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "/nonexistent/tool: ") {
		t.Fatalf("err %v, want a missing-file error naming the tool", err)
	}
}

func TestRunLongOutputKeepsTheEnd(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "head -c 5000 /dev/zero | tr '\\0' x; echo; echo the reason; exit 1"}})
	msg := err.Error()
	if !strings.HasSuffix(msg, "the reason") || !strings.Contains(msg, ": ...x") || len(msg) > maxOutput+200 {
		t.Fatalf("message of %d bytes does not end with the output's tail: %.80q…", len(msg), msg)
	}
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := Run(ctx, Spec{Path: "/bin/sleep", Args: []string{"10"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's error joined", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("Run returned after %s: the command was not killed", d)
	}
}

func TestRunAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running as another user needs root")
	}
	out, err := Run(context.Background(), Spec{Path: "/usr/bin/id", Args: []string{"-u"}, Cred: &syscall.Credential{Uid: 65534, Gid: 65534}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "65534" {
		t.Fatalf("ran as uid %s, want 65534", got)
	}
}
