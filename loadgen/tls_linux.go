// TLS for https URLs: a handshake runs in a goroutine of its own (crypto/tls
// has no non-blocking handshake) while the event loop carries on; once it
// is done, the loop reads and writes records through the same
// non-blocking socket.

package loadgen

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// handshakeMarker is the epoll user data of a loop's eventfd, which a
// finished handshake writes to wake the loop.
const handshakeMarker = -2

// errWouldBlock is what a socket read returns when no data is ready; it is
// temporary, so crypto/tls keeps the connection usable and returns it.
var errWouldBlock = wouldBlockError{}

type wouldBlockError struct{}

func (wouldBlockError) Error() string   { return "loadgen: read would block" }
func (wouldBlockError) Timeout() bool   { return false }
func (wouldBlockError) Temporary() bool { return true }

var errHandshakeTimeout = errors.New("loadgen: TLS handshake timed out")

// sockIO is the net.Conn a tls.Conn runs over: the connection's
// non-blocking socket. While blocking (the handshake goroutine) it waits
// with poll(2) up to its deadline; afterwards a read that finds no data
// returns errWouldBlock, and a write the socket does not take at once is
// kept in pending for the loop to flush when the socket is writable.
type sockIO struct {
	fd       int
	blocking bool
	deadline time.Time
	pending  []byte
	remote   net.Addr
}

func (s *sockIO) wait(events int16) error {
	d := time.Until(s.deadline)
	if d <= 0 {
		return errHandshakeTimeout
	}
	ms := int(d / time.Millisecond)
	if ms < 1 {
		ms = 1
	}
	_, err := unix.Poll([]unix.PollFd{{Fd: int32(s.fd), Events: events}}, ms)
	if err != nil && !errors.Is(err, unix.EINTR) {
		return err
	}
	return nil
}

func (s *sockIO) Read(p []byte) (int, error) {
	for {
		n, err := rawRead(s.fd, p)
		switch {
		case err == nil && n == 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EAGAIN):
			return 0, err
		case !s.blocking:
			return 0, errWouldBlock
		}
		if err := s.wait(unix.POLLIN); err != nil {
			return 0, err
		}
	}
}

func (s *sockIO) Write(p []byte) (int, error) {
	if !s.blocking {
		if len(s.pending) == 0 {
			n, err := rawWrite(s.fd, p)
			if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
				return 0, err
			}
			if n > 0 {
				p = p[n:]
			}
		}
		s.pending = append(s.pending, p...)
		return len(p), nil
	}
	total := len(p)
	for len(p) > 0 {
		n, err := rawWrite(s.fd, p)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if !errors.Is(err, unix.EAGAIN) {
				return total - len(p), err
			}
			if err := s.wait(unix.POLLOUT); err != nil {
				return total - len(p), err
			}
			continue
		}
		p = p[n:]
	}
	return total, nil
}

// flush writes what Write kept; done is false while some is left (the
// socket is full: wait for EPOLLOUT).
func (s *sockIO) flush() (done bool, err error) {
	for len(s.pending) > 0 {
		n, err := rawWrite(s.fd, s.pending)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				return false, nil
			}
			return false, err
		}
		s.pending = s.pending[:copy(s.pending, s.pending[n:])]
	}
	return true, nil
}

func (s *sockIO) Close() error                       { return nil } // the loop closes the socket
func (s *sockIO) LocalAddr() net.Addr                { return s.remote }
func (s *sockIO) RemoteAddr() net.Addr               { return s.remote }
func (s *sockIO) SetDeadline(t time.Time) error      { s.deadline = t; return nil }
func (s *sockIO) SetReadDeadline(t time.Time) error  { s.deadline = t; return nil }
func (s *sockIO) SetWriteDeadline(t time.Time) error { s.deadline = t; return nil }

// handshake is one finished TLS handshake, reported to its loop.
type handshake struct {
	c   *conn
	gen int32
	fd  int
	tc  *tls.Conn
	io  *sockIO
	err error
}

// tlsState is a loop's share of an https run.
type tlsState struct {
	efd     int // eventfd: a handshake finished
	mu      sync.Mutex
	done    []handshake
	running sync.WaitGroup
}

// newTLSConfig is the client configuration of an https run: the URL's
// host as SNI and for verification (unless insecure), TLS 1.2 or 1.3, and
// one session cache for every connection so reconnects resume.
func newTLSConfig(cfg *Config, t target) *tls.Config {
	return &tls.Config{
		ServerName:         t.host,
		InsecureSkipVerify: cfg.Insecure,
		MinVersion:         tls.VersionTLS12,
		ClientSessionCache: tls.NewLRUClientSessionCache(cfg.Connections + 1),
	}
}

// startHandshake hands c's connected socket to a goroutine that runs the
// TLS handshake. The socket leaves the epoll set meanwhile; the goroutine
// owns it until it reports back through the eventfd.
func (l *loop) startHandshake(c *conn, now int64) {
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	c.state = csHandshaking
	sio := &sockIO{fd: c.fd, blocking: true, deadline: time.Now().Add(l.r.cfg.Timeout), remote: l.r.remote}
	h := handshake{c: c, gen: c.gen, fd: c.fd, io: sio}
	ts := l.tls
	ts.running.Add(1)
	go func() {
		defer ts.running.Done()
		h.tc = tls.Client(sio, l.r.tlsCfg)
		h.err = h.tc.HandshakeContext(context.Background())
		ts.mu.Lock()
		ts.done = append(ts.done, h)
		ts.mu.Unlock()
		var one = [8]byte{1}
		_, _ = unix.Write(ts.efd, one[:])
	}()
}

// finishHandshakes takes the handshakes that finished: a connection whose
// handshake succeeded joins the epoll set ready to send; a failure is a TLS
// error. A handshake whose connection was closed meanwhile only closes
// its socket.
func (l *loop) finishHandshakes(measured bool) {
	var buf [8]byte
	_, _ = unix.Read(l.tls.efd, buf[:])
	l.tls.mu.Lock()
	done := l.tls.done
	l.tls.done = nil
	l.tls.mu.Unlock()
	for _, h := range done {
		c := h.c
		if c.gen != h.gen || c.fd != h.fd || c.state != csHandshaking {
			unix.Close(h.fd)
			continue
		}
		now := l.r.now()
		if h.err != nil {
			l.countErr("tls", tlsErrName(h.err))
			l.closeConn(c)
			if measured {
				l.connectFailed(c, now)
			}
			continue
		}
		h.io.blocking = false
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.idx, Pad: c.gen}); err != nil {
			l.countErr("tls", errnoName(err))
			l.closeConn(c)
			if measured {
				l.connectFailed(c, now)
			}
			continue
		}
		c.tc, c.sio = h.tc, h.io
		st := h.tc.ConnectionState()
		l.st.handshakes++
		if st.DidResume {
			l.st.resumed++
		}
		if l.st.tlsVersion == "" {
			l.st.tlsVersion = tls.VersionName(st.Version)
			l.st.tlsCipher = tls.CipherSuiteName(st.CipherSuite)
		}
		l.connected(c, now, measured)
	}
}

// waitHandshakes waits for the handshakes still running (each ends by its
// deadline) and closes their sockets.
func (l *loop) waitHandshakes() {
	if l.tls == nil {
		return
	}
	l.tls.running.Wait()
	for _, h := range l.tls.done {
		if h.c.fd != h.fd || h.c.state != csHandshaking {
			unix.Close(h.fd)
		}
	}
	l.tls.done = nil
}

// tlsErrName names a handshake failure for Errors.Errnos.
func tlsErrName(err error) string {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var alert tls.AlertError
	var rh tls.RecordHeaderError
	switch {
	case errors.Is(err, errHandshakeTimeout):
		return "ETIMEDOUT"
	case errors.As(err, &ua):
		return "certificate: unknown authority"
	case errors.As(err, &hn):
		return "certificate: wrong host"
	case errors.As(err, &ci):
		return "certificate: invalid"
	case errors.As(err, &cv):
		return "certificate"
	case errors.As(err, &alert):
		return fmt.Sprintf("alert: %s", alert.Error())
	case errors.As(err, &rh):
		return "not TLS"
	case errors.Is(err, io.EOF):
		return "EOF"
	}
	return errnoName(err)
}
