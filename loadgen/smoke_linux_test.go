package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	defer srv.Close()
	for _, cfg := range []Config{
		{URL: srv.URL, Connections: 8, Duration: time.Second},
		{URL: srv.URL, Connections: 8, Duration: time.Second, Rate: 2000},
		{URL: srv.URL, Connections: 4, Requests: 1000, DisableKeepAlive: true},
	} {
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", *res)
		t.Logf("p50 %d p99 %d lag p99 %d", res.Histograms.Latency.ValueAtQuantile(50), res.Histograms.Latency.ValueAtQuantile(99), res.Histograms.Lag.ValueAtQuantile(99))
	}
}
