//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cliflag"
)

// request is one request as the test server received it.
type request struct {
	Conn, Method, Path, XA, Body string
	ContentLength                int64
}

// requestLog serves 127.0.0.1, answers 301 for /moved and 200 for
// the rest, and records every request.
func requestLog(t *testing.T) (url string, got func() []request) {
	var mu sync.Mutex
	var log []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		log = append(log, request{r.RemoteAddr, r.Method, r.URL.RequestURI(), r.Header.Get("X-A"), string(b), r.ContentLength})
		mu.Unlock()
		if r.URL.Path == "/moved" {
			w.WriteHeader(http.StatusMovedPermanently)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []request {
		mu.Lock()
		defer mu.Unlock()
		return append([]request(nil), log...)
	}
}

// runCLI runs the command line with a bound on its time.
func runCLI(t *testing.T, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, args, &out, devNull(t))
	return out.String(), err
}

// TestMethodHeaderBodyFile: -method POST -H 'X-A: 1' --body-file FILE
// arrive as asked: method, header, the file's bytes and their length.
func TestMethodHeaderBodyFile(t *testing.T) {
	url, got := requestLog(t)
	body := filepath.Join(t.TempDir(), "order.json")
	payload := "{\"id\":7,\n \"note\":\"two lines, a tab\\t\"}\n"
	require.NoError(t, os.WriteFile(body, []byte(payload), 0o644))
	_, err := runCLI(t, "-method", "POST", "-H", "X-A: 1", "-body-file", body, "-c1", "-t1", "-d", "300ms", url+"/orders?x=1")
	require.NoError(t, err)
	reqs := got()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		require.Equal(t, request{r.Conn, "POST", "/orders?x=1", "1", payload, int64(len(payload))}, r)
	}
}

// TestTargetsFile: the targets arrive in turn on each connection, the
// report has a line per target, and --ok-status decides what an error is.
func TestTargetsFile(t *testing.T) {
	url, got := requestLog(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "form.txt"), []byte("a=1&b=2"), 0o644))
	targets := filepath.Join(dir, "targets.txt")
	require.NoError(t, os.WriteFile(targets, []byte("# three targets\nGET "+url+"/0\n\nGET "+url+"/moved\nX-A: 2\n\n"+
		"POST "+url+"/2\n@form.txt\n"), 0o644))
	out, err := runCLI(t, "--targets", targets, "-H", "X-A: 1", "-c3", "-t1", "-d", "300ms")
	require.NoError(t, err)
	assert.Contains(t, out, "Running 0s test @ "+targets+" (3 targets)\n")
	assert.NotContains(t, out, "Non-2xx or 3xx responses", "a 301 is OK by default")
	assert.Contains(t, out, "  Targets:\n    1 GET "+url+"/0: ")
	assert.Contains(t, out, "\n    3 POST "+url+"/2: ")
	conns := map[string][]request{}
	for _, r := range got() {
		conns[r.Conn] = append(conns[r.Conn], r)
	}
	require.Len(t, conns, 3)
	var firsts []string
	for _, rs := range conns {
		firsts = append(firsts, rs[0].Path)
		for i, r := range rs {
			want := []request{
				{r.Conn, "GET", "/0", "1", "", 0},
				{r.Conn, "GET", "/moved", "1", "", 0}, // -H first: the server reads the first X-A
				{r.Conn, "POST", "/2", "1", "a=1&b=2", 7},
			}
			k := map[string]int{"/0": 0, "/moved": 1, "/2": 2}[rs[0].Path]
			require.Equal(t, want[(k+i)%3], r, "request %d on a connection: the targets in turn", i)
		}
	}
	assert.ElementsMatch(t, []string{"/0", "/moved", "/2"}, firsts, "connection i starts at target i")

	out, err = runCLI(t, "--targets", targets, "--ok-status", "200", "--json", "-c1", "-t1", "-d", "200ms")
	require.NoError(t, err)
	var res struct {
		Errors   struct{ Status uint64 }
		Statuses map[string]uint64 `json:"status_classes"`
		OK       string            `json:"ok_status"`
		Targets  []struct {
			URL      string
			Requests uint64
			Errors   uint64
			Latency  struct {
				Count       int64
				Percentiles map[string]int64 `json:"percentiles_us"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "200", res.OK)
	require.Positive(t, res.Statuses["3xx"])
	assert.Equal(t, res.Statuses["3xx"], res.Errors.Status, "a 301 is an error with --ok-status 200")
	require.Len(t, res.Targets, 3)
	assert.Equal(t, res.Statuses["3xx"], res.Targets[1].Errors)
	assert.Zero(t, res.Targets[0].Errors)
	for _, tr := range res.Targets {
		assert.Equal(t, int64(tr.Requests), tr.Latency.Count, tr.URL)
		assert.Positive(t, tr.Latency.Percentiles["99"], tr.URL)
	}
}

// TestTargetsRefusals: conflicting flags exit 2 with one line, before
// any file is read; a bad file exits 1 and names its line.
func TestTargetsRefusals(t *testing.T) {
	dir := t.TempDir()
	targets := filepath.Join(dir, "t.txt")
	require.NoError(t, os.WriteFile(targets, []byte("GET http://127.0.0.1:1/\n"), 0o644))
	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("GET http://127.0.0.1:1/\nAccept text/html\n"), 0o644))
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--targets", targets, "http://127.0.0.1:1/"}, cliflag.ExitUsage, "the targets file has the URLs"},
		{[]string{"--targets", targets, "-m", "POST"}, cliflag.ExitUsage, "and -m: each target has its own"},
		{[]string{"--targets", targets, "--body", "x"}, cliflag.ExitUsage, "and --body:"},
		{[]string{"--targets", targets, "--body-file", targets}, cliflag.ExitUsage, "and --body-file:"},
		{[]string{"--body", "x", "--body-file", targets, "http://127.0.0.1:1/"}, cliflag.ExitUsage, "give one body"},
		{[]string{"--ok-status", "2x", "http://127.0.0.1:1/"}, cliflag.ExitUsage, "want codes, classes or ranges"},
		{[]string{"--targets", filepath.Join(dir, "none.txt")}, cliflag.ExitFailure, "no such file"},
		{[]string{"--body-file", filepath.Join(dir, "none"), "http://127.0.0.1:1/"}, cliflag.ExitFailure, "--body-file: open"},
		{[]string{"--targets", bad}, cliflag.ExitFailure, bad + `:2: "Accept text/html": want a header "Name: value"`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := runCLI(t, tt.args...)
			require.Error(t, err)
			assert.Equal(t, tt.code, cliflag.ExitCode(err), "%v", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.Empty(t, out, "nothing ran")
		})
	}
}
