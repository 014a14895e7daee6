package loadgen_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// seen is one request as a server on 127.0.0.1 received it.
type seen struct {
	conn, method, path, xa, body string
	contentLength                int64
}

// recorder serves 127.0.0.1 and records every request; the status of a
// response is the one statusOf gives its path (200 when nil).
type recorder struct {
	mu   sync.Mutex
	reqs []seen
	url  string
}

func newRecorder(t *testing.T, statusOf func(path string) int) *recorder {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seen{conn: r.RemoteAddr, method: r.Method, path: r.URL.RequestURI(), xa: r.Header.Get("X-A"),
			body: string(b), contentLength: r.ContentLength})
		rec.mu.Unlock()
		status := http.StatusOK
		if statusOf != nil {
			status = statusOf(r.URL.Path)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "ok\n")
	}))
	t.Cleanup(srv.Close)
	rec.url = srv.URL
	return rec
}

func (r *recorder) requests() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

// byConn groups the paths the server saw by connection, in order.
func byConn(reqs []seen) map[string][]string {
	m := map[string][]string{}
	for _, s := range reqs {
		m[s.conn] = append(m[s.conn], s.path)
	}
	return m
}

func runBounded(t *testing.T, cfg loadgen.Config) *loadgen.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg.Duration = 15 * time.Second // a bound: the request count ends the run
	res, err := loadgen.Run(ctx, cfg)
	require.NoError(t, err)
	return res
}

// TestTargetsRoundRobinPerConnection: one connection sends the targets
// in turn, so 300 requests over a 3-target file that lists /a twice send
// exactly 200 /a and 100 /b, each with its method, headers and body.
func TestTargetsRoundRobinPerConnection(t *testing.T) {
	rec := newRecorder(t, nil)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "order.json"), `{"item":42}`)
	targets := parseTargetsText(t, dir, "# two reads for a write\nGET "+rec.url+"/a?x=1\nX-A: 1\n\n"+
		"GET "+rec.url+"/a?x=1\nX-A: 1\n\nPOST "+rec.url+"/b\nX-A: 2\n@order.json\n")
	res := runBounded(t, loadgen.Config{Targets: targets, Connections: 1, Threads: 1, Requests: 300})
	reqs := rec.requests()
	require.Len(t, reqs, 300)
	counts := map[string]int{}
	for i, s := range reqs {
		counts[s.method+" "+s.path]++
		want := []string{"/a?x=1", "/a?x=1", "/b"}[i%3]
		require.Equal(t, want, s.path, "request %d: the targets in turn", i)
		if s.path == "/b" {
			assert.Equal(t, seen{conn: s.conn, method: "POST", path: "/b", xa: "2", body: `{"item":42}`, contentLength: 11}, s)
		} else {
			assert.Equal(t, seen{conn: s.conn, method: "GET", path: "/a?x=1", xa: "1", contentLength: 0}, s)
		}
	}
	assert.Equal(t, map[string]int{"GET /a?x=1": 200, "POST /b": 100}, counts)
	require.Len(t, res.Targets, 3)
	for i, want := range []uint64{100, 100, 100} {
		tr := res.Targets[i]
		assert.Equal(t, want, tr.Requests, "target %d", i+1)
		assert.Equal(t, want, tr.Statuses.Success, "target %d", i+1)
		assert.Equal(t, int64(want), tr.Latency.TotalCount(), "target %d", i+1)
		assert.Positive(t, tr.Latency.Max(), "target %d", i+1)
	}
	assert.Equal(t, "POST", res.Targets[2].Method)
	assert.Equal(t, uint64(300), res.Statuses.Success)
}

// TestTargetsStartPerConnection: connection i starts with target i mod n
// and moves on by one per request, whichever connection the request
// count's share goes to.
func TestTargetsStartPerConnection(t *testing.T) {
	rec := newRecorder(t, nil)
	targets := []loadgen.Target{{URL: "/0"}, {URL: "/1"}, {URL: "/2"}}
	res := runBounded(t, loadgen.Config{URL: rec.url + "/base", Targets: targets, Connections: 4, Threads: 2, Requests: 400})
	reqs := rec.requests()
	require.Len(t, reqs, 400)
	conns := byConn(reqs)
	require.Len(t, conns, 4, "four keep-alive connections")
	var firsts []string
	perTarget := map[string]uint64{}
	for conn, paths := range conns {
		firsts = append(firsts, paths[0])
		for i, p := range paths {
			perTarget[p]++
			if i > 0 {
				prev, cur := paths[i-1][1]-'0', p[1]-'0'
				require.Equal(t, (prev+1)%3, cur, "connection %s, request %d: the next target", conn, i)
			}
		}
	}
	assert.ElementsMatch(t, []string{"/0", "/1", "/2", "/0"}, firsts, "connection i starts at target i mod 3")
	for i, tr := range res.Targets {
		assert.Equal(t, perTarget["/"+string(rune('0'+i))], tr.Requests, "target %d: the server's count", i)
	}
}

// TestStatusClasses: a server answering 200, 301, 404 and 503 by path;
// each class is counted exactly, and OKStatus says which are errors.
func TestStatusClasses(t *testing.T) {
	status := map[string]int{"/ok": 200, "/moved": 301, "/missing": 404, "/down": 503}
	rec := newRecorder(t, func(p string) int { return status[p] })
	var targets []loadgen.Target
	for _, p := range []string{"/ok", "/moved", "/missing", "/down"} {
		targets = append(targets, loadgen.Target{Method: "GET", URL: rec.url + p})
	}
	cfg := loadgen.Config{Targets: targets, Connections: 1, Threads: 1, Requests: 400}
	for _, tt := range []struct {
		ok         string
		wantErrors uint64
		errTargets []uint64
	}{
		{"", 200, []uint64{0, 0, 100, 100}},
		{"2xx,3xx,404", 100, []uint64{0, 0, 0, 100}},
		{"200", 300, []uint64{0, 100, 100, 100}},
	} {
		t.Run("ok="+tt.ok, func(t *testing.T) {
			c := cfg
			if tt.ok != "" {
				var err error
				c.OKStatus, err = loadgen.ParseStatusSet(tt.ok)
				require.NoError(t, err)
			}
			res := runBounded(t, c)
			assert.Equal(t, loadgen.StatusClasses{Success: 100, Redirection: 100, ClientError: 100, ServerError: 100}, res.Statuses)
			assert.Equal(t, tt.wantErrors, res.Errors.Status)
			for i, tr := range res.Targets {
				assert.Equal(t, uint64(100), tr.Requests, "target %d", i+1)
				assert.Equal(t, tt.errTargets[i], tr.Errors, "target %d", i+1)
			}
		})
	}
}

// TestSingleRequestUnchanged: a Config without targets sends its one
// request, and the result has no per-target part.
func TestSingleRequestUnchanged(t *testing.T) {
	rec := newRecorder(t, nil)
	res := runBounded(t, loadgen.Config{URL: rec.url + "/one", Method: "POST", Body: []byte("x=1"),
		Headers: []loadgen.Header{{Name: "X-A", Value: "1"}}, Connections: 2, Threads: 1, Requests: 50})
	reqs := rec.requests()
	require.Len(t, reqs, 50)
	for _, s := range reqs {
		assert.Equal(t, seen{conn: s.conn, method: "POST", path: "/one", xa: "1", body: "x=1", contentLength: 3}, s)
	}
	assert.Nil(t, res.Targets)
	assert.Equal(t, loadgen.StatusClasses{Success: 50}, res.Statuses)
	assert.Equal(t, "POST", res.Method)
}

func TestTargetsRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  loadgen.Config
		want string
	}{
		{"another host", loadgen.Config{Targets: []loadgen.Target{{URL: "http://127.0.0.1:1/a"}, {URL: "http://127.0.0.2:1/b"}}},
			"target 2 (GET http://127.0.0.2:1/b): want http://127.0.0.1:1 like the first target"},
		{"another port", loadgen.Config{URL: "http://127.0.0.1:1/", Targets: []loadgen.Target{{URL: "http://127.0.0.1:2/a"}}},
			"want http://127.0.0.1:1 like the first target"},
		{"https and http", loadgen.Config{Targets: []loadgen.Target{{URL: "https://127.0.0.1:1/a"}, {URL: "http://127.0.0.1:1/b"}}},
			"want https://127.0.0.1:1"},
		{"a path without a URL", loadgen.Config{Targets: []loadgen.Target{{URL: "/a"}}}, "target 1"},
		{"a method beside the targets", loadgen.Config{Method: "POST", Targets: []loadgen.Target{{URL: "http://127.0.0.1:1/a"}}}, "give each target its own"},
		{"a bad header", loadgen.Config{Targets: []loadgen.Target{{URL: "http://127.0.0.1:1/a", Headers: []loadgen.Header{{Name: "X A", Value: "1"}}}}}, `header "X A"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Requests = 1
			_, err := loadgen.Run(context.Background(), tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestTargetsOpenModel: at a rate, too, each connection sends the targets
// in turn; the per-target counts add up to the run's.
func TestTargetsOpenModel(t *testing.T) {
	rec := newRecorder(t, nil)
	targets := []loadgen.Target{{URL: "/0"}, {URL: "/1"}, {URL: "/2"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Config{URL: rec.url, Targets: targets, Connections: 2, Threads: 1, Rate: 400, Duration: 300 * time.Millisecond})
	require.NoError(t, err)
	conns := byConn(rec.requests())
	require.Len(t, conns, 2)
	for conn, paths := range conns {
		for i := 1; i < len(paths); i++ {
			require.Equal(t, (paths[i-1][1]-'0'+1)%3, paths[i][1]-'0', "connection %s, request %d", conn, i)
		}
	}
	var sum uint64
	for _, tr := range res.Targets {
		sum += tr.Requests
	}
	assert.Equal(t, res.Requests, sum)
	assert.Positive(t, res.Requests)
	assert.Equal(t, "constant 400/s", res.Pacer)
}
