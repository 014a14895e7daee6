// Process-wide helpers of a run: GOMAXPROCS while loops are active and a
// precise start at a wall-clock time.

package loadgen

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

// procs keeps one P more than event loops while runs are active, so the
// loops can sleep holding theirs (waitRaw) while the rest of the process
// keeps one: GOMAXPROCS is raised when a run needs it and put back when the
// last active run ends.
var procs struct {
	sync.Mutex
	runs  int
	saved int // GOMAXPROCS before an active run raised it; 0: not raised
}

// reserveProcs raises GOMAXPROCS to loops+1 if it is lower, for the time
// until release is called.
func reserveProcs(loops int) (release func()) {
	procs.Lock()
	defer procs.Unlock()
	procs.runs++
	if cur := runtime.GOMAXPROCS(0); cur <= loops {
		if procs.saved == 0 {
			procs.saved = cur
		}
		runtime.GOMAXPROCS(loops + 1)
	}
	return func() {
		procs.Lock()
		defer procs.Unlock()
		procs.runs--
		if procs.runs == 0 && procs.saved != 0 {
			restoreProcs(procs.saved)
			procs.saved = 0
		}
	}
}

// restoreProcs puts GOMAXPROCS back to n. Setting it turns off the
// runtime's automatic updates (to CPU quota and affinity changes, Go
// 1.25+), so when n is what the runtime would choose by itself and the
// environment does not set GOMAXPROCS, the default is restored instead,
// automatic updates included.
func restoreProcs(n int) {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.SetDefaultGOMAXPROCS()
	}
	if runtime.GOMAXPROCS(0) != n {
		runtime.GOMAXPROCS(n)
	}
}

// waitUntil sleeps until the wall-clock time t, spinning through the last
// millisecond so the start is within a few microseconds of t.
func waitUntil(ctx context.Context, t time.Time) error {
	if d := time.Until(t); d < 0 {
		return fmt.Errorf("loadgen: start time %s passed %s ago while connecting: give a later one", t.UTC().Format(time.RFC3339Nano), (-d).Round(time.Millisecond))
	}
	if d := time.Until(t) - time.Millisecond; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
	return nil
}
