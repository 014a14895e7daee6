//go:build linux

package main

import (
	"context"

	"github.com/nettune/nettune/loadgen"
)

// runLoad runs one load against Tomcat: the warm-up, the measurement and
// the census's background load all go through it, so where the load comes
// from is decided in one place. With -load-netns it runs in a worker
// process inside that network namespace, so the load reaches Tomcat
// through the namespace's interface, as from the guide's client machine.
func (s *study) runLoad(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
	if s.o.loadNetNS != "" {
		return netnsLoad{netns: s.o.loadNetNS}.run(ctx, cfg)
	}
	return loadgen.Run(ctx, cfg)
}
