package tomcatconf

import (
	"context"

	"github.com/nettune/nettune/internal/udiff"
)

// Names the black-box tests (package tomcatconf_test) reach that an
// importer does not need.

// Thread kinds, as Thread.Kind gives them.
const (
	KindExec     = kindExec
	KindExecutor = kindExecutor
	KindPoller   = kindPoller
	KindAcceptor = kindAcceptor
	KindGC       = kindGC
	KindCompiler = kindCompiler
	KindVM       = kindVM
	KindOther    = kindOther
)

// ThreadKind is the type of Thread.Kind.
type ThreadKind = string

// StopResult.Method values.
const (
	StopShutdownPort = stopShutdownPort
	StopSIGTERM      = stopSIGTERM
	StopSIGKILL      = stopSIGKILL
	StopSystemctl    = stopSystemctl
)

// Attribute tables.
const (
	ElemConnector      = elemConnector
	ElemExecutor       = elemExecutor
	ElemAccessLogValve = elemAccessLogValve
)

const LaunchEnv = launchEnv

var (
	ErrSyntax       = errSyntax
	SystemdBooted   = systemdBooted
	ClassifyThread  = classifyThread
	ParseThreadDump = parseThreadDump
	Validate        = validate
)

type (
	ExecRunner      = execRunner
	UnitOptions     = unitOptions
	ProcessLimits   = processLimits
	UnitStartResult = unitStartResult
	UnitStopResult  = unitStopResult
)

// UnifiedDiff is the diff Config.Diff prints, between any two texts.
func UnifiedDiff(oldName, newName string, old, new []byte, ctx int) string {
	return udiff.UnifiedContext(oldName, newName, old, new, ctx)
}

// Services returns every Service of the Server.
func (c *Config) Services() []service { return c.services() }

// Start runs `systemctl start UNIT` and waits for the unit and ReadyURL.
func (u *Unit) Start(ctx context.Context, opts *UnitOptions) (UnitStartResult, error) {
	return u.start(ctx, "start", opts)
}

// Restart runs `systemctl restart UNIT` and waits for a new main process.
func (u *Unit) Restart(ctx context.Context, opts *UnitOptions) (UnitStartResult, error) {
	return u.start(ctx, "restart", opts)
}

// Stop runs `systemctl stop UNIT` and waits until the unit is down.
func (u *Unit) Stop(ctx context.Context, opts *UnitOptions) (UnitStopResult, error) {
	return u.stop(ctx, opts)
}

// ProcessLimits reads what process pid got from /proc.
func (u *Unit) ProcessLimits(pid int) (ProcessLimits, error) { return u.limits(pid) }
