// An event loop: one OS thread owning its connections on epoll, waking for
// due sends, socket events and its periodic tick.

package loadgen

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

const (
	tick          = 100 * time.Millisecond // rate samples, timeout scan, stop checks
	retryConnect  = 10 * time.Millisecond  // back-off after a failed connect
	readBufSize   = 64 << 10
	timerfdMarker = -1
)

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
	tls      *tlsState // https only
	draining bool      // the window has ended: no more sends
	scan     []int     // sendAt's stack
	// The default send batching (sendPolicy): the current window (ns),
	// the loop's smoothed load, and its thread's CPU time and the clock at
	// the last tick.
	window  int64
	load    float64
	cpuNs   int64
	cpuWall int64
	reused  int64 // recorded requests on reused connections: a connect time of 0 each
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
	if err := l.setupWait(); err != nil {
		l.setupErr = err
		ready.Done()
		return
	}
	if l.r.tlsCfg != nil {
		l.tls = &tlsState{}
		l.tls.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
		if err != nil {
			l.setupErr = fmt.Errorf("loadgen: eventfd: %w", err)
			ready.Done()
			return
		}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.tls.efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: handshakeMarker}); err != nil {
			l.setupErr = fmt.Errorf("loadgen: epoll_ctl eventfd: %w", err)
			ready.Done()
			return
		}
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
	sched := readThreadSched()
	l.cpuNs, l.cpuWall = threadCPU(), now
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
	l.st.sched = readThreadSched().since(sched)
	if l.reused > 0 {
		if err := l.st.h.Connect.RecordValues(0, l.reused); err != nil {
			l.st.dropped += l.reused
		}
	}
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
			if c.state == csConnecting || c.state == csHandshaking {
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
			if ev.Fd == handshakeMarker {
				l.finishHandshakes(false)
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
		if c.state == csSending || c.state == csWaiting {
			l.st.incomplete++
		}
		l.closeConn(c)
	}
	l.waitHandshakes()
	if l.tls != nil && l.tls.efd > 0 {
		unix.Close(l.tls.efd)
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
		// Send everything that is due; with a send window, once the
		// window's last send is due (also when the loop is awake for
		// responses, so that a busy loop batches as a sleeping one does).
		if len(l.heap) > 0 && l.heap[0].due <= now && (l.window == 0 || l.sendAt() <= now) {
			for len(l.heap) > 0 && l.heap[0].due <= now {
				c := l.heap.pop()
				l.kick(c, now)
			}
		}
		if l.active == 0 {
			l.flushInterval(now, true)
			return
		}
		wake := l.nextTick
		if len(l.heap) > 0 {
			if w := l.sendAt(); w < wake {
				wake = w
			}
		}
		n, err := l.wait(wake)
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
			if ev.Fd == handshakeMarker {
				l.finishHandshakes(true)
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

// sendAt is when to wake for the next due sends: the first one's due
// time plus a fixed slack, or with the default policy's window the latest
// due time within the window after the first (all of them then leave in
// one wake-up, none later than the window).
func (l *loop) sendAt() int64 {
	h := l.heap
	first := h[0].due
	if l.r.slack > 0 {
		return first + l.r.slack
	}
	if l.window == 0 {
		return first
	}
	limit, last := first+l.window, first
	// Children are due no earlier than their parent: visit only the
	// entries within the window.
	st := append(l.scan[:0], 0)
	for len(st) > 0 {
		i := st[len(st)-1]
		st = st[:len(st)-1]
		if h[i].due > limit {
			continue
		}
		last = max(last, h[i].due)
		if c := 2*i + 1; c < len(h) {
			st = append(st, c)
			if c+1 < len(h) {
				st = append(st, c+1)
			}
		}
	}
	l.scan = st
	return last
}

// finished reports whether the loop must stop now.
func (l *loop) finished(now int64) bool {
	r := l.r
	if r.stop.Load() || now >= r.stopNs.Load() {
		l.flushInterval(now, true)
		return true
	}
	if now >= r.endNs && !l.draining {
		if r.cfg.NoDrain {
			l.flushInterval(now, true)
			return true
		}
		l.startDrain(now)
	}
	return false
}

// startDrain ends the measured window: connections without a request in
// flight stop; the others finish it (or time out) and then stop.
func (l *loop) startDrain(now int64) {
	// What fell due before the end leaves now, however late this
	// wake-up (its lag is recorded); a backlog waiting for a busy
	// connection does not.
	for len(l.heap) > 0 && l.heap[0].due < l.r.endNs {
		l.kick(l.heap.pop(), now)
	}
	l.draining = true
	for _, c := range l.conns {
		if c.state != csSending && c.state != csWaiting {
			l.retire(c)
		}
	}
	l.flushInterval(now, true)
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
	l.adapt(now)
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

// setupWait prepares the loop's sleep: a timerfd in the epoll set, armed
// for the next wake-up. (epoll_pwait2 with a nanosecond timeout, one system
// call per sleep instead of up to three, was measured and not kept: it
// arms and cancels an hrtimer on every wait, also when a response ends
// the sleep, and cost 1.5x the CPU per request at --slack 0; PERF.md.)
func (l *loop) setupWait() error {
	var err error
	l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("loadgen: timerfd_create: %w", err)
	}
	// Edge-triggered: each expiry wakes epoll once; re-arming resets it,
	// so the timerfd never needs a read.
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.tfd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: timerfdMarker}); err != nil {
		return fmt.Errorf("loadgen: epoll_ctl timerfd: %w", err)
	}
	return nil
}

// wait returns the ready events, sleeping until one is ready or the clock
// reaches wake (ns from the start) when none is.
func (l *loop) wait(wake int64) (int, error) {
	r := l.r
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
	return n, err
}

// adapt folds the loop's load over the last tick (its thread's CPU time
// over the clock) into its running value and, under the default send
// policy, sets the send window from it.
func (l *loop) adapt(now int64) {
	cpu := threadCPU()
	if wall := now - l.cpuWall; wall > 0 && cpu >= 0 && l.cpuNs >= 0 {
		l.load = smoothLoad(l.load, float64(cpu-l.cpuNs)/float64(wall))
	}
	l.cpuNs, l.cpuWall = cpu, now
	r := l.r
	if !r.adaptive || r.pacer == nil {
		return
	}
	var iv time.Duration
	if rate := r.pacer.Rate(time.Duration(now)); rate > 0 {
		iv = time.Duration(float64(r.nconns) / rate * 1e9)
	}
	l.window = int64(r.policy.window(l.load, iv))
}
