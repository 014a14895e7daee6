//go:build linux

// Command nspawn-image builds the tests' Debian root file system
// (nspawn.TomcatImage) into nspawn.DefaultCacheDir, if it is not there
// yet, and says how long that took. The gate (.ci/test) runs it in the
// background while it vets and compiles, so the first container test finds
// the tree built; a test that starts meanwhile waits on the build lock, as
// it would for another test process building it.
//
// Usage: nspawn-image [-q]   (exit 0 built or cached, 1 failed)
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nettune/nettune/internal/nspawn"
)

func main() {
	quiet := flag.Bool("q", false, "do not copy debootstrap's output to stderr")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var log io.Writer = os.Stderr
	if *quiet {
		log = nil
	}
	t0 := time.Now()
	br, err := nspawn.Ensure(ctx, nspawn.DefaultCacheDir, nspawn.TomcatImage, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nspawn-image:", err)
		os.Exit(1)
	}
	if br.Built {
		fmt.Printf("nspawn-image: built %s in %s\n", br.Dir, br.Took.Round(time.Second))
		return
	}
	fmt.Printf("nspawn-image: %s is there (%s)\n", br.Dir, time.Since(t0).Round(time.Millisecond))
}
