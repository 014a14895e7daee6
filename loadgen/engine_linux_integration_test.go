package loadgen_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// rawServer serves each connection on 127.0.0.1 with handle, which gets
// the connection and a reader positioned at the first request. It is
// closed, with its connections, in t.Cleanup.
func rawServer(t *testing.T, handle func(c *net.TCPConn, r *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c.(*net.TCPConn), bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		// No wg.Add may run once wg.Wait has begun: wait for the accept
		// loop to end first.
		<-accepting
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/"
}

// readRequest consumes one request head (the requests loadgen sends have
// no body unless configured).
func readRequest(r *bufio.Reader) bool {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return false
		}
		if line == "\r\n" {
			return true
		}
	}
}

func errnoCount(res *loadgen.Result, class, errno string) uint64 {
	for _, e := range res.Errors.Errnos {
		if e.Class == class && e.Errno == errno {
			return e.Count
		}
	}
	return 0
}

func TestIntegrationServerClosesAfterEachResponse(t *testing.T) {
	url := rawServer(t, func(c *net.TCPConn, r *bufio.Reader) {
		if readRequest(r) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
		}
	})
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Connections: 4, Requests: 200})
	require.NoError(t, err)
	assert.Equal(t, uint64(200), res.Requests)
	assert.Zero(t, res.Errors.Socket(), "%+v", res.Errors)
	assert.GreaterOrEqual(t, res.Reconnects, uint64(196), "every Connection: close is followed by a reconnect")
	assert.Zero(t, res.KeepAliveResponses)
}

func TestIntegrationResetMidBody(t *testing.T) {
	url := rawServer(t, func(c *net.TCPConn, r *bufio.Reader) {
		if readRequest(r) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten.."))
			time.Sleep(5 * time.Millisecond)
			c.SetLinger(0) // close with RST
		}
	})
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Connections: 2, Requests: 20})
	require.NoError(t, err)
	assert.Zero(t, res.Requests)
	assert.Equal(t, uint64(20), res.Errors.Read, "%+v", res.Errors)
	assert.Equal(t, uint64(20), errnoCount(res, "read", "ECONNRESET")+errnoCount(res, "read", "EOF"), "%+v", res.Errors.Errnos)
	assert.NotZero(t, errnoCount(res, "read", "ECONNRESET"), "%+v", res.Errors.Errnos)
}

func TestIntegrationServerNeverAnswers(t *testing.T) {
	url := rawServer(t, func(c *net.TCPConn, r *bufio.Reader) {
		readRequest(r)
		r.ReadByte() // hold until the client or the test closes
	})
	start := time.Now()
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Connections: 2, Duration: 700 * time.Millisecond, Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Zero(t, res.Requests)
	assert.GreaterOrEqual(t, res.Errors.Timeout, uint64(2), "%+v", res.Errors)
	assert.Equal(t, res.Errors.Timeout, errnoCount(res, "timeout", "ETIMEDOUT"))
}

func TestIntegrationConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: "http://" + addr + "/", Connections: 3, Requests: 30})
	require.NoError(t, err)
	assert.Zero(t, res.Requests)
	assert.GreaterOrEqual(t, res.Errors.Connect, uint64(30))
	assert.Equal(t, res.Errors.Connect, errnoCount(res, "connect", "ECONNREFUSED"), "%+v", res.Errors.Errnos)
	var buf strings.Builder
	require.NoError(t, report.WriteWrk(&buf, res, report.WrkOptions{}))
	assert.Contains(t, buf.String(), "  Socket errors: connect ")
}

func TestIntegrationKeepAliveOff(t *testing.T) {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: hello.URL, Connections: 4, Requests: 300, DisableKeepAlive: true})
	require.NoError(t, err)
	assert.Equal(t, uint64(300), res.Requests)
	assert.Equal(t, uint64(300), res.Connects, "a new connection per request")
	assert.Equal(t, int64(300), res.Histograms.Connect.TotalCount(), "connect time recorded per request")
	assert.Zero(t, res.KeepAliveResponses)
	assert.Equal(t, int64(len(loadgen.HelloWorldPage)), res.DocumentLength)
	assert.Equal(t, uint64(300*len(loadgen.HelloWorldPage)), res.BodyBytes)
	// Total (from connect start) covers connect and processing.
	assert.GreaterOrEqual(t, res.Histograms.Latency.Mean(), res.Histograms.Processing.Mean())
}

func TestIntegrationStatusErrorsAndHEAD(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "test/1")
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", "1234")
			return
		}
		http.Error(w, "nope", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: srv.URL + "/x?y=1", Connections: 2, Requests: 50})
	require.NoError(t, err)
	assert.Equal(t, uint64(50), res.Errors.Status)
	assert.Equal(t, "test/1", res.Server)
	res, err = loadgen.Run(context.Background(), loadgen.Config{URL: srv.URL, Method: "HEAD", Connections: 2, Requests: 50})
	require.NoError(t, err)
	assert.Equal(t, uint64(50), res.Requests)
	assert.Zero(t, res.Errors.Status)
	assert.Zero(t, res.BodyBytes, "HEAD responses have no body whatever Content-Length says")
}

func TestIntegrationHeadersAndBody(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(b)
		got.Store(r.Method + " " + r.Host + " " + r.Header.Get("X-Test") + " " + string(b))
	}))
	t.Cleanup(srv.Close)
	_, err := loadgen.Run(context.Background(), loadgen.Config{
		URL: srv.URL, Method: "POST", Body: []byte("payload"), Connections: 1, Requests: 3,
		Headers: []loadgen.Header{{Name: "X-Test", Value: "yes"}, {Name: "Host", Value: "example.test"}},
	})
	require.NoError(t, err)
	assert.Equal(t, "POST example.test yes payload", got.Load())
}

func TestIntegrationWarmupIntervalsAndRate(t *testing.T) {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	var mu sync.Mutex
	var snaps []loadgen.Snapshot
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL: hello.URL, Connections: 8, Rate: 500, Duration: 1200 * time.Millisecond,
		Warmup: 300 * time.Millisecond, Interval: 300 * time.Millisecond,
		OnInterval: func(s loadgen.Snapshot) {
			mu.Lock()
			defer mu.Unlock()
			snaps = append(snaps, loadgen.Snapshot{Index: s.Index, Start: s.Start, End: s.End, Requests: s.Requests, TotalRequests: s.TotalRequests})
		},
	})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(snaps), 3)
	for i, s := range snaps {
		assert.Equal(t, i, s.Index)
		assert.Less(t, s.Start, s.End)
	}
	last := snaps[len(snaps)-1]
	assert.Equal(t, res.Requests, last.TotalRequests, "the intervals add up to the run")
	assert.InDelta(t, 600, float64(res.Requests), 12, "500/s for 1.2 s after a warm-up that is not counted")
	assert.InDelta(t, 500, res.OfferedRate, 5)
	assert.Zero(t, res.Missed)
	assert.Equal(t, res.Requests, uint64(res.Histograms.Latency.TotalCount()))
	// Lag is recorded per send: it also counts the requests sent in the
	// window that completed in the drain.
	assert.Equal(t, res.Requests+res.Drain.Requests, uint64(res.Histograms.Lag.TotalCount()))
}

func TestIntegrationCancel(t *testing.T) {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res, err := loadgen.Run(ctx, loadgen.Config{URL: hello.URL, Connections: 4, Rate: 1000, Duration: 30 * time.Second})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.NotZero(t, res.Requests)
}

func TestIntegrationManyConnections(t *testing.T) {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: hello.URL, Connections: 1000, Threads: 2, Rate: 1000, Duration: 1500 * time.Millisecond, Timeout: 5 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, uint64(1000), res.Connects)
	assert.Zero(t, res.Errors.Socket(), "%+v", res.Errors)
}

// TestIntegrationRaisesOpenFiles lowers the soft RLIMIT_NOFILE below what
// the connections need and checks Run raises it; the limit is restored.
func TestIntegrationRaisesOpenFiles(t *testing.T) {
	testutil.RequireHostTests(t)
	var orig unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &orig))
	if orig.Max < 2048 {
		t.Skipf("hard RLIMIT_NOFILE %d too low for the test", orig.Max)
	}
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_NOFILE, &orig) })
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 256, Max: orig.Max}))
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: hello.URL, Connections: 600, Requests: 1200})
	require.NoError(t, err)
	assert.Equal(t, uint64(256), res.OpenFiles.Before)
	assert.Equal(t, orig.Max, res.OpenFiles.After)
	assert.Equal(t, uint64(600), res.Connects)
}

func TestConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		cfg  loadgen.Config
		want string
	}{
		{loadgen.Config{}, "no URL"},
		{loadgen.Config{URL: "ftp://127.0.0.1/"}, "want an http:// or https:// URL"},
		{loadgen.Config{URL: "http://127.0.0.1:99999/"}, "want 1-65535"},
		{loadgen.Config{URL: "http://127.0.0.1/", Rate: -1}, "rate -1"},
		{loadgen.Config{URL: "http://127.0.0.1/", Rate: 10, Requests: 5}, "bounded by its duration"},
		{loadgen.Config{URL: "http://127.0.0.1/", Connections: -3}, "connections -3"},
		{loadgen.Config{URL: "http://127.0.0.1/", Headers: []loadgen.Header{{Name: "Bad Name", Value: "x"}}}, "header"},
		{loadgen.Config{URL: "http://127.0.0.1/", Pacer: loadgen.Steps()}, "at least one step"},
	} {
		_, err := loadgen.Run(context.Background(), tt.cfg)
		require.Error(t, err, "%+v", tt.cfg)
		assert.Contains(t, err.Error(), tt.want)
		assert.True(t, strings.HasPrefix(err.Error(), "loadgen: "), err.Error())
	}
	assert.False(t, errors.Is(nil, loadgen.ErrOpenFiles))
}

// TestIntegrationNoPerRequestAllocation checks the engine allocates nothing
// per request: the run's allocations stay bounded whatever the request
// count. The server answers from a fixed buffer so it allocates nothing
// per request either.
func TestIntegrationNoPerRequestAllocation(t *testing.T) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
	url := rawServer(t, func(c *net.TCPConn, r *bufio.Reader) {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			// One request per read is what loadgen's single small write
			// produces on loopback; count the request heads to be sure.
			for i := 0; i+3 < n; i++ {
				if buf[i] == '\r' && buf[i+1] == '\n' && buf[i+2] == '\r' && buf[i+3] == '\n' {
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}
		}
	})
	mallocs := func(n int64) uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Connections: 8, Requests: n})
		require.NoError(t, err)
		runtime.ReadMemStats(&m1)
		require.Equal(t, uint64(n), res.Requests)
		return m1.Mallocs - m0.Mallocs
	}
	small, large := mallocs(2000), mallocs(20000)
	t.Logf("allocations: %d for 2000 requests, %d for 20000", small, large)
	assert.Less(t, float64(large), float64(small)+0.05*18000, "more than 1 allocation per 20 extra requests")
}

// TestIntegrationSlack: with a slack the loop sleeps past intended times to
// batch sends, and the delay shows in the lag histogram (never hidden).
func TestIntegrationSlack(t *testing.T) {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: hello.URL, Connections: 4, Threads: 1, Rate: 500, Duration: time.Second, Slack: 4 * time.Millisecond})
	require.NoError(t, err)
	t.Logf("requests %d sent %d missed %d drain %+v", res.Requests, res.Sent, res.Missed, res.Drain)
	assert.InDelta(t, 500, float64(res.Requests), 10)
	// Sends wait for the one due 4 ms later: on average half the slack.
	assert.GreaterOrEqual(t, res.Histograms.Lag.Mean(), 1000.0, "lag mean %.0f us", res.Histograms.Lag.Mean())
	assert.GreaterOrEqual(t, res.Histograms.Latency.Mean(), res.Histograms.Service.Mean()+1000)
}

// TestIntegrationConnectTimesOnePerRequest: every completed request has
// exactly one connect time (0 on a reused connection), also when the
// server closes after every third response and the connection is reopened.
func TestIntegrationConnectTimesOnePerRequest(t *testing.T) {
	url := rawServer(t, func(c *net.TCPConn, r *bufio.Reader) {
		for i := 0; i < 3 && readRequest(r); i++ {
			hdr := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
			if i == 2 {
				hdr = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
			}
			if _, err := c.Write([]byte(hdr)); err != nil {
				return
			}
		}
	})
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Connections: 2, Requests: 300})
	require.NoError(t, err)
	require.Equal(t, uint64(300), res.Requests)
	assert.Equal(t, int64(300), res.Histograms.Connect.TotalCount())
	assert.Equal(t, int64(300), res.Histograms.Processing.TotalCount(), "one processing time per request")
	assert.Equal(t, res.Histograms.Service.Mean(), res.Histograms.Processing.Mean(), "processing is the service time: sent on a connection already up")
	assert.Equal(t, uint64(200), res.KeepAliveResponses, "two of every three responses keep the connection")
	assert.GreaterOrEqual(t, res.Reconnects, uint64(98))
}
