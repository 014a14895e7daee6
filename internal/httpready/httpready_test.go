package httpready

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	if ok, last := Answers(ctx, srv.URL+"/ok", time.Second); !ok || last != "200 OK" {
		t.Fatalf("/ok: %v %q", ok, last)
	}
	if ok, _ := Answers(ctx, srv.URL+"/moved", time.Second); !ok {
		t.Fatal("/moved: a redirect to a page that answers is ready")
	}
	if ok, last := Answers(ctx, srv.URL+"/missing", time.Second); ok || last != "404 Not Found" {
		t.Fatalf("/missing: %v %q", ok, last)
	}
	if ok, last := Answers(ctx, "http://127.0.0.1:1/", time.Second); ok || !strings.Contains(last, "refused") {
		t.Fatalf("closed port: %v %q", ok, last)
	}
}

func TestWaitUntilReady(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if err := Wait(context.Background(), srv.URL, 10*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("%d tries, want 3 (two 503s, then 200)", got)
	}
}

func TestWaitTimeoutSaysLast(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	err := Wait(context.Background(), srv.URL, 500*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 500ms (last: 503 Service Unavailable)") {
		t.Fatalf("err %v", err)
	}
}

func TestWaitStopsWhenNotAlive(t *testing.T) {
	dead := errors.New("JVM 42 exited")
	calls := 0
	err := Wait(context.Background(), "http://127.0.0.1:1/", 10*time.Second, func() error {
		if calls++; calls == 2 {
			return dead
		}
		return nil
	})
	if err != dead || calls != 2 {
		t.Fatalf("err %v after %d calls, want alive's error on its second call", err, calls)
	}
}

func TestWaitBadURL(t *testing.T) {
	if err := Wait(context.Background(), "http://[::1", time.Second, nil); err == nil || !strings.HasPrefix(err.Error(), `ready URL "http://[::1": `) {
		t.Fatalf("err %v", err)
	}
}

func TestWaitContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Wait(ctx, "http://127.0.0.1:1/", time.Minute, nil)
	if err == nil {
		t.Fatal("a cancelled context did not end the wait")
	}
	// A cancel (a signal during a restart) is not the server's fault: it
	// says so, and is context.Canceled for errors.Is.
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("cancelled wait: %v; want context.Canceled, not a timeout blamed on the server", err)
	}
}
