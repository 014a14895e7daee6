package loadgen

import (
	"context"
	"errors"
	"runtime"
)

// Errors that callers branch on with errors.Is.
var (
	// ErrOpenFiles is returned (wrapped) when RLIMIT_NOFILE is too low
	// for the connection count and cannot be raised.
	ErrOpenFiles = errors.New("loadgen: open-files limit too low")
	// ErrProtocol is returned (wrapped, with what was wrong) when a
	// server's response is not valid HTTP/1.x. It counts as a read error.
	ErrProtocol = errors.New("loadgen: malformed HTTP response")
)

// Run sends the load cfg describes and returns what it measured. It
// returns when the run's duration or request count is reached, or when ctx
// is cancelled (the result then covers the part that ran).
//
// Run raises the soft RLIMIT_NOFILE when the connections need it and
// returns an error wrapping ErrOpenFiles when it cannot. It opens
// keep-alive connections before the clock starts. Errors during the run
// (refused connections, resets, timeouts, malformed responses) are counted
// in Result.Errors, not returned. Result.Generator is the process's CPU
// use over the run, with the time its event loops waited for a CPU.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	c, err := cfg.normalize(runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	clock := startGeneratorClock()
	res, err := run(ctx, c)
	if res != nil {
		loops := res.Generator // the loops' scheduler figures (Result.add)
		res.Generator = clock.use()
		res.Generator.LoopWait, res.Generator.LoopPreempted = loops.LoopWait, loops.LoopPreempted
	}
	return res, err
}
