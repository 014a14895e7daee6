package loadgen

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestEpollPwait2Timeout checks the loops' sleep: with nothing ready,
// epoll_pwait2 returns no events, never before its nanosecond timeout;
// with a zero timeout it returns at once.
func TestEpollPwait2Timeout(t *testing.T) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(epfd) })
	events := make([]unix.EpollEvent, 4)
	ts := unix.Timespec{}
	if _, err := epollPwait2(epfd, events, &ts, false); errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		t.Skipf("epoll_pwait2 not available (%v): the loops use a timerfd", err)
	}
	for _, d := range []time.Duration{0, 1500 * time.Microsecond, 3 * time.Millisecond} {
		ts = unix.NsecToTimespec(int64(d))
		start := time.Now()
		n, err := epollPwait2(epfd, events, &ts, false)
		took := time.Since(start)
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.GreaterOrEqual(t, took, d, "woke before the timeout")
	}
}

// TestIntegrationWaitModes runs the same open-model load with the loops
// sleeping in epoll_pwait2 and on the timerfd fallback (kernels before
// 5.11): each sends the whole schedule and every response is counted.
func TestIntegrationWaitModes(t *testing.T) {
	hello, err := StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hello.Close() })
	for _, tc := range []struct {
		name    string
		timerfd bool
	}{{"epoll_pwait2", false}, {"timerfd", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Config{URL: hello.URL, Connections: 8, Threads: 2, Rate: 2000, Duration: time.Second}.normalize(runtime.GOMAXPROCS(0))
			require.NoError(t, err)
			res, err := runWith(context.Background(), cfg, engineOpts{timerfd: tc.timerfd})
			require.NoError(t, err)
			t.Logf("requests %d missed %d; lag p50 %d us p99 %d us", res.Requests, res.Missed, res.Histograms.Lag.ValueAtQuantile(50), res.Histograms.Lag.ValueAtQuantile(99))
			assert.Zero(t, res.Errors.Socket())
			assert.Equal(t, uint64(2000), res.Sent+res.Missed, "the whole schedule is sent or counted as missed")
			assert.Equal(t, res.Sent, res.Requests+res.Drain.Requests)
			assert.InDelta(t, 2000, float64(res.Requests), 2000*0.02)
			assert.Equal(t, int64(res.Sent), res.Histograms.Lag.TotalCount(), "a send lag per request sent")
		})
	}
}
