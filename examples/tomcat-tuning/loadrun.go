//go:build linux

package main

import (
	"context"

	"github.com/nettune/nettune/loadgen"
)

// runLoad runs one load against Tomcat: the warm-up, the measurement and
// the census's background load all go through it, so where the load comes
// from is decided in one place.
func (s *study) runLoad(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	return loadgen.Run(ctx, cfg)
}
