//go:build linux

package study

import (
	"context"
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

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/tuning"
)

// TestStudyTargets: with -targets, every load of a measurement (the
// capacity runs and the latency run) sends the file's requests, and a
// server on 127.0.0.1 that records what arrives sees only them, the POST
// with its header and body as written, in the file's proportions (GET /a
// named twice, POST /b once): round-robin on each of the 4 connections
// keeps |a − 2b| within 3 requests a connection.
func TestStudyTargets(t *testing.T) {
	testutil.StableCPUs(t)
	var mu sync.Mutex
	seen := map[string]int{}
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Method + " " + r.URL.Path
		mu.Lock()
		seen[key]++
		if key == "POST /b" && (string(body) != "user=nettune&n=1\n" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.Header.Get("X-Trial") != "7") {
			bad = append(bad, key+" "+string(body)+" "+r.Header.Get("Content-Type"))
		}
		mu.Unlock()
		_, _ = io.WriteString(w, "ok\n")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "form.txt"), []byte("user=nettune&n=1\n"), 0o644))
	file := filepath.Join(dir, "targets.txt")
	require.NoError(t, os.WriteFile(file, []byte("GET "+srv.URL+"/a\n\nPOST "+srv.URL+"/b\nContent-Type: application/x-www-form-urlencoded\nX-Trial: 7\n@form.txt\n\nGET "+srv.URL+"/a\n"), 0o644))
	targets, err := loadgen.ReadTargets(file)
	require.NoError(t, err)
	require.Len(t, targets, 3)

	o := DefaultOptions()
	o.CPUMethod, o.Search, o.URL, o.Steps = MethodAffinity, SearchOff, srv.URL+"/a", []string{StepAccessLog}
	o.Targets, o.TargetsFile = targets, file
	o.Repeat, o.Duration, o.WarmUp, o.Connections, o.Rate = 2, 300*time.Millisecond, 0, 4, 200
	require.NoError(t, o.checkTargets())
	h := Host{CPUs: CPUs{N: 1, Tomcat: cpuset.Of(0)}, NIC: NIC{Name: "lo", Virtual: true, Node: -1, URL: o.URL}}
	var log strings.Builder
	r := newRun(h, o, &log)
	var loads int
	r.loader = func(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
		loads++
		assert.Len(t, cfg.Targets, 3, "a load of the study sends the targets")
		return loadgen.Run(ctx, cfg)
	}
	r.restarter = func(context.Context) error { return nil }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	steps := []tuning.Step{{Name: StepAccessLog}} // no threads: no census of a JVM
	require.NoError(t, r.afterStep(ctx, steps, tuning.StepResult{Name: "baseline", Status: tuning.StatusNoChange}))
	t.Logf("%s", log.String())

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 3, loads, "two capacity runs and the latency run")
	assert.Empty(t, bad, "POSTs not as written")
	a, b := seen["GET /a"], seen["POST /b"]
	delete(seen, "GET /a")
	delete(seen, "POST /b")
	assert.Empty(t, seen, "only the targets' requests arrive")
	assert.Positive(t, b)
	assert.LessOrEqual(t, max(a-2*b, 2*b-a), 3*o.Connections, "GET /a %d, POST /b %d: the file's 2:1", a, b)

	o.TargetsFile, o.Targets = "t.txt", []loadgen.Target{{URL: srv.URL + "/a"}, {Method: "POST", URL: "http://[::1]:9/b"}}
	assert.ErrorContains(t, o.checkTargets(), "-targets t.txt: target 2, POST http://[::1]:9/b: want a path or a URL on http://"+strings.TrimPrefix(srv.URL, "http://")+", the study's -url")
}
