package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestFormatUnits(t *testing.T) {
	tests := []struct {
		name string
		f    func(float64) string
		in   float64
		want string
	}{
		{"us below 0.85 ms", report.FormatTimeUS, 849.99, "849.99us"},
		{"ms from 0.85 ms", report.FormatTimeUS, 850, "0.85ms"},
		{"ms never becomes s below 1 s", report.FormatTimeUS, 999999, "1000.00ms"},
		{"s from 1 s", report.FormatTimeUS, 1e6, "1.00s"},
		{"seed 000 latency", report.FormatTimeUS, 16.76e6, "16.76s"},
		{"s below 0.85 m", report.FormatTimeUS, 50.99e6, "50.99s"},
		{"m from 51 s", report.FormatTimeUS, 51e6, "0.85m"},
		{"m never becomes h", report.FormatTimeUS, 7200e6, "120.00m"},
		{"seed 000 runtime", report.FormatTimeUS, 60e6, "1.00m"},
		{"zero", report.FormatTimeUS, 0, "0.00us"},
		{"metric below 850", report.FormatMetricForTest, 849, "849.00"},
		{"metric k", report.FormatMetricForTest, 850, "0.85k"},
		{"seed 000 req/sec", report.FormatMetricForTest, 1970, "1.97k"},
		{"binary below 870.4", report.FormatBinaryForTest, 870, "870.00"},
		{"binary K", report.FormatBinaryForTest, 871, "0.85K"},
		{"seed 000 bytes", report.FormatBinaryForTest, 7.62 * (1 << 30), "7.62G"},
		{"seed 000 transfer", report.FormatBinaryForTest, 129.90 * (1 << 20), "129.90M"},
		{"test header 60 s", report.FormatTimeSForTest, 60, "1m"},
		{"test header 10 s", report.FormatTimeSForTest, 10, "10s"},
		{"test header 30 s", report.FormatTimeSForTest, 30, "30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.f(tt.in))
		})
	}
}

// goldenResult is a fixed result: latencies spread from 50 µs to 2 s, an
// uncorrected histogram a tenth of it, socket and status errors.
func goldenResult() *loadgen.Result {
	h := loadgen.Histograms{
		Latency: loadgen.NewHistogram(), Service: loadgen.NewHistogram(), Lag: loadgen.NewHistogram(),
		Connect: loadgen.NewHistogram(), Processing: loadgen.NewHistogram(), Waiting: loadgen.NewHistogram(),
	}
	for i := int64(0); i < 20000; i++ {
		v := 50 + (i*i)%2000000/(1+i%7) // deterministic, skewed
		record(h.Latency, v)
		record(h.Service, v/10+1)
		record(h.Lag, v-v/10)
		record(h.Connect, i%3*100)
		record(h.Processing, v/10+1)
		record(h.Waiting, v/12+1)
	}
	drain := loadgen.NewHistogram()
	for i := int64(0); i < 64; i++ {
		record(drain, 1000+i*10)
	}
	// Two targets, the first with the 4xx and 5xx responses.
	var targets []loadgen.TargetResult
	for k, path := range []string{"/examples/servlets/servlet/HelloWorldExample", "/examples/jsp/"} {
		h0 := loadgen.NewHistogram()
		lat := hdrhistogram.New(h0.LowestTrackableValue(), h0.HighestTrackableValue(), loadgen.TargetHistSigFigs)
		for i := int64(0); i < 10000; i++ {
			record(lat, 50+(i*i)%2000000/(1+i%7)+int64(k)*100)
		}
		targets = append(targets, loadgen.TargetResult{Method: "GET", URL: "http://127.0.0.1:8080" + path, Requests: 10000, Latency: lat})
	}
	targets[0].Statuses = loadgen.StatusClasses{Success: 9990, Redirection: 3, ClientError: 5, ServerError: 2}
	targets[0].Errors = 7 + 5 // statuses, and socket errors
	targets[1].Statuses = loadgen.StatusClasses{Success: 10000}
	targets[1].Errors = 5
	return &loadgen.Result{
		Statuses: loadgen.StatusClasses{Success: 19990, Redirection: 3, ClientError: 5, ServerError: 2},
		OKStatus: loadgen.DefaultOKStatus, Targets: targets,
		TLS:   loadgen.TLSStats{Handshakes: 70, Resumed: 6, Version: "TLS 1.3", CipherSuite: "TLS_AES_128_GCM_SHA256"},
		Drain: loadgen.Drain{Requests: 64, Errors: 1, Timeouts: 2, Elapsed: 1500 * time.Millisecond, Latency: drain},
		URL:   "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample", Method: "GET",
		Connections: 64, Threads: 2, KeepAlive: true, Pacer: "constant 2000/s",
		OfferedRate: 2000, AchievedRate: 1999.5, Elapsed: 10 * time.Second,
		Requests: 20000, Sent: 20000, Bytes: 12345678, BodyBytes: 7940000,
		KeepAliveResponses: 19990, DocumentLength: 397, Server: "Apache-Coyote/1.1",
		Errors:      loadgen.Errors{Connect: 3, Read: 2, Write: 1, Timeout: 4, Status: 7},
		Connects:    67,
		Histograms:  h,
		RateSamples: []float64{990, 1010, 1000, 1005, 995, 2330, 1000, 1000},
	}
}

func record(h *hdrhistogram.Histogram, v int64) {
	if err := h.RecordValue(v); err != nil {
		panic(err)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), string(got))
}

func TestWrkReportGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteWrkHeader(&buf, goldenResult().URL, 10*time.Second, 2, 64))
	require.NoError(t, report.WriteWrk(&buf, goldenResult(), report.WrkOptions{Latency: true, Uncorrected: true}))
	golden(t, "TestWrkReportGolden", buf.Bytes())
	out := buf.String()
	// The layout of wrk2's lines, checked against the seeds independently
	// of the golden file.
	assert.Contains(t, out, "Running 10s test @ http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample\n  2 threads and 64 connections\n")
	assert.Contains(t, out, "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n")
	assert.Contains(t, out, "  20000 requests in 10.00s, 11.77MB read\n")
	assert.Contains(t, out, "  Socket errors: connect 3, read 2, write 1, timeout 4\n")
	assert.Contains(t, out, "  Non-2xx or 3xx responses: 7\n")
	assert.Contains(t, out, "Requests/sec:   2000.00\n")
	assert.Contains(t, out, "  Drained after the window in 1.50s: 64 responses, 1 errors, 2 timeouts (not counted above)\n")
	assert.Contains(t, out, "#[Buckets =           27, SubBuckets     =         2048]\n")
	assert.Contains(t, out, "Uncorrected Latency (measured without taking delayed starts into account)")
	lines := strings.Split(out, "\n")
	var inf int
	for _, l := range lines {
		if strings.HasSuffix(l, "         inf") && strings.Contains(l, "1.000000") {
			inf++
		}
	}
	assert.Equal(t, 2, inf, "one inf row per spectrum")
}

func TestWrkReportNoErrors(t *testing.T) {
	r := goldenResult()
	r.Errors = loadgen.Errors{}
	r.Statuses, r.Targets = loadgen.StatusClasses{Success: r.Requests}, nil
	var buf bytes.Buffer
	require.NoError(t, report.WriteWrk(&buf, r, report.WrkOptions{}))
	golden(t, "TestWrkReportNoErrors", buf.Bytes())
	assert.NotContains(t, buf.String(), "Socket errors")
	assert.NotContains(t, buf.String(), "Latency Distribution")
}

// TestWrkRowsMatchSeeds renders the Thread Stats rows and totals of the
// seeds' wrk2 outputs from their numbers and compares them byte for byte.
func TestWrkRowsMatchSeeds(t *testing.T) {
	seed := func(name string) string {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(testutilCorpus(t)), "seeds", name))
		require.NoError(t, err)
		return string(b)
	}
	s000 := seed("000_1964f346f2f21741.txt")
	assert.Contains(t, s000, report.StatsRow("Latency", 16.76e6, 6.59e6, 27.56e6, 56.98, report.FormatTimeUS))
	assert.Contains(t, s000, report.StatsRow("Req/Sec", 1970, 165.05, 2330, 89.90, report.FormatMetricForTest))
	assert.Contains(t, s000, report.StatsRow("Req/Sec", 2160, 5.91, 2170, 77.50, report.FormatMetricForTest))
	assert.Contains(t, s000, report.StatsRow("Latency", 10.26e6, 4.55e6, 19.81e6, 62.51, report.FormatTimeUS))
	s001 := seed("001_1af142794ed83a53.txt")
	assert.Contains(t, s001, report.StatsRow("Latency", 8.35e6, 4.14e6, 16.33e6, 61.16, report.FormatTimeUS))
	assert.Contains(t, s001, "  22712999 requests in "+report.FormatTimeUS(60e6)+", "+report.FormatBinaryForTest(11.78*(1<<30))+"B read\n")
}

func TestABReportGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteABHeader(&buf, goldenResult().URL))
	require.NoError(t, report.WriteAB(&buf, goldenResult(), 149))
	golden(t, "TestABReportGolden", buf.Bytes())
	out := buf.String()
	for _, want := range []string{
		"Benchmarking 127.0.0.1 (be patient)\n",
		"\n\nServer Software:        Apache-Coyote/1.1\nServer Hostname:        127.0.0.1\nServer Port:            8080\n\n",
		"Document Path:          /examples/servlets/servlet/HelloWorldExample\nDocument Length:        397 bytes\n\n",
		"Concurrency Level:      149\nTime taken for tests:   10.000 seconds\nComplete requests:      20000\n",
		"Failed requests:        9\n   (Connect: 3, Receive: 6, Length: 0, Exceptions: 0)\n",
		"Write errors:           1\n", "Non-2xx responses:      7\n", "Keep-Alive requests:    19990\n",
		"Requests per second:    2000.00 [#/sec] (mean)\n",
		"Time per request:       74.500 [ms] (mean)\n",
		"Time per request:       0.500 [ms] (mean, across all concurrent requests)\n",
		"\nConnection Times (ms)\n              min  mean[+/-sd] median   max\nConnect:    ",
		"\nPercentage of the requests served within a certain time (ms)\n  50%  ",
		" (longest request)\n",
	} {
		assert.Contains(t, out, want)
	}
}

func TestJSONHasEveryNumber(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteJSON(&buf, goldenResult()))
	golden(t, "TestJSONHasEveryNumber", buf.Bytes())
	var j struct {
		Histograms map[string]struct {
			Encoded string `json:"hdr_base64"`
		} `json:"histograms"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &j))
	lat := j.Histograms["latency"]
	h, err := hdrhistogram.Decode([]byte(lat.Encoded))
	require.NoError(t, err)
	assert.True(t, h.Equals(goldenResult().Histograms.Latency), "the encoded histogram round-trips")
	assert.Len(t, j.Histograms, 6)
}

func testutilCorpus(t *testing.T) string { return testutil.CorpusDir(t) }
