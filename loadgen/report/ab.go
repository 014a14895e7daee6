package report

import (
	"bufio"
	"fmt"
	"io"
	"net/url"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/nettune/nettune/loadgen"
)

// abHeader is the banner the ab mode prints before a run, in place of
// ApacheBench's own (loadgen is not ApacheBench, so it does not claim to
// be).
const abHeader = "This is nettune loadgen in ApacheBench 2.3 mode\n"

// WriteABHeader writes the banner of ab mode ("This is nettune loadgen in
// ApacheBench 2.3 mode": loadgen does not claim to be ApacheBench) and
// ab's "Benchmarking HOST (be patient)" line.
func WriteABHeader(w io.Writer, rawURL string) error {
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		host = u.Hostname()
	}
	_, err := fmt.Fprintf(w, "%s\nBenchmarking %s (be patient)\n", abHeader, host)
	return err
}

// WriteAB writes res in ApacheBench's report layout: server, document,
// the counts and rates, "Connection Times (ms)" (Connect, Processing,
// Waiting, Total: min, mean, sd, median, max) and the "Percentage of the
// requests served within a certain time (ms)" table. Optional lines appear
// when ab prints them: the failed-requests breakdown, Write errors,
// Non-2xx responses, Keep-Alive requests (with keep-alive), Total body
// sent. The times come from the histograms (3 significant digits), where
// ab keeps every sample.
func WriteAB(w io.Writer, res *loadgen.Result, concurrency int) error {
	b := bufio.NewWriter(w)
	host, port, path := res.URL, "80", "/"
	if u, err := url.Parse(res.URL); err == nil {
		host = u.Hostname()
		if p := u.Port(); p != "" {
			port = p
		}
		path = u.EscapedPath()
		if path == "" {
			path = "/"
		}
		if u.RawQuery != "" {
			path += "?" + u.RawQuery
		}
	}
	fmt.Fprintf(b, "\n\n")
	fmt.Fprintf(b, "Server Software:        %s\n", res.Server)
	fmt.Fprintf(b, "Server Hostname:        %s\n", host)
	fmt.Fprintf(b, "Server Port:            %s\n", port)
	fmt.Fprintf(b, "\n")
	fmt.Fprintf(b, "Document Path:          %s\n", path)
	fmt.Fprintf(b, "Document Length:        %d bytes\n", max(res.DocumentLength, 0))
	fmt.Fprintf(b, "\n")
	e := res.Errors
	recv := e.Read + e.Timeout
	bad := e.Connect + recv + res.LengthMismatches
	secs := res.Elapsed.Seconds()
	fmt.Fprintf(b, "Concurrency Level:      %d\n", concurrency)
	fmt.Fprintf(b, "Time taken for tests:   %.3f seconds\n", secs)
	fmt.Fprintf(b, "Complete requests:      %d\n", res.Requests)
	fmt.Fprintf(b, "Failed requests:        %d\n", bad)
	if bad > 0 {
		fmt.Fprintf(b, "   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n", e.Connect, recv, res.LengthMismatches, 0)
	}
	if e.Write > 0 {
		fmt.Fprintf(b, "Write errors:           %d\n", e.Write)
	}
	if e.Status > 0 {
		fmt.Fprintf(b, "Non-2xx responses:      %d\n", e.Status)
	}
	if res.KeepAlive {
		fmt.Fprintf(b, "Keep-Alive requests:    %d\n", res.KeepAliveResponses)
	}
	fmt.Fprintf(b, "Total transferred:      %d bytes\n", res.Bytes)
	fmt.Fprintf(b, "HTML transferred:       %d bytes\n", res.BodyBytes)
	done := float64(res.Requests)
	if secs > 0 && res.Requests > 0 {
		fmt.Fprintf(b, "Requests per second:    %.2f [#/sec] (mean)\n", done/secs)
		fmt.Fprintf(b, "Time per request:       %.3f [ms] (mean)\n", float64(concurrency)*secs*1000/done)
		fmt.Fprintf(b, "Time per request:       %.3f [ms] (mean, across all concurrent requests)\n", secs*1000/done)
		fmt.Fprintf(b, "Transfer rate:          %.2f [Kbytes/sec] received\n", float64(res.Bytes)/1024/secs)
	}
	if res.Requests > 0 {
		h := res.Histograms
		fmt.Fprintf(b, "\nConnection Times (ms)\n")
		fmt.Fprintf(b, "              min  mean[+/-sd] median   max\n")
		abRow(b, "Connect:    ", h.Connect)
		abRow(b, "Processing: ", h.Processing)
		abRow(b, "Waiting:    ", h.Waiting)
		abRow(b, "Total:      ", h.Latency)
		fmt.Fprintf(b, "\nPercentage of the requests served within a certain time (ms)\n")
		for _, p := range []int{50, 66, 75, 80, 90, 95, 98, 99} {
			fmt.Fprintf(b, "  %d%%  %5d\n", p, roundMS(h.Latency.ValueAtQuantile(float64(p))))
		}
		fmt.Fprintf(b, " 100%%  %5d (longest request)\n", roundMS(h.Latency.Max()))
	}
	return b.Flush()
}

// roundMS rounds microseconds to whole milliseconds as ab does.
func roundMS(us int64) int64 { return (us + 500) / 1000 }

func abRow(b *bufio.Writer, label string, h *hdrhistogram.Histogram) {
	fmt.Fprintf(b, "%s%5d %4d %5.1f %6d %7d\n", label,
		roundMS(h.Min()), roundMS(int64(h.Mean())), h.StdDev()/1000,
		roundMS(h.ValueAtQuantile(50)), roundMS(h.Max()))
}
