//go:build linux

package remoteload

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// TestWorkerFor decides the worker for a client from its `uname -m`: this
// test binary (an ELF of this GOARCH) for a client of this architecture;
// a build for another; the refusal, naming the build line and
// -load-worker, when none can be built.
func TestWorkerFor(t *testing.T) {
	ctx := context.Background()
	exe, err := os.Executable()
	require.NoError(t, err)
	here := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	if here == "" {
		t.Skipf("skipped: no uname -m mapped for %s here", runtime.GOARCH)
	}
	other := map[string]string{"amd64": "aarch64", "arm64": "x86_64"}[runtime.GOARCH]
	otherArch := goarchOf[other]

	var asked []string
	build := func(_ context.Context, goarch string) (string, error) {
		asked = append(asked, goarch)
		return "/built/" + goarch, nil
	}
	p, built, err := workerFor(ctx, "client c (ssh)", here, exe, build)
	require.NoError(t, err)
	assert.Equal(t, exe, p)
	assert.False(t, built)
	assert.Empty(t, asked, "no build for a client of this architecture")

	p, built, err = workerFor(ctx, "client c (ssh)", other, exe, build)
	require.NoError(t, err)
	assert.Equal(t, "/built/"+otherArch, p)
	assert.True(t, built)

	_, _, err = workerFor(ctx, "client c (ssh)", other, exe, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "client c (ssh): its architecture is "+other)
	assert.Contains(t, err.Error(), "GOARCH="+otherArch+" go build -o tomcat-tuning-"+otherArch+" ./examples/tomcat-tuning")
	assert.Contains(t, err.Error(), "-load-worker PATH")

	failing := func(context.Context, string) (string, error) { return "", errors.New("no Go toolchain here") }
	_, _, err = workerFor(ctx, "client c (ssh)", other, exe, failing)
	assert.ErrorContains(t, err, "(cross-building it failed: no Go toolchain here)")

	_, _, err = workerFor(ctx, "client c (ssh)", "pdp11", exe, build)
	assert.ErrorContains(t, err, "its architecture is pdp11 (GOARCH unknown)")
}

// TestWorkerBuilder cross-builds the study for arm64 (the guide's
// server's architecture; amd64 on an arm64 host) from this module's
// source, once, and, where qemu-user can run it, runs the built worker on
// a load against a server on 127.0.0.1 through the worker protocol.
func TestWorkerBuilder(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds the study for another architecture")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("skipped: no go command: %v", err)
	}
	target := "arm64"
	if runtime.GOARCH == "arm64" {
		target = "amd64"
	}
	b := &WorkerBuilder{Out: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := b.Build(ctx, target)
	require.NoError(t, err)
	arch, err := ELFArch(p)
	require.NoError(t, err)
	assert.Equal(t, target, arch)
	again, err := b.Build(ctx, target)
	require.NoError(t, err)
	assert.Equal(t, p, again, "built once")

	_, err = (&WorkerBuilder{Dir: t.TempDir(), Out: t.TempDir()}).Build(ctx, target)
	assert.ErrorContains(t, err, "go build ./examples/tomcat-tuning in ")
	_, err = findModule(t.TempDir())
	assert.ErrorContains(t, err, "no go.mod of github.com/nettune/nettune at or above")

	qemu, err := exec.LookPath("qemu-aarch64-static")
	if target != "arm64" || err != nil {
		t.Logf("built %s; not run (no qemu-aarch64-static for it here)", p)
		return
	}
	hw, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	cfg := loadgen.Config{URL: hw.URL, Connections: 2, Threads: 1, Rate: 200, Duration: time.Second}
	res, err := runWorkerCommand(ctx, []string{qemu, p, WorkerArg}, cfg, "an arm64 worker under "+filepath.Base(qemu))
	require.NoError(t, err)
	assert.InDelta(t, 200, res.Requests, 20, "the arm64 worker sent the load")
	assert.Zero(t, res.Errors.Socket()+res.Errors.Status)
}
