//go:build linux

package study

import (
	"context"
	"fmt"

	"github.com/nettune/nettune/internal/rlimit"
	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// openFilesKind raises Tomcat's open-files limit, in the baseline.
func openFilesKind() Kind {
	return Kind{Name: StepOpenFiles, Title: title(fmt.Sprintf("ulimit -n %d for Tomcat", rlimit.DefaultNoFile)), Baseline: true,
		Plan: (*planner).openFiles, Needs: Needs{UnitDropIn: true, Persist: persistOpenFiles}}
}

// openFiles describes the open-files limit Tomcat is started with: set on
// every start (Instance.NoFile), not on the host; under systemd the unit's
// LimitNOFILE=, in its runtime drop-in.
func (p *planner) openFiles(context.Context) (*tuning.Change, error) {
	if p.h.Tomcat.Systemd() {
		return p.dropIn(fmt.Sprintf("LimitNOFILE=%d for %s", rlimit.DefaultNoFile, p.h.Tomcat.Instance.Service),
			func(d *tomcatconf.DropIn) { d.LimitNOFILE = rlimit.DefaultNoFile })
	}
	cur, err := tuning.OpenFilesLimit(0)
	if err != nil {
		return nil, err
	}
	d := fmt.Sprintf("Tomcat is started under `ulimit -n %d` (this process: %s)", rlimit.DefaultNoFile, cur)
	if cur.Hard < rlimit.DefaultNoFile {
		d += fmt.Sprintf("; the hard limit here is %d, so the JVM gets %d unless CAP_SYS_RESOURCE can raise it", cur.Hard, cur.Hard)
	}
	return &tuning.Change{Describe: d}, nil
}

// persistOpenFiles keeps the open-files limit in the unit's drop-in.
func persistOpenFiles(pp *persistPlan) error {
	pp.dropIn.LimitNOFILE = rlimit.DefaultNoFile
	return nil
}
