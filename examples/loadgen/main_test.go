//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

func helloURL(t *testing.T) string {
	t.Helper()
	h, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	return h.URL
}

func devNull(t *testing.T) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// TestSeedWrk2CommandLine runs seeds 000-002's wrk2 command line against
// the built-in HelloWorld page on 127.0.0.1 with its flags as written,
// except -d60 shortened to -d2 to keep the test short.
func TestSeedWrk2CommandLine(t *testing.T) {
	url := helloURL(t)
	var out bytes.Buffer
	err := run(context.Background(), strings.Fields("-c1280 -t128 -R500000 -d2 "+url), &out, devNull(t))
	require.NoError(t, err)
	s := out.String()
	assert.True(t, strings.HasPrefix(s, "Running 2s test @ "+url+"\n  128 threads and 1280 connections\n"), s)
	assert.Contains(t, s, "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n")
	assert.Contains(t, s, "\nRequests/sec: ")
	assert.Contains(t, s, "\nTransfer/sec: ")
}

// TestSeedABCommandLine runs seed 003's ab command line verbatim against
// the built-in page (100000 requests; 10000 under the race detector, which
// makes the engine several times slower).
func TestSeedABCommandLine(t *testing.T) {
	url := helloURL(t)
	n := "100000"
	if raceEnabled {
		n = "10000"
	}
	var out bytes.Buffer
	err := run(context.Background(), strings.Fields("ab -k -n "+n+" -c 149 "+url), &out, devNull(t))
	require.NoError(t, err)
	s := out.String()
	for _, want := range []string{
		"Benchmarking 127.0.0.1 (be patient)\n", "Server Software:        \n", "Server Hostname:        127.0.0.1\n",
		"Document Path:          /examples/servlets/servlet/HelloWorldExample\n",
		"Concurrency Level:      149\n", "Complete requests:      " + n + "\n", "Failed requests:        0\n",
		"Keep-Alive requests:    " + n + "\n", "Requests per second:    ", "Connection Times (ms)\n",
		"Percentage of the requests served within a certain time (ms)\n", " (longest request)\n",
	} {
		assert.Contains(t, s, want)
	}
}

func TestABWithoutKeepAlive(t *testing.T) {
	url := helloURL(t)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), strings.Fields("ab -n 500 -c 10 "+url), &out, devNull(t)))
	assert.Contains(t, out.String(), "Complete requests:      500\n")
	assert.NotContains(t, out.String(), "Keep-Alive requests", "ab prints it only with -k")
}

func TestLuaScriptRejected(t *testing.T) {
	err := run(context.Background(), []string{"-s", "pipeline.lua", "http://127.0.0.1:1/"}, &bytes.Buffer{}, devNull(t))
	require.Error(t, err)
	assert.True(t, errors.Is(err, errLuaScript))
	assert.Contains(t, err.Error(), "Lua scripts (-s) are not supported")
}

func TestDemoWithoutURL(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), nil, &out, devNull(t)))
	assert.Contains(t, out.String(), "2 threads and 16 connections")
	assert.Contains(t, out.String(), "Latency Distribution (HdrHistogram - Recorded Latency)")
}
