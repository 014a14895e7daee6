package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

// Connection states.
const (
	csClosed     uint8 = iota // no socket
	csConnecting              // non-blocking connect in progress
	csIdle                    // connected, no request outstanding
	csSending                 // request partly written
	csWaiting                 // request written, response not complete
	csDone                    // this connection sends no more requests
)

const (
	tick          = 100 * time.Millisecond // rate samples, timeout scan, stop checks
	retryConnect  = 10 * time.Millisecond  // back-off after a failed connect
	readBufSize   = 64 << 10
	timerfdMarker = -1
)

type conn struct {
	fd    int
	gen   int32
	idx   int32
	state uint8
	// scheduled: a request is planned at intended and not yet sent; it is
	// sent once intended has passed and the connection is ready.
	scheduled bool
	retryAt   int64  // no connect before this (back-off after a failure)
	gidx      uint64 // global connection number: request n = gidx + k*C
	k         uint64 // this connection's next request
	intended  int64  // ns from start
	sentAt    int64
	connAt    int64 // connect started
	connDone  int64 // connect completed (0: reused)
	first     int64 // first response byte
	written   int
	due       int64
	hidx      int
	recorded  bool // the current request counts (not warm-up)
	fresh     bool // connected for the current request: its connect time is recorded
	p         respParser
}

type loopStats struct {
	h                                Histograms
	ivLatency, ivService, ivLag      *hdrhistogram.Histogram
	requests, sent, bytes, bodyBytes uint64
	keepAliveResp, lengthMismatch    uint64
	errConnect, errRead, errWrite    uint64
	errTimeout, errStatus            uint64
	connects, reconnects, incomplete uint64
	ivRequests, ivErrors, ivBytes    uint64
	totalSent                        uint64 // including warm-up
	dropped                          int64
	errnos                           map[errnoKey]uint64
	rateSamples                      []float64
	docLen                           int64
	server                           string
}

type runner struct {
	cfg      Config
	req      []byte
	head     bool
	ip       net.IP
	port     int
	family   int
	nconns   uint64
	pacer    Pacer
	slack    int64 // Config.Slack in ns
	warmupNs int64
	endNs    int64 // end of the measured window (warm-up + duration); MaxInt64 without a duration
	stopNs   atomic.Int64
	start    time.Time
	stop     atomic.Bool
	ivCh     chan ivPart
	nloops   int
	rawWait  bool // loops sleep through waitRaw (no more loops than Ps)
}

type ivPart struct {
	index                   int
	start, end              int64
	requests, errors, bytes uint64
	latency, service, lag   *hdrhistogram.Histogram
}

type loop struct {
	r        *runner
	sa       unix.Sockaddr // per loop: unix.Connect writes into it
	id       int
	epfd     int
	tfd      int
	conns    []*conn
	heap     connHeap
	buf      []byte
	events   []unix.EpollEvent
	st       loopStats
	budget   int64 // closed loop with Requests: requests left; -1 unlimited
	armed    int64
	active   int // connections not done
	nextTick int64
	lastReq  uint64
	lastTick int64
	nextIv   int64
	ivIndex  int
	ivStart  int64
	setupErr error
}

func (r *runner) now() int64 { return int64(time.Since(r.start)) }

func run(ctx context.Context, cfg Config) (*Result, error) {
	t, err := parseTarget(cfg.URL)
	if err != nil {
		return nil, err
	}
	req, err := buildRequest(&cfg, t)
	if err != nil {
		return nil, err
	}
	ips, err := t.resolve()
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, req: req, head: cfg.Method == "HEAD", nconns: uint64(cfg.Connections), pacer: cfg.Pacer, nloops: cfg.Threads, ip: ips[0], port: t.port}
	r.family = unix.AF_INET6
	if ips[0].To4() != nil {
		r.family = unix.AF_INET
	}
	release := reserveProcs(cfg.Threads)
	defer release()
	r.rawWait = cfg.Threads < runtime.GOMAXPROCS(0)
	r.warmupNs = int64(cfg.Warmup)
	r.slack = int64(cfg.Slack)
	r.endNs = math.MaxInt64
	if cfg.Duration > 0 {
		r.endNs = int64(cfg.Warmup + cfg.Duration)
	}
	hard := r.endNs
	if r.pacer != nil && hard != math.MaxInt64 {
		// Open model: in-flight requests get up to the timeout to finish.
		hard += int64(cfg.Timeout)
	}
	r.stopNs.Store(hard)

	rl, err := raiseNoFile(uint64(cfg.Connections) + uint64(2*cfg.Threads) + 32)
	if err != nil {
		return nil, err
	}

	loops := make([]*loop, cfg.Threads)
	var gidx uint64
	for i := range loops {
		n := cfg.Connections / cfg.Threads
		if i < cfg.Connections%cfg.Threads {
			n++
		}
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
		l.st.errnos = map[errnoKey]uint64{}
		l.st.docLen = -1
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
			c := &conn{fd: -1, idx: int32(j), gidx: gidx, hidx: -1}
			// Connections are numbered round-robin over loops so each
			// loop's share of the schedule is evenly spread.
			l.conns = append(l.conns, c)
			gidx++
		}
		loops[i] = l
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
	if cfg.OnInterval != nil {
		r.ivCh = make(chan ivPart, 4*cfg.Threads)
	}

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
			return nil, l.setupErr
		}
	}
	if !cfg.StartAt.IsZero() {
		if err := waitUntil(ctx, cfg.StartAt); err != nil {
			r.stop.Store(true)
			close(startCh)
			finished.Wait()
			return nil, err
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

	res := &Result{
		URL: cfg.URL, Method: cfg.Method, Connections: cfg.Connections, Threads: cfg.Threads,
		KeepAlive: !cfg.DisableKeepAlive, Warmup: cfg.Warmup, Histograms: newHistograms(),
		DocumentLength: -1, OpenFiles: rl,
	}
	if res.Method == "" {
		res.Method = "GET"
	}
	res.Start = r.start.Add(cfg.Warmup)
	measuredEnd := end
	if r.pacer == nil && end > r.endNs {
		measuredEnd = r.endNs
	}
	res.Elapsed = time.Duration(measuredEnd - r.warmupNs)
	if res.Elapsed <= 0 {
		res.Elapsed = time.Duration(end)
	}
	errnos := map[errnoKey]uint64{}
	var totalSent uint64
	for _, l := range loops {
		s := &l.st
		res.Dropped += res.Histograms.merge(s.h) + s.dropped
		res.Requests += s.requests
		res.Sent += s.sent
		totalSent += s.totalSent
		res.Bytes += s.bytes
		res.BodyBytes += s.bodyBytes
		res.KeepAliveResponses += s.keepAliveResp
		res.LengthMismatches += s.lengthMismatch
		res.Errors.Connect += s.errConnect
		res.Errors.Read += s.errRead
		res.Errors.Write += s.errWrite
		res.Errors.Timeout += s.errTimeout
		res.Errors.Status += s.errStatus
		res.Connects += s.connects
		res.Reconnects += s.reconnects
		res.Incomplete += s.incomplete
		res.RateSamples = append(res.RateSamples, s.rateSamples...)
		for k, v := range s.errnos {
			errnos[k] += v
		}
		if res.DocumentLength < 0 && s.docLen >= 0 {
			res.DocumentLength = s.docLen
			res.Server = s.server
		}
	}
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
	return res, nil
}

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

// dueBefore counts the requests the pacer schedules before end (ns).
func dueBefore(p Pacer, end int64) uint64 {
	if end <= 0 {
		return 0
	}
	k := p.Hits(time.Duration(end - 1))
	for k > 0 && int64(p.Due(k-1)) >= end {
		k--
	}
	for int64(p.Due(k)) < end {
		k++
	}
	return k
}

func collectIntervals(r *runner, done chan struct{}) {
	defer close(done)
	type acc struct {
		parts int
		p     ivPart
	}
	pending := map[int]*acc{}
	cum := NewHistogram()
	var totReq, totErr uint64
	next := 0
	emit := func(a *acc) {
		cum.Merge(a.p.latency)
		totReq += a.p.requests
		totErr += a.p.errors
		s := Snapshot{
			Index: a.p.index, Start: time.Duration(a.p.start), End: time.Duration(a.p.end),
			RunStart: r.start.Add(time.Duration(r.warmupNs)),
			Requests: a.p.requests, Errors: a.p.errors, Bytes: a.p.bytes,
			Latency: a.p.latency, Service: a.p.service, Cumulative: cum,
			TotalRequests: totReq, TotalErrors: totErr,
		}
		if r.pacer != nil {
			s.Lag = a.p.lag
		}
		r.cfg.OnInterval(s)
	}
	defer func() {
		// Loops that ended early reported fewer intervals: emit the rest.
		for ; len(pending) > 0; next++ {
			if a := pending[next]; a != nil {
				delete(pending, next)
				emit(a)
			}
		}
	}()
	for part := range r.ivCh {
		a := pending[part.index]
		if a == nil {
			a = &acc{p: ivPart{index: part.index, start: part.start, end: part.end, latency: NewHistogram(), service: NewHistogram(), lag: NewHistogram()}}
			pending[part.index] = a
		}
		a.parts++
		a.p.requests += part.requests
		a.p.errors += part.errors
		a.p.bytes += part.bytes
		a.p.latency.Merge(part.latency)
		a.p.service.Merge(part.service)
		a.p.lag.Merge(part.lag)
		if part.end > a.p.end {
			a.p.end = part.end
		}
		for {
			a := pending[next]
			if a == nil || a.parts < r.nloops {
				break
			}
			delete(pending, next)
			emit(a)
			next++
		}
	}
}

// main is one event loop's goroutine, locked to its OS thread.
func (l *loop) main(ready *sync.WaitGroup, startCh chan struct{}) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer l.closeAll()
	var err error
	l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		l.setupErr = fmt.Errorf("loadgen: epoll_create1: %w", err)
		ready.Done()
		return
	}
	l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		l.setupErr = fmt.Errorf("loadgen: timerfd_create: %w", err)
		ready.Done()
		return
	}
	// Edge-triggered: each expiry wakes epoll once; re-arming resets it,
	// so the timerfd never needs a read.
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.tfd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: timerfdMarker}); err != nil {
		l.setupErr = fmt.Errorf("loadgen: epoll_ctl timerfd: %w", err)
		ready.Done()
		return
	}
	l.active = len(l.conns)
	if !l.r.cfg.DisableKeepAlive {
		l.preconnect()
	}
	ready.Done()
	<-startCh
	if l.r.stop.Load() && l.r.start.IsZero() {
		return
	}
	now := l.r.now()
	l.nextTick = int64(tick)
	l.nextIv = int64(l.r.cfg.Interval) + l.r.warmupNs
	l.ivStart = l.r.warmupNs
	l.lastTick = 0
	for _, c := range l.conns {
		if c.state == csConnecting {
			c.connAt = now
		}
		c.retryAt = 0
		l.schedule(c, now)
	}
	l.loop()
}

// preconnect opens the keep-alive connections before the clock starts, so
// the first intended send times are not spent connecting. It waits up to
// the timeout; connections still connecting carry on in the run.
func (l *loop) preconnect() {
	for _, c := range l.conns {
		l.connect(c, 0)
		if l.setupErr != nil {
			return
		}
	}
	deadline := time.Now().Add(l.r.cfg.Timeout)
	for time.Now().Before(deadline) {
		waiting := 0
		for _, c := range l.conns {
			if c.state == csConnecting {
				waiting++
			}
		}
		if waiting == 0 {
			break
		}
		n, err := unix.EpollWait(l.epfd, l.events, 10)
		if err != nil && !errors.Is(err, unix.EINTR) {
			l.setupErr = fmt.Errorf("loadgen: epoll_wait: %w", err)
			return
		}
		for i := 0; i < n; i++ {
			ev := l.events[i]
			if ev.Fd == timerfdMarker {
				continue
			}
			c := l.conns[ev.Fd]
			if c.gen != ev.Pad || c.state != csConnecting {
				continue
			}
			l.finishConnect(c, 0, false)
		}
	}
	// Connects in the set-up phase are not part of the measured run.
	l.st.h.Connect.Reset()
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		if c.fd >= 0 {
			if c.state == csSending || c.state == csWaiting {
				l.st.incomplete++
			}
			unix.Close(c.fd)
			c.fd = -1
		}
	}
	if l.tfd > 0 {
		unix.Close(l.tfd)
	}
	if l.epfd > 0 {
		unix.Close(l.epfd)
	}
}

func (l *loop) loop() {
	r := l.r
	for {
		now := r.now()
		if now >= l.nextTick {
			l.onTick(now)
			if l.finished(now) {
				return
			}
		}
		// Send everything that is due.
		for len(l.heap) > 0 && l.heap[0].due <= now {
			c := l.heap.pop()
			l.kick(c, now)
		}
		if l.active == 0 {
			l.flushInterval(now, true)
			return
		}
		wake := l.nextTick
		if len(l.heap) > 0 && l.heap[0].due+l.r.slack < wake {
			wake = l.heap[0].due + l.r.slack
		}
		var n int
		var err error
		waited := r.rawWait && wake == l.armed
		if waited {
			// The timer is set for the next wake-up already (a closed
			// loop's next tick): one wait, which returns at once with
			// what is ready, instead of a poll and then a wait.
			n, err = waitRaw(l.epfd, l.events)
		} else {
			// Take what is ready without blocking; only when nothing
			// is, arm the timer for the next due send (or tick) and
			// sleep.
			n, err = pollNow(l.epfd, l.events)
		}
		if err == nil && n == 0 && !waited {
			if wake != l.armed {
				d := wake - r.now()
				if d < 1000 {
					d = 1000
				}
				if err := armTimer(l.tfd, d); err == nil {
					l.armed = wake
				}
			}
			if r.rawWait {
				n, err = waitRaw(l.epfd, l.events)
			} else {
				n, err = unix.EpollWait(l.epfd, l.events, -1)
			}
		}
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		for i := 0; i < n; i++ {
			ev := l.events[i]
			if ev.Fd == timerfdMarker {
				l.armed = -1
				continue
			}
			c := l.conns[ev.Fd]
			if c.gen != ev.Pad {
				continue
			}
			l.onEvent(c, ev.Events)
		}
	}
}

// finished reports whether the loop must stop now.
func (l *loop) finished(now int64) bool {
	r := l.r
	if r.stop.Load() || now >= r.stopNs.Load() {
		l.flushInterval(now, true)
		return true
	}
	if r.pacer == nil && now >= r.endNs {
		l.flushInterval(now, true)
		return true
	}
	return false
}

func (l *loop) onTick(now int64) {
	r := l.r
	// Rate sample (wrk's Req/Sec), after warm-up.
	if now > r.warmupNs && l.lastTick >= r.warmupNs && now <= r.endNs {
		secs := float64(now-l.lastTick) / 1e9
		if secs > 0 {
			l.st.rateSamples = append(l.st.rateSamples, float64(l.st.requests-l.lastReq)/secs)
		}
	}
	l.lastReq = l.st.requests
	l.lastTick = now
	l.nextTick = now + int64(tick)
	if iv := int64(r.cfg.Interval); iv < int64(tick) {
		l.nextTick = now + iv
	}
	if r.endNs != math.MaxInt64 && now < r.endNs && l.nextTick > r.endNs {
		l.nextTick = r.endNs
	}
	if s := r.stopNs.Load(); now < s && l.nextTick > s {
		l.nextTick = s
	}
	l.flushInterval(now, false)
	if r.ivCh != nil && l.nextIv < l.nextTick && l.nextIv > now {
		l.nextTick = l.nextIv
	}
	// Timeouts.
	to := int64(r.cfg.Timeout)
	for _, c := range l.conns {
		switch c.state {
		case csSending, csWaiting:
			if now-c.sentAt > to {
				l.countErr("timeout", "ETIMEDOUT")
				l.closeConn(c)
				c.k++
				l.afterFailure(c, now)
			}
		case csConnecting:
			if now-c.connAt > to {
				l.countErr("connect", "ETIMEDOUT")
				l.closeConn(c)
				l.connectFailed(c, now)
			}
		}
	}
}

// emitInterval sends the current interval, ending at end, to the
// collector. Interval boundaries are absolute (warm-up + k × Interval), so
// every loop reports the same indexes.
func (l *loop) emitInterval(end int64) {
	r := l.r
	if end > r.endNs {
		end = r.endNs
	}
	r.ivCh <- ivPart{
		index: l.ivIndex, start: l.ivStart - r.warmupNs, end: end - r.warmupNs,
		requests: l.st.ivRequests, errors: l.st.ivErrors, bytes: l.st.ivBytes,
		latency: l.st.ivLatency, service: l.st.ivService, lag: l.st.ivLag,
	}
	l.ivIndex++
	l.ivStart = l.nextIv
	l.nextIv += int64(r.cfg.Interval)
	l.st.ivRequests, l.st.ivErrors, l.st.ivBytes = 0, 0, 0
	l.st.ivLatency, l.st.ivService, l.st.ivLag = NewHistogram(), NewHistogram(), NewHistogram()
}

// flushInterval emits the intervals that ended by now and, at the end of
// the run, the last partial one.
func (l *loop) flushInterval(now int64, final bool) {
	r := l.r
	if r.ivCh == nil {
		return
	}
	// The interval that ends at the end of the run stays open until the
	// loop finishes, so responses that complete after the end (requests
	// sent before it) are counted in it.
	for now >= l.nextIv && l.nextIv < r.endNs {
		l.emitInterval(l.nextIv)
	}
	if final && l.ivStart < r.endNs && (now > l.ivStart || l.st.ivRequests > 0 || l.st.ivErrors > 0) {
		end := max(now, l.ivStart+1)
		if r.pacer != nil && r.endNs != math.MaxInt64 && !r.stop.Load() {
			// An open-model run with a duration was active until its
			// scheduled end, even if the last response came earlier.
			end = r.endNs
		}
		l.emitInterval(end)
	}
}

// schedule plans c's next request: now in a closed loop, at the pacer's
// time for it in an open one.
func (l *loop) schedule(c *conn, now int64) {
	r := l.r
	if r.stop.Load() {
		l.retire(c)
		return
	}
	if r.pacer == nil {
		if now >= r.endNs || l.budget == 0 {
			l.retire(c)
			return
		}
		if l.budget > 0 {
			l.budget--
		}
		c.intended = now
	} else {
		n := c.gidx + c.k*r.nconns
		d := r.pacer.Due(n)
		if int64(d) >= r.endNs {
			l.retire(c)
			return
		}
		c.intended = int64(d)
	}
	c.recorded = c.intended >= r.warmupNs
	c.scheduled = true
	l.kick(c, now)
}

// kick moves c forward: it sends a due request on a ready connection,
// connects a closed one, or waits in the heap for the next due time.
func (l *loop) kick(c *conn, now int64) {
	if !c.scheduled || c.state == csDone {
		return
	}
	if c.intended > now {
		l.wakeAt(c, c.intended)
		return
	}
	switch c.state {
	case csClosed:
		if c.retryAt > now {
			l.wakeAt(c, c.retryAt)
			return
		}
		if l.r.pacer == nil {
			// A closed loop has no schedule: the request starts now.
			c.intended = now
			c.recorded = now >= l.r.warmupNs
		}
		l.connect(c, now)
	case csIdle:
		l.send(c, now)
	}
	// csConnecting: sent when the connect completes.
}

func (l *loop) wakeAt(c *conn, t int64) {
	if c.hidx >= 0 {
		l.heap.remove(c)
	}
	c.due = t
	l.heap.push(c)
}

// retire marks c as sending no more requests; it closes the socket.
func (l *loop) retire(c *conn) {
	if c.state == csDone {
		return
	}
	if c.hidx >= 0 {
		l.heap.remove(c)
	}
	l.closeConn(c)
	c.state = csDone
	c.scheduled = false
	l.active--
}

func (l *loop) connect(c *conn, now int64) {
	fd, err := unix.Socket(l.r.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		l.countErr("connect", errnoName(err))
		if (errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)) && l.r.start.IsZero() && l.setupErr == nil {
			l.setupErr = fmt.Errorf("loadgen: socket: %w: raise the open-files limit (ulimit -n) or use fewer connections", err)
		}
		l.connectFailed(c, now)
		return
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c.fd = fd
	c.gen++
	c.connAt = now
	c.connDone = 0
	c.state = csConnecting
	err = unix.Connect(fd, l.sa)
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		l.countErr("connect", errnoName(err))
		l.closeConn(c)
		l.connectFailed(c, now)
		return
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLOUT | unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.idx, Pad: c.gen}); err != nil {
		l.countErr("connect", errnoName(err))
		l.closeConn(c)
		l.connectFailed(c, now)
		return
	}
}

// connectFailed retries c's connect after a short back-off. In a closed
// loop the failed attempt uses up the request (so a refused run with a
// request count ends); in an open one the request waits.
func (l *loop) connectFailed(c *conn, now int64) {
	if c.state == csDone {
		return
	}
	c.state = csClosed
	c.retryAt = now + int64(retryConnect)
	if l.r.start.IsZero() {
		return // set-up phase: the run's first schedule retries
	}
	if l.r.pacer == nil && c.scheduled {
		c.scheduled = false
		l.schedule(c, now)
		return
	}
	l.kick(c, now)
}

func (l *loop) finishConnect(c *conn, now int64, measured bool) {
	soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	if err != nil {
		l.countErr("connect", errnoName(err))
		l.closeConn(c)
		if measured {
			l.connectFailed(c, now)
		}
		return
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.idx, Pad: c.gen}); err != nil {
		l.countErr("connect", errnoName(err))
		l.closeConn(c)
		if measured {
			l.connectFailed(c, now)
		}
		return
	}
	c.state = csIdle
	c.connDone = now
	l.st.connects++
	if measured {
		c.fresh = now >= l.r.warmupNs
		if c.fresh {
			l.record(l.st.h.Connect, now-c.connAt)
		}
		l.kick(c, now)
	}
}

func (l *loop) send(c *conn, now int64) {
	c.sentAt = now
	c.written = 0
	c.first = 0
	c.p.reset(l.r.head)
	c.p.captureServer = l.st.docLen < 0
	c.state = csSending
	c.scheduled = false
	l.st.totalSent++
	if c.recorded {
		l.st.sent++
		if l.r.pacer != nil {
			l.record(l.st.h.Lag, now-c.intended)
			if l.st.ivLag != nil {
				l.record(l.st.ivLag, now-c.intended)
			}
		}
	}
	l.write(c, now)
}

func (l *loop) write(c *conn, now int64) {
	req := l.r.req
	for c.written < len(req) {
		n, err := rawWrite(c.fd, req[c.written:])
		if err != nil {
			if errors.Is(err, unix.EAGAIN) {
				_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP, Fd: c.idx, Pad: c.gen})
				return
			}
			if errors.Is(err, unix.EINTR) {
				continue
			}
			l.countErr("write", errnoName(err))
			l.closeConn(c)
			c.k++
			l.afterFailure(c, now)
			return
		}
		c.written += n
	}
	if c.state == csSending {
		c.state = csWaiting
	}
}

func (l *loop) onEvent(c *conn, ev uint32) {
	now := l.r.now()
	switch c.state {
	case csConnecting:
		l.finishConnect(c, now, true)
		return
	case csSending:
		if ev&unix.EPOLLOUT != 0 {
			l.write(c, now)
			if c.state == csWaiting {
				_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.idx, Pad: c.gen})
			}
		}
		if ev&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP|unix.EPOLLRDHUP) != 0 && c.state != csClosed {
			l.read(c, now)
		}
	case csWaiting, csIdle:
		l.read(c, now)
	}
}

func (l *loop) read(c *conn, now int64) {
	n, err := rawRead(c.fd, l.buf)
	if err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return
		}
		if c.state == csIdle {
			// The server reset an idle connection: reopen it.
			l.closeConn(c)
			l.st.reconnects++
			l.connect(c, now)
			return
		}
		l.countErr("read", errnoName(err))
		l.closeConn(c)
		c.k++
		l.afterFailure(c, now)
		return
	}
	if now >= l.r.warmupNs {
		l.st.bytes += uint64(n)
		l.st.ivBytes += uint64(n)
	}
	if n == 0 {
		if c.state == csIdle {
			l.closeConn(c)
			l.st.reconnects++
			if !l.r.cfg.DisableKeepAlive {
				l.connect(c, now)
			}
			return
		}
		if err := c.p.eof(); err == nil && c.p.done() {
			l.complete(c, now, true)
			return
		}
		l.countErr("read", "EOF")
		l.closeConn(c)
		c.k++
		l.afterFailure(c, now)
		return
	}
	if c.state == csIdle {
		// Bytes nobody asked for.
		l.countErr("read", "EPROTO")
		l.closeConn(c)
		l.st.reconnects++
		l.connect(c, now)
		return
	}
	if c.first == 0 {
		c.first = now
	}
	used, perr := c.p.feed(l.buf[:n])
	if perr == nil && c.p.done() && used != n {
		perr = protoErr("nothing after the response (no pipelining)", l.buf[used:n])
	}
	if perr != nil {
		l.countErr("read", "EPROTO")
		l.closeConn(c)
		c.k++
		l.afterFailure(c, now)
		return
	}
	if c.p.done() {
		l.complete(c, now, false)
	}
}

// complete records a finished response and schedules the next request.
func (l *loop) complete(c *conn, now int64, closed bool) {
	st := &l.st
	if c.recorded {
		st.requests++
		st.ivRequests++
		st.bodyBytes += uint64(c.p.bodyBytes)
		if c.p.status < 200 || c.p.status > 399 {
			st.errStatus++
			st.ivErrors++
		}
		l.record(st.h.Latency, now-c.intended)
		l.record(st.h.Service, now-c.sentAt)
		if st.ivLatency != nil {
			l.record(st.ivLatency, now-c.intended)
			l.record(st.ivService, now-c.sentAt)
		}
		waitFrom := c.sentAt
		l.record(st.h.Waiting, c.first-waitFrom)
		from := c.sentAt
		if c.connDone > from {
			from = c.connDone
		}
		l.record(st.h.Processing, now-from)
		if !c.fresh {
			// A reused connection: ab records a connect time of 0.
			l.record(st.h.Connect, 0)
		}
		if st.docLen < 0 {
			st.docLen = c.p.bodyBytes
			st.server = c.p.server
		} else if c.p.bodyBytes != st.docLen {
			st.lengthMismatch++
		}
	}
	c.fresh = false
	c.k++
	mustClose := closed || c.p.mustClose() || l.r.cfg.DisableKeepAlive
	if !mustClose && c.recorded {
		st.keepAliveResp++
	}
	if mustClose {
		l.closeConn(c)
		if !l.r.cfg.DisableKeepAlive && !l.r.stop.Load() {
			l.st.reconnects++
			l.connect(c, now)
		}
	} else {
		c.state = csIdle
	}
	l.schedule(c, now)
}

// afterFailure moves on to c's next request after a failed one.
func (l *loop) afterFailure(c *conn, now int64) {
	c.scheduled = false
	if c.state == csDone {
		return
	}
	if !l.r.cfg.DisableKeepAlive && !l.r.stop.Load() {
		l.st.reconnects++
		l.connect(c, now)
	}
	if c.state == csDone || c.scheduled {
		return
	}
	l.schedule(c, now)
}

func (l *loop) closeConn(c *conn) {
	if c.fd >= 0 {
		unix.Close(c.fd) // closing removes it from the epoll set
		c.fd = -1
	}
	if c.state != csDone {
		c.state = csClosed
	}
	c.gen++
}

func (l *loop) record(h *hdrhistogram.Histogram, ns int64) {
	if ns < 0 {
		ns = 0
	}
	if err := h.RecordValue((ns + 500) / 1000); err != nil {
		l.st.dropped++
	}
}

func (l *loop) countErr(class, errno string) {
	st := &l.st
	switch class {
	case "connect":
		st.errConnect++
	case "read":
		st.errRead++
	case "write":
		st.errWrite++
	case "timeout":
		st.errTimeout++
	}
	st.ivErrors++
	st.errnos[errnoKey{class, errno}]++
}

func errnoName(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		if name := unix.ErrnoName(en); name != "" {
			return name
		}
		return fmt.Sprintf("errno %d", int(en))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "ETIMEDOUT"
	}
	return err.Error()
}

// connHeap is a min-heap of connections by due time.
type connHeap []*conn

func (h *connHeap) push(c *conn) {
	c.hidx = len(*h)
	*h = append(*h, c)
	h.up(c.hidx)
}

func (h *connHeap) pop() *conn {
	old := *h
	c := old[0]
	n := len(old) - 1
	old[0] = old[n]
	old[0].hidx = 0
	old[n] = nil
	*h = old[:n]
	if n > 0 {
		h.down(0)
	}
	c.hidx = -1
	return c
}

func (h *connHeap) remove(c *conn) {
	i := c.hidx
	old := *h
	n := len(old) - 1
	if i != n {
		old[i] = old[n]
		old[i].hidx = i
	}
	old[n] = nil
	*h = old[:n]
	if i < n {
		h.down(i)
		h.up(i)
	}
	c.hidx = -1
}

func (h connHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].due <= h[i].due {
			break
		}
		h[p], h[i] = h[i], h[p]
		h[p].hidx, h[i].hidx = p, i
		i = p
	}
}

func (h connHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].due < h[l].due {
			m = r
		}
		if h[i].due <= h[m].due {
			return
		}
		h[i], h[m] = h[m], h[i]
		h[i].hidx, h[m].hidx = i, m
		i = m
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
