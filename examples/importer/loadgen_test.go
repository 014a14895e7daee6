package importer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// A wrk2-style fixed-rate run and an ab-style closed loop against a server
// on 127.0.0.1, with the reports an importer prints.
func TestLoadgen(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
	defer srv.Close()
	ctx := context.Background()

	res, err := loadgen.Run(ctx, loadgen.Config{URL: srv.URL, Connections: 4, Rate: 500, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 400 || res.Errors.Socket()+res.Errors.Status != 0 {
		t.Fatalf("fixed rate: %d requests, %d errors", res.Requests, res.Errors.Socket()+res.Errors.Status)
	}
	report.WriteWrkHeader(os.Stdout, srv.URL, time.Second, res.Threads, 4)
	if err := report.WriteWrk(os.Stdout, res, report.WrkOptions{Latency: true}); err != nil {
		t.Fatal(err)
	}

	ab, err := loadgen.Run(ctx, loadgen.Config{URL: srv.URL, Connections: 2, Requests: 200})
	if err != nil {
		t.Fatal(err)
	}
	if ab.Requests != 200 {
		t.Fatalf("closed loop: %d requests, want 200", ab.Requests)
	}
}
