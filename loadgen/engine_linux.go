// The engine: a run sets up its event loops, starts them together and
// adds up what they measured into a Result.

package loadgen

import (
	"context"
	"crypto/tls"
	"math"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

type runner struct {
	cfg      Config
	reqs     []request // one, or one per target
	ok       StatusSet
	ip       net.IP
	port     int
	family   int
	nconns   uint64
	pacer    Pacer
	slack    int64      // Config.Slack in ns when > 0
	adaptive bool       // Slack 0 in an open model: the loops batch sends by policy
	policy   sendPolicy // the default send batching
	warmupNs int64
	endNs    int64 // end of the measured window (warm-up + duration); MaxInt64 without a duration
	stopNs   atomic.Int64
	start    time.Time
	stop     atomic.Bool
	ivCh     chan ivPart
	nloops   int
	rawWait  bool        // loops sleep through waitRaw (no more loops than Ps)
	tlsCfg   *tls.Config // https; nil for http
	remote   net.Addr
}

func (r *runner) now() int64 { return int64(time.Since(r.start)) }

func run(ctx context.Context, cfg Config) (*Result, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	cfg = r.cfg // as buildRequests left it
	release := reserveProcs(cfg.Threads)
	defer release()
	r.setWindow()
	rl, err := raiseNoFile(uint64(cfg.Connections) + uint64(2*cfg.Threads) + 32)
	if err != nil {
		return nil, err
	}
	loops := r.newLoops()
	if cfg.OnInterval != nil {
		r.ivCh = make(chan ivPart, 4*cfg.Threads)
	}
	end, err := r.drive(ctx, loops)
	if err != nil {
		return nil, err
	}
	res := r.newResult(end, rl)
	errnos := map[errnoKey]uint64{}
	var totalSent uint64
	for _, l := range loops {
		res.add(&l.st, errnos, &totalSent)
	}
	r.finish(res, end, errnos, totalSent)
	return res, nil
}

// newRunner serialises the requests, resolves the target and sets up the
// runner's target and TLS configuration.
func newRunner(cfg Config) (*runner, error) {
	t, reqs, err := buildRequests(&cfg)
	if err != nil {
		return nil, err
	}
	ips, err := t.resolve()
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, reqs: reqs, ok: cfg.OKStatus, nconns: uint64(cfg.Connections), pacer: cfg.Pacer, nloops: cfg.Threads, ip: ips[0], port: t.port}
	r.remote = &net.TCPAddr{IP: ips[0], Port: t.port}
	if t.tls {
		r.tlsCfg = newTLSConfig(&cfg, t)
	}
	r.family = unix.AF_INET6
	if ips[0].To4() != nil {
		r.family = unix.AF_INET
	}
	return r, nil
}

// setWindow sets the run's send batching and its measured window, with
// the hard stop after the drain.
func (r *runner) setWindow() {
	cfg := &r.cfg
	r.rawWait = cfg.Threads < runtime.GOMAXPROCS(0)
	r.warmupNs = int64(cfg.Warmup)
	switch {
	case cfg.Slack > 0:
		r.slack = int64(cfg.Slack)
	case cfg.Slack == 0 && r.pacer != nil:
		r.adaptive, r.policy = true, defaultSendPolicy
	}
	r.endNs = math.MaxInt64
	if cfg.Duration > 0 {
		r.endNs = int64(cfg.Warmup + cfg.Duration)
	}
	hard := r.endNs
	if hard != math.MaxInt64 && !cfg.NoDrain {
		// The drain: requests in flight at the end of the window get up
		// to the timeout to finish, and a tick more for its scan.
		hard += int64(cfg.Timeout) + int64(tick)
	}
	r.stopNs.Store(hard)
}

// newLoops makes the event loops and shares the connections out over
// them, numbered round-robin so that consecutive request numbers go to
// different loops.
func (r *runner) newLoops() []*loop {
	cfg := &r.cfg
	loops := make([]*loop, cfg.Threads)
	var gidx uint64
	for i := range loops {
		n := cfg.Connections / cfg.Threads
		if i < cfg.Connections%cfg.Threads {
			n++
		}
		loops[i] = r.newLoop(i, n, &gidx)
	}
	// Renumber so that consecutive request numbers go to different loops.
	g := uint64(0)
	for j := 0; ; j++ {
		any := false
		for _, l := range loops {
			if j < len(l.conns) {
				l.conns[j].gidx = g
				g++
				any = true
			}
		}
		if !any {
			break
		}
	}
	return loops
}

// newLoop makes loop i with its n connections and its own histograms.
func (r *runner) newLoop(i, n int, gidx *uint64) *loop {
	cfg, reqs := &r.cfg, r.reqs
	l := &loop{r: r, id: i, buf: make([]byte, readBufSize), events: make([]unix.EpollEvent, 512), budget: -1, armed: -1}
	if ip4 := r.ip.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: r.port}
		copy(sa.Addr[:], ip4)
		l.sa = sa
	} else {
		sa := &unix.SockaddrInet6{Port: r.port}
		copy(sa.Addr[:], r.ip.To16())
		l.sa = sa
	}
	l.st.h = newHistograms()
	l.st.drainLatency = NewHistogram()
	l.st.errnos = map[errnoKey]uint64{}
	l.st.docLen = -1
	if len(reqs) > 1 {
		l.st.targets = make([]targetStats, len(reqs))
		for k := range l.st.targets {
			l.st.targets[k].latency = newTargetHistogram()
		}
	}
	if cfg.Requests > 0 {
		l.budget = cfg.Requests / int64(cfg.Threads)
		if int64(i) < cfg.Requests%int64(cfg.Threads) {
			l.budget++
		}
	}
	if cfg.OnInterval != nil {
		l.st.ivLatency, l.st.ivService, l.st.ivLag = NewHistogram(), NewHistogram(), NewHistogram()
	}
	for j := 0; j < n; j++ {
		c := &conn{fd: -1, idx: int32(j), gidx: *gidx, hidx: -1}
		// Connections are numbered round-robin over loops so each
		// loop's share of the schedule is evenly spread.
		l.conns = append(l.conns, c)
		(*gidx)++
	}
	return l
}

// drive starts the loops together (at Config.StartAt when set), waits
// for them to finish and returns the time the last one ended.
func (r *runner) drive(ctx context.Context, loops []*loop) (int64, error) {
	cfg := &r.cfg
	// Phase 1: every loop opens its connections (keep-alive) and waits.
	var ready, finished sync.WaitGroup
	startCh := make(chan struct{})
	ready.Add(len(loops))
	finished.Add(len(loops))
	for _, l := range loops {
		go func(l *loop) {
			defer finished.Done()
			l.main(&ready, startCh)
		}(l)
	}
	ready.Wait()
	for _, l := range loops {
		if l.setupErr != nil {
			r.stop.Store(true)
			close(startCh)
			finished.Wait()
			return 0, l.setupErr
		}
	}
	if !cfg.StartAt.IsZero() {
		if err := waitUntil(ctx, cfg.StartAt); err != nil {
			r.stop.Store(true)
			close(startCh)
			finished.Wait()
			return 0, err
		}
	}
	stopWatch := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.stop.Store(true)
		case <-stopWatch:
		}
	}()
	var ivDone chan struct{}
	if r.ivCh != nil {
		ivDone = make(chan struct{})
		go collectIntervals(r, ivDone)
	}
	r.start = time.Now()
	if !cfg.StartAt.IsZero() {
		// Anchor the schedule at the shared start even if this thread woke
		// late: a late wake-up then shows as lag, not as a shifted shard.
		r.start = r.start.Add(cfg.StartAt.Sub(r.start))
	}
	close(startCh)
	finished.Wait()
	end := r.now()
	close(stopWatch)
	if r.ivCh != nil {
		close(r.ivCh)
		<-ivDone
	}
	return end, nil
}

// newResult starts the Result of a run that ended at end: what the
// Config says and the measured window.
func (r *runner) newResult(end int64, rl RlimitChange) *Result {
	cfg, reqs := &r.cfg, r.reqs
	url := cfg.URL
	if url == "" {
		url = cfg.Targets[0].URL
	}
	res := &Result{
		URL: url, Method: cfg.Method, OKStatus: cfg.OKStatus.String(), Connections: cfg.Connections, Threads: cfg.Threads,
		KeepAlive: !cfg.DisableKeepAlive, Warmup: cfg.Warmup, Histograms: newHistograms(),
		DocumentLength: -1, OpenFiles: rl,
	}
	if res.Method == "" && len(cfg.Targets) == 0 {
		res.Method = "GET"
	}
	if len(reqs) > 1 {
		res.Targets = make([]TargetResult, len(reqs))
		for i, tg := range cfg.Targets {
			res.Targets[i] = TargetResult{Method: firstNonEmpty(tg.Method, "GET"), URL: tg.URL, Latency: newTargetHistogram()}
		}
	}
	res.Start = r.start.Add(cfg.Warmup)
	measuredEnd := min(end, r.endNs)
	if r.pacer != nil && r.endNs != math.MaxInt64 && !r.stop.Load() {
		// An open-model run offers load until its window's end even if
		// its last response came earlier.
		measuredEnd = r.endNs
	}
	res.Elapsed = time.Duration(measuredEnd - r.warmupNs)
	if res.Elapsed <= 0 {
		res.Elapsed = time.Duration(end)
	}
	res.Drain.Latency = NewHistogram()
	if end > r.endNs {
		res.Drain.Elapsed = time.Duration(end - r.endNs)
	}
	return res
}

// add merges one loop's counts and histograms into res.
func (res *Result) add(s *loopStats, errnos map[errnoKey]uint64, totalSent *uint64) {
	res.Dropped += res.Histograms.merge(s.h) + s.dropped
	res.Requests += s.requests
	res.Sent += s.sent
	*totalSent += s.totalSent
	res.Bytes += s.bytes
	res.BodyBytes += s.bodyBytes
	res.KeepAliveResponses += s.keepAliveResp
	res.LengthMismatches += s.lengthMismatch
	res.Errors.Connect += s.errConnect
	res.Errors.Read += s.errRead
	res.Errors.Write += s.errWrite
	res.Errors.Timeout += s.errTimeout
	res.Errors.Status += s.errStatus
	res.Statuses.Add(s.statuses.classes())
	for k := range s.targets {
		tr, ts := &res.Targets[k], &s.targets[k]
		tr.Requests += ts.requests
		tr.Errors += ts.errors
		tr.Statuses.Add(ts.statuses.classes())
		res.Dropped += tr.Latency.Merge(ts.latency)
	}
	res.Errors.TLS += s.errTLS
	res.TLS.Handshakes += s.handshakes
	res.TLS.Resumed += s.resumed
	if res.TLS.Version == "" {
		res.TLS.Version, res.TLS.CipherSuite = s.tlsVersion, s.tlsCipher
	}
	res.Connects += s.connects
	res.Reconnects += s.reconnects
	res.Incomplete += s.incomplete
	res.Drain.Requests += s.drainRequests
	res.Drain.Errors += s.drainErrors
	res.Drain.Timeouts += s.drainTimeouts
	res.Dropped += res.Drain.Latency.Merge(s.drainLatency)
	res.RateSamples = append(res.RateSamples, s.rateSamples...)
	if s.sched.ok {
		res.Generator.LoopWait += s.sched.wait
		res.Generator.LoopPreempted += s.sched.preempted
	}
	for k, v := range s.errnos {
		errnos[k] += v
	}
	if res.DocumentLength < 0 && s.docLen >= 0 {
		res.DocumentLength = s.docLen
		res.Server = s.server
	}
}

// finish sets a run's derived figures: the errnos, the missed sends and
// the offered and achieved rates.
func (r *runner) finish(res *Result, end int64, errnos map[errnoKey]uint64, totalSent uint64) {
	// Processing is the service time (see complete): one record per
	// request instead of two.
	res.Dropped += res.Histograms.Processing.Merge(res.Histograms.Service)
	res.Errors.Errnos = sortErrnos(errnos)
	if r.pacer != nil {
		res.Pacer = r.pacer.String()
		endAt := r.endNs
		if r.stop.Load() && end < r.endNs {
			endAt = end
		}
		due := dueBefore(r.pacer, endAt)
		if due > totalSent {
			res.Missed = due - totalSent
		}
		offered := float64(due - dueBefore(r.pacer, r.warmupNs))
		res.OfferedRate = offered / time.Duration(min(r.endNs, end)-r.warmupNs).Seconds()
	}
	if res.Elapsed > 0 {
		res.AchievedRate = float64(res.Requests) / res.Elapsed.Seconds()
	}
}
