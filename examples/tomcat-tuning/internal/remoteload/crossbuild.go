//go:build linux

package remoteload

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// modulePath is this module's path, as its go.mod names it.
const modulePath = "github.com/nettune/nettune"

// WorkerBuilder builds the study's binary, the load worker, for a
// client whose architecture is not this one's, the way the guide's x86
// client loads its aarch64 server: with the Go toolchain and this
// module's source at hand (under `go run`, or in a checkout), as
// `GOOS=linux GOARCH=… CGO_ENABLED=0 go build ./examples/tomcat-tuning`.
// Each architecture is built once.
type WorkerBuilder struct {
	// Dir is the module's root; "" finds it from the working directory
	// up (the go.mod of github.com/nettune/nettune).
	Dir string
	// Out is the folder the binaries are written to; the caller removes
	// it once the workers are on the clients.
	Out string

	mu    sync.Mutex
	built map[string]string
}

// buildTimeout bounds one cross-build (about a minute on 2 CPUs with a
// cold build cache).
const buildTimeout = 5 * time.Minute

// Build returns the path of a worker for goarch, building it when it was
// not yet. The error says what is missing: the go command, or this
// module's source.
func (b *WorkerBuilder) Build(ctx context.Context, goarch string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.built[goarch]; ok {
		return p, nil
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no Go toolchain here to build the worker for %s: %w", goarch, err)
	}
	dir := b.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		if dir, err = findModule(wd); err != nil {
			return "", err
		}
	}
	out := filepath.Join(b.Out, "tomcat-tuning-linux-"+goarch)
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", out, "./examples/tomcat-tuning")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("GOARCH=%s go build ./examples/tomcat-tuning in %s: %w: %s", goarch, dir, err, strings.TrimSpace(string(msg)))
	}
	if got, err := ELFArch(out); err != nil || got != goarch {
		return "", errors.Join(fmt.Errorf("the worker built for %s at %s is %s", goarch, out, got), err)
	}
	if b.built == nil {
		b.built = map[string]string{}
	}
	b.built[goarch] = out
	return out, nil
}

// findModule returns the folder at or above dir whose go.mod declares
// this module, or an error saying none does.
func findModule(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if declares(filepath.Join(d, "go.mod"), modulePath) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of %s at or above %s: this module's source is needed to build the worker", modulePath, dir)
		}
	}
}

// declares reports whether the go.mod at path declares module mod.
func declares(path, mod string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == mod
		}
	}
	return false
}

// workerFor chooses the worker binary for a client whose `uname -m` is
// machine: exe when it is of the client's architecture, else one build
// makes for it (nil: none may be built), else an error naming the
// `GOARCH=… go build` line and -load-worker. built is true when the
// returned binary was built.
func workerFor(ctx context.Context, where, machine, exe string, build func(context.Context, string) (string, error)) (path string, built bool, err error) {
	binArch, err := ELFArch(exe)
	if err != nil {
		return "", false, fmt.Errorf("%s: the worker binary to copy: %w", where, err)
	}
	arch, known := goarchOf[machine]
	if known && arch == binArch {
		return exe, false, nil
	}
	why := ""
	if known && build != nil {
		p, err := build(ctx, arch)
		if err == nil {
			return p, true, nil
		}
		why = fmt.Sprintf(" (cross-building it failed: %v)", err)
	}
	return "", false, fmt.Errorf("%s: its architecture is %s (GOARCH %s), the worker binary %s is %s%s: build one for it "+
		"(GOARCH=%s go build -o tomcat-tuning-%s ./examples/tomcat-tuning) and name it with -load-worker PATH",
		where, machine, cmp.Or(arch, "unknown"), exe, binArch, why, cmp.Or(arch, "ARCH"), cmp.Or(arch, "ARCH"))
}
