//go:build linux

package tomcatconf_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tomcatconf"
)

const helloPath = "/examples/servlets/servlet/HelloWorldExample"

// newBase copies Debian's tomcat10 instance (conf from /etc/tomcat10 via
// /var/lib/tomcat10/conf, the ROOT webapp, the examples context) into a
// temporary CATALINA_BASE.
func newBase(t *testing.T) *tomcatconf.Instance {
	t.Helper()
	base := testutil.DebianTomcatBase(t)
	in := &tomcatconf.Instance{Home: tomcatconf.DefaultHome, Base: base}
	t.Cleanup(func() {
		stopped, err := in.StopAll(context.Background(), nil)
		if err != nil {
			t.Errorf("cleanup: stop Tomcat: %v", err)
		}
		for _, res := range stopped {
			t.Logf("cleanup: stopped JVM %d with %s", res.PID, res.Method)
		}
		requireNoJVM(t, in)
	})
	return in
}

// freePort returns a free TCP port with four digits, so that the kernel's
// 15-byte thread names ("http-nio-8937-e") still tell exec threads from
// the Poller and the Acceptor.
func freePort(t *testing.T) int {
	t.Helper()
	for range 200 {
		p := 2000 + rand.IntN(8000)
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		require.NoError(t, l.Close())
		return p
	}
	t.Fatal("no free 4-digit port")
	return 0
}

func accessLogs(t *testing.T, base string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(base, "logs", "*access_log*"))
	require.NoError(t, err)
	return m
}

func get(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestIntegrationTomcat runs Debian's Tomcat from a temporary
// CATALINA_BASE: first as shipped (the access log is written), then with
// the guide's edits (maxThreads = CPUs - 1, access log commented out),
// under load, counting exec threads.
func TestIntegrationTomcat(t *testing.T) {
	testutil.StableCPUs(t)
	in := newBase(t)
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d%s", port, helloPath)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}

	// Control: as shipped, on our port. The access log is written.
	c, err := tomcatconf.Load(in.ServerXML())
	require.NoError(t, err)
	_, err = c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, []tomcatconf.Attr{{Name: "port", Value: strconv.Itoa(port)}}, nil)
	require.NoError(t, err)
	_, err = c.Save(nil)
	require.NoError(t, err)

	res, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: url})
	require.NoError(t, err)
	t.Logf("started JVM %d (open files %d) in %s", res.PID, res.NoFile, res.Ready)
	assert.Positive(t, res.NoFile)
	status, body := get(t, client, url)
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "Hello World!")
	stop, err := in.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, tomcatconf.StopSIGTERM, stop.Method, "Debian's <Server port=\"-1\"> has no shutdown port")
	t.Logf("stopped JVM %d with %s in %s", stop.PID, stop.Method, stop.Took)
	require.NotEmpty(t, accessLogs(t, in.Base), "control: the shipped config writes an access log")
	for _, f := range accessLogs(t, in.Base) {
		require.NoError(t, os.Remove(f))
	}

	// The guide's edits.
	var mask unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &mask))
	workers := max(1, mask.Count()-1)
	c, err = tomcatconf.Load(in.ServerXML())
	require.NoError(t, err)
	q := tomcatconf.ConnectorQuery{Port: strconv.Itoa(port)}
	_, err = c.SetConnector(q, tomcatconf.ArmGuideConnectorAttrs(workers), nil)
	require.NoError(t, err)
	_, err = c.DisableAccessLog(tomcatconf.AccessLogComment)
	require.NoError(t, err)
	t.Logf("server.xml diff:\n%s", c.Diff())
	_, err = c.Save(nil)
	require.NoError(t, err)
	cn, err := c.FindConnector(q)
	require.NoError(t, err)

	res, err = in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: url})
	require.NoError(t, err)
	status, body = get(t, client, url)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Hello World!")

	// Load: 32 keep-alive clients, bounded by count and time.
	var ok, bad atomic.Int64
	loadCtx, stopLoad := context.WithTimeout(ctx, 6*time.Second)
	defer stopLoad()
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	lc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for range 32 {
		wg.Go(func() {
			for i := 0; i < 2000 && loadCtx.Err() == nil; i++ {
				req, _ := http.NewRequestWithContext(loadCtx, http.MethodGet, url, nil)
				resp, err := lc.Do(req)
				if err != nil {
					if loadCtx.Err() == nil {
						bad.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					bad.Add(1)
				}
			}
		})
	}
	// Census under load, once the load is flowing.
	tick := time.NewTicker(50 * time.Millisecond)
	for ok.Load() < 200 && loadCtx.Err() == nil {
		<-tick.C
	}
	tick.Stop()
	opts := &tomcatconf.CensusOptions{}
	if names, err := tomcatconf.JavaThreadNames(ctx, nil, "", res.PID); err == nil {
		opts.Names = names
	} else {
		t.Logf("no full thread names (kernel names only): %v", err)
	}
	census, err := tomcatconf.TakeCensus(ctx, res.PID, 2*time.Second, opts)
	require.NoError(t, err)
	wg.Wait()
	t.Logf("load: %d ok, %d failed", ok.Load(), bad.Load())
	assert.Positive(t, ok.Load())
	assert.Zero(t, bad.Load())

	nExec := census.Count(cn.Name(), tomcatconf.KindExec)
	for _, p := range census.Pools {
		t.Logf("pool %-20s %-9s threads %3d cpu %6s load %.2f", p.Pool, p.Kind, p.Threads, p.CPU, p.Load)
	}
	t.Logf("recommendation: %s", census.Recommend(0).Reason)
	assert.GreaterOrEqual(t, nExec, 1, "the census sees %s exec threads", cn.Name())
	assert.LessOrEqual(t, nExec, workers, "no more exec threads than maxThreads=%d", workers)
	assert.Equal(t, 1, census.Count(cn.Name(), tomcatconf.KindPoller))
	assert.Equal(t, 1, census.Count(cn.Name(), tomcatconf.KindAcceptor))

	stop, err = in.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, tomcatconf.StopSIGTERM, stop.Method)
	assert.Empty(t, accessLogs(t, in.Base), "access log commented out: no access log file")
	_, err = in.PID()
	require.ErrorIs(t, err, tomcatconf.ErrNotRunning)

	// The other reversible way: enabled="false". Tomcat still creates the
	// file when the Valve starts, but writes no line to it.
	c, err = tomcatconf.Load(in.ServerXML())
	require.NoError(t, err)
	n, err := c.EnableAccessLog()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = c.DisableAccessLog(tomcatconf.AccessLogEnabledFalse)
	require.NoError(t, err)
	_, err = c.Save(nil)
	require.NoError(t, err)
	// This time with a shutdown port, so that Stop goes through
	// catalina.sh stop.
	data, err := os.ReadFile(in.ServerXML())
	require.NoError(t, err)
	shutdown := strconv.Itoa(freePort(t))
	data = bytes.Replace(data, []byte(`<Server port="-1"`), []byte(`<Server port="`+shutdown+`"`), 1)
	require.Contains(t, string(data), `<Server port="`+shutdown+`"`)
	require.NoError(t, os.WriteFile(in.ServerXML(), data, 0o640))
	_, err = in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: url})
	require.NoError(t, err)
	for range 20 {
		status, _ := get(t, client, url)
		require.Equal(t, http.StatusOK, status)
	}
	stop, err = in.Stop(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, tomcatconf.StopShutdownPort, stop.Method)
	t.Logf("stopped JVM %d with %s in %s", stop.PID, stop.Method, stop.Took)
	t.Logf("enabled=\"false\": access log files %v", accessLogs(t, in.Base))
	for _, f := range accessLogs(t, in.Base) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Empty(t, data, "enabled=\"false\": %s has no lines", f)
	}
}
