//go:build linux

package tomcatconf_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
)

// jitThreshold is loadgen's DefaultMaxCompilerShare: the share under
// which the compilers count as done.
const jitThreshold = 0.02

// loadFor sends GETs to url on conns keep-alive connections, each waiting
// for its response before the next, until d has passed, and returns the
// count of 200 responses.
func loadFor(ctx context.Context, client *http.Client, url string, conns int, d time.Duration) int64 {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if err != nil {
					return
				}
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return ok.Load()
}

// TestIntegrationJITMeterPackagedTomcat: a fresh Debian tomcat10 JVM,
// started as its unit starts it, loaded in one-second intervals on
// 127.0.0.1: the first interval's compiler share is well above the
// threshold (the JIT compiles the request path), and the share falls
// under it only in a later interval. The order of events is asserted,
// not their times: at most 90 intervals.
func TestIntegrationJITMeterPackagedTomcat(t *testing.T) {
	packaged(t)
	pid := testutil.StartPackagedTomcatAsUnit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()

	m, err := tomcatconf.NewJITMeter(pid, nil)
	require.NoError(t, err)
	var shares []float64
	settled := -1
	for i := 1; i <= 90 && settled < 0; i++ {
		n := loadFor(ctx, client, testutil.PackagedTomcatURL, 8, time.Second)
		s, err := m.Sample()
		require.NoError(t, err)
		t.Logf("interval %d: %d responses, JVM CPU %s, compilers %s (%d threads): %.1f %%",
			i, n, s.Process, s.Compiler, s.Threads, 100*s.Share())
		require.Positive(t, n, "Tomcat answered nothing in interval %d", i)
		shares = append(shares, s.Share())
		if s.Share() < jitThreshold {
			settled = i
		}
	}
	require.NotEmpty(t, shares)
	assert.Greater(t, shares[0], 5*jitThreshold, "a fresh JVM under load compiles: first interval's compiler share")
	require.Positive(t, settled, "the compilers never fell under %.0f %% of the JVM's CPU", 100*jitThreshold)
	assert.Greater(t, settled, 1, "settled only after the first interval")
}
