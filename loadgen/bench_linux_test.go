package loadgen_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/loadgen"
)

// benchTarget is LOADGEN_BENCH_URL (scripts/loadgen-bench.sh points it at
// nginx) or, without it, the built-in page served in this process, whose
// CPU then counts in both clients' figures alike.
func benchTarget(b *testing.B) string {
	if u := os.Getenv("LOADGEN_BENCH_URL"); u != "" {
		return u
	}
	h, err := loadgen.StartHelloWorld("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	return h.URL
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClosedLoop compares loadgen's engine with a net/http client
// (64 goroutines sharing a keep-alive Transport) sending the same closed
// loop of b.N requests over 64 connections: requests per second and
// process CPU per request.
func BenchmarkClosedLoop(b *testing.B) {
	url := benchTarget(b)
	const conns = 64
	b.Run("loadgen", func(b *testing.B) {
		cpu0, t0 := cpuTime(), time.Now()
		res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Connections: conns, Threads: 2, Requests: int64(max(b.N, conns))})
		if err != nil {
			b.Fatal(err)
		}
		reportPerRequest(b, res.Requests, cpuTime()-cpu0, time.Since(t0))
	})
	b.Run("net-http", func(b *testing.B) {
		tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		var left atomic.Int64
		left.Store(int64(max(b.N, conns)))
		var done atomic.Uint64
		var wg sync.WaitGroup
		cpu0, t0 := cpuTime(), time.Now()
		for i := 0; i < conns; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for left.Add(-1) >= 0 {
					resp, err := client.Get(url)
					if err != nil {
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		reportPerRequest(b, done.Load(), cpuTime()-cpu0, time.Since(t0))
	})
}

func reportPerRequest(b *testing.B, n uint64, cpu, wall time.Duration) {
	if n == 0 {
		b.Fatal("no requests completed")
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-us/req")
	b.ReportMetric(float64(n)/wall.Seconds(), "req/s")
}
