package loadgen_test

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

func TestLoadBound(t *testing.T) {
	hist := func(us ...int64) *hdrhistogram.Histogram {
		h := loadgen.NewHistogram()
		for _, v := range us {
			require.NoError(t, h.RecordValue(v))
		}
		return h
	}
	open := func(cpu time.Duration, cpus int, lag, service *hdrhistogram.Histogram, missed uint64) *loadgen.Result {
		return &loadgen.Result{Pacer: "constant 1000/s", OfferedRate: 1000, AchievedRate: 1000, Connections: 8, Missed: missed,
			Generator:  loadgen.GeneratorUse{CPU: cpu, Wall: time.Second, CPUs: cpus},
			Histograms: loadgen.Histograms{Lag: lag, Service: service}}
	}
	// Fast answers but for a few stalls: the mean keeps the connections
	// idle, the stalls make the sends late.
	stalls := loadgen.NewHistogram()
	for i := 0; i < 200; i++ {
		require.NoError(t, stalls.RecordValue(300))
	}
	for i := 0; i < 3; i++ {
		require.NoError(t, stalls.RecordValue(70000))
	}
	// n values of us each, then more.
	many := func(n int, us int64, more ...int64) *hdrhistogram.Histogram {
		h := hist(more...)
		require.NoError(t, h.RecordValues(us, int64(n)))
		return h
	}
	tests := []struct {
		name string
		res  *loadgen.Result
		want string
	}{
		{"nil", nil, ""},
		{"idle generator, on time", open(100*time.Millisecond, 2, hist(50, 80, 120), hist(300, 400), 0), ""},
		{"CPU bound", open(1940*time.Millisecond, 2, hist(12000), hist(300), 0), "load-bound: client CPU 97 % of 2 cores, lag p99 12.0ms"},
		{"late sends, fast answers", open(300*time.Millisecond, 1, hist(20000, 20000, 20000), hist(500), 7), "load-bound: client CPU 30 % of 1 core, lag p99 20.0ms, 7 due never sent"},
		{"late sends, fewer than BoundLateSends", open(300*time.Millisecond, 1, hist(20000, 20000), hist(500), 7), ""},
		// The flake seen in CI: 150 sends at 100/s, one hiccup of the
		// host made two of them 14 ms late, and they are the p99.
		{"one hiccup in a light run", open(40*time.Millisecond, 1, many(148, 90, 14400, 14300), hist(300), 0), ""},
		{"a generator falling behind", open(400*time.Millisecond, 1, many(140, 90, 14400, 14400, 14400, 14400, 14400, 14400, 14400, 14400, 14400, 14400), hist(300), 0), "load-bound: client CPU 40 % of 1 core, lag p99 14.4ms"},
		{"late sends behind a server holding every connection", open(300*time.Millisecond, 1, hist(20000), hist(9000), 7), ""},
		{"late sends behind a server's stalls", open(300*time.Millisecond, 1, hist(60000), stalls, 306), ""},
		{"closed loop, CPU bound", &loadgen.Result{Generator: loadgen.GeneratorUse{CPU: 950 * time.Millisecond, Wall: time.Second, CPUs: 1}}, "load-bound: client CPU 95 % of 1 core"},
		{"nothing measured", &loadgen.Result{}, ""},
		{"CPU quota", &loadgen.Result{Generator: loadgen.GeneratorUse{CPU: 95 * time.Millisecond, Wall: time.Second, CPUs: 2, Quota: 0.1}}, "load-bound: client CPU 95 % of its 0.1-core quota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, loadgen.LoadBound(tt.res))
		})
	}
}

func TestLateSends(t *testing.T) {
	hist := func(n int, us int64, more ...int64) *hdrhistogram.Histogram {
		h := loadgen.NewHistogram()
		require.NoError(t, h.RecordValues(us, int64(n)))
		for _, v := range more {
			require.NoError(t, h.RecordValue(v))
		}
		return h
	}
	open := func(own *hdrhistogram.Histogram) *loadgen.Result {
		return &loadgen.Result{Pacer: "constant 1000/s", Histograms: loadgen.Histograms{OwnLag: own}}
	}
	late := make([]int64, 30)
	for i := range late {
		late[i] = 1500
	}
	tests := []struct {
		name string
		res  *loadgen.Result
		want string
	}{
		{"nil", nil, ""},
		{"on time", open(hist(1000, 80, 900, 950)), ""},
		{"p99 above 1 ms", open(hist(970, 80, late...)), "generator late: own send lag p99 1.50ms (above 1.00ms), 30 sends"},
		{"p99 above 1 ms, too few sends", open(hist(5, 80, 1500, 1500)), ""},
		{"closed loop", &loadgen.Result{Histograms: loadgen.Histograms{OwnLag: hist(10, 5000)}}, ""},
		{"read back without it", open(nil), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, loadgen.LateSends(tt.res))
		})
	}
}
