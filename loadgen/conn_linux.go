// A connection's life: connect, send, read, complete or fail, reconnect.

package loadgen

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// Connection states.
const (
	csClosed      uint8 = iota // no socket
	csConnecting               // non-blocking connect in progress
	csIdle                     // connected, no request outstanding
	csSending                  // request partly written
	csWaiting                  // request written, response not complete
	csDone                     // this connection sends no more requests
	csHandshaking              // TLS handshake running in its goroutine, which owns fd
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
	readyAt   int64 // when the connection was last free to send: its connect done, or its last response ended
	connAt    int64 // connect started
	first     int64 // first response byte
	written   int
	due       int64
	hidx      int
	recorded  bool // the current request counts (not warm-up)
	fresh     bool // connected for the current request: its connect time is recorded
	p         respParser
	tc        *tls.Conn // https: the connection's TLS state once its handshake is done
	req       []byte    // the request being sent
	ti        int       // its target (Config.Targets), 0 without targets
	sio       *sockIO
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
	if l.tls != nil {
		l.startHandshake(c, now)
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
	l.connected(c, now, measured)
}

// connected makes c ready to send: its connect (and TLS handshake) is
// done, and its time is recorded.
func (l *loop) connected(c *conn, now int64, measured bool) {
	c.state = csIdle
	c.readyAt = now
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
	// Connection i sends target i mod n first, then the next one per
	// request: request k of connection gidx is target (gidx+k) mod n.
	if n := uint64(len(l.r.reqs)); n > 1 {
		c.ti = int((c.gidx + c.k) % n)
	}
	rq := &l.r.reqs[c.ti]
	c.req = rq.b
	c.p.reset(rq.head)
	c.p.captureServer = l.st.docLen < 0
	c.state = csSending
	c.scheduled = false
	l.st.totalSent++
	if c.recorded {
		l.st.sent++
		if l.r.pacer != nil {
			l.record(l.st.h.Lag, now-c.intended)
			// The generator's own part: how long after both the due
			// time and the connection's readiness it sent.
			l.record(l.st.h.OwnLag, now-max(c.intended, c.readyAt))
			if l.st.ivLag != nil {
				l.record(l.st.ivLag, now-c.intended)
			}
		}
	}
	l.write(c, now)
}

func (l *loop) write(c *conn, now int64) {
	req := c.req
	if c.tc != nil {
		l.writeTLS(c, now)
		return
	}
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

// writeTLS encrypts the request once and writes the records; what the
// socket does not take waits for EPOLLOUT.
func (l *loop) writeTLS(c *conn, now int64) {
	var err error
	if c.written == 0 {
		_, err = c.tc.Write(c.req)
		c.written = len(c.req)
	}
	done := false
	if err == nil {
		done, err = c.sio.flush()
	}
	if err != nil {
		l.countErr("write", errnoName(err))
		l.closeConn(c)
		c.k++
		l.afterFailure(c, now)
		return
	}
	if !done {
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP, Fd: c.idx, Pad: c.gen})
		return
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
	if c.tc == nil {
		l.readOnce(c, now)
		return
	}
	// TLS: a read may leave whole records in crypto/tls's buffer, which
	// epoll does not see; read on until the socket is empty or this
	// response is complete.
	k := c.k
	for l.readOnce(c, now) && c.k == k && c.tc != nil {
	}
}

// sockRead reads what is ready on c: decrypted for https. A read of 0
// bytes with no error is the end of the stream.
func (l *loop) sockRead(c *conn) (int, error) {
	if c.tc == nil {
		return rawRead(c.fd, l.buf)
	}
	n, err := c.tc.Read(l.buf)
	switch {
	case n > 0:
		return n, nil
	case errors.Is(err, errWouldBlock):
		return -1, unix.EAGAIN
	case errors.Is(err, io.EOF):
		return 0, nil
	}
	return -1, err
}

// readOnce reads once from c and handles what came; it reports whether
// anything did.
func (l *loop) readOnce(c *conn, now int64) bool {
	n, err := l.sockRead(c)
	if err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return false
		}
		if c.state == csIdle {
			// The server reset an idle connection: reopen it.
			l.closeConn(c)
			l.st.reconnects++
			l.connect(c, now)
			return true
		}
		l.countErr("read", errnoName(err))
		l.closeConn(c)
		c.k++
		l.afterFailure(c, now)
		return true
	}
	if now >= l.r.warmupNs && now < l.r.endNs {
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
			return true
		}
		if err := c.p.eof(); err == nil && c.p.done() {
			l.complete(c, now, true)
			return true
		}
		l.countErr("read", "EOF")
		l.closeConn(c)
		c.k++
		l.afterFailure(c, now)
		return true
	}
	if c.state == csIdle {
		// Bytes nobody asked for.
		l.countErr("read", "EPROTO")
		l.closeConn(c)
		l.st.reconnects++
		l.connect(c, now)
		return true
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
		return true
	}
	if c.p.done() {
		l.complete(c, now, false)
	}
	return true
}

// complete records a finished response and schedules the next request.
func (l *loop) complete(c *conn, now int64, closed bool) {
	st := &l.st
	if c.recorded && now >= l.r.endNs {
		// In the drain: counted apart.
		st.drainRequests++
		if !l.r.ok.Has(c.p.status) {
			st.drainErrors++
		}
		l.record(st.drainLatency, now-c.intended)
	} else if c.recorded {
		st.requests++
		st.ivRequests++
		st.bodyBytes += uint64(c.p.bodyBytes)
		st.statuses.add(c.p.status)
		ok := l.r.ok.Has(c.p.status)
		if !ok {
			st.errStatus++
			st.ivErrors++
		}
		l.record(st.h.Latency, now-c.intended)
		if st.targets != nil {
			ts := &st.targets[c.ti]
			ts.requests++
			ts.statuses.add(c.p.status)
			if !ok {
				ts.errors++
			}
			l.record(ts.latency, now-c.intended)
		}
		l.record(st.h.Service, now-c.sentAt)
		if st.ivLatency != nil {
			l.record(st.ivLatency, now-c.intended)
			l.record(st.ivService, now-c.sentAt)
		}
		l.record(st.h.Waiting, c.first-c.sentAt)
		// ab's Processing (completion minus the later of the connect's
		// end and the send) is the service time: a request is sent only
		// once its connection is up. The engine copies Service into it
		// at the end instead of recording every request twice.
		if !c.fresh {
			// A reused connection: ab records a connect time of 0; the
			// zeros are recorded at the end, all at once.
			l.reused++
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
		if !l.r.cfg.DisableKeepAlive && !l.r.stop.Load() && !l.draining {
			l.st.reconnects++
			l.connect(c, now)
		}
	} else {
		c.state = csIdle
		c.readyAt = now
	}
	l.schedule(c, now)
}

// afterFailure moves on to c's next request after a failed one.
func (l *loop) afterFailure(c *conn, now int64) {
	c.scheduled = false
	if l.st.targets != nil && c.recorded && now < l.r.endNs {
		l.st.targets[c.ti].errors++
	}
	if c.state == csDone {
		return
	}
	if !l.r.cfg.DisableKeepAlive && !l.r.stop.Load() && !l.draining {
		l.st.reconnects++
		l.connect(c, now)
	}
	if c.state == csDone || c.scheduled {
		return
	}
	l.schedule(c, now)
}

func (l *loop) closeConn(c *conn) {
	if c.state == csHandshaking {
		// The handshake's goroutine owns the socket: its report closes it.
		c.fd = -1
	}
	if c.fd >= 0 {
		unix.Close(c.fd) // closing removes it from the epoll set
		c.fd = -1
	}
	c.tc, c.sio = nil, nil
	if c.state != csDone {
		c.state = csClosed
	}
	c.gen++
}
