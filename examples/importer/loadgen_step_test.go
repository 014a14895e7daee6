package importer

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/nettune/nettune/loadgen"
)

// MeasureStep from another module: a tuning step measured the study's way
// (warm-up, capacity runs, latency at a share of the capacity, this
// process's CPU as the server's), with every load sent through the
// importer's own RunFunc, which hands it over in loadgen's wire form as a
// worker in another process would get it.
func TestMeasureStep(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
	defer srv.Close()
	var runs int
	viaWire := func(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
		runs++
		var b bytes.Buffer
		if err := loadgen.WriteConfigJSON(&b, cfg); err != nil {
			return nil, err
		}
		got, err := loadgen.ReadConfigJSON(&b)
		if err != nil {
			return nil, err
		}
		return loadgen.Run(ctx, got)
	}
	m, err := loadgen.MeasureStep(context.Background(), loadgen.Config{URL: srv.URL, Connections: 4, Duration: 300 * time.Millisecond},
		&loadgen.StepOptions{Name: "baseline", Run: viaWire, PID: os.Getpid(),
			WarmUp:   &loadgen.WarmUpOptions{Interval: 200 * time.Millisecond, Max: 600 * time.Millisecond},
			Capacity: &loadgen.CapacityOptions{Rate: 100000, Repeat: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "baseline" || m.Capacity.N != 2 || m.Capacity.Median <= 0 || m.Latency.Load <= 0 || m.Latency.Requests == 0 {
		t.Fatalf("figures: %+v", m)
	}
	if runs < 2+2+1 {
		t.Fatalf("%d loads went through the RunFunc, want at least 5 (2 warm-up, 2 capacity, 1 latency)", runs)
	}
	t.Log(loadgen.CompareSteps(m).Text())
}
