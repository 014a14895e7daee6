package loadgen_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// A closed loop, as ab -k -n 1000 -c 8, against the built-in page.
func ExampleRun() {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer hello.Close()
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: hello.URL, Connections: 8, Requests: 1000})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Requests, "requests,", res.Errors.Socket(), "socket errors, document length", res.DocumentLength)
	// Output: 1000 requests, 0 socket errors, document length 387
}

// An open-model run at a fixed rate (wrk2 -R), printed as wrk2 prints it.
func ExampleRun_fixedRate() {
	cfg := loadgen.Config{
		URL:         "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample",
		Connections: 64,
		Threads:     2,
		Rate:        15000,
		Duration:    10 * time.Second,
		Warmup:      2 * time.Second,
	}
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	report.WriteWrkHeader(os.Stdout, cfg.URL, cfg.Duration, res.Threads, cfg.Connections)
	report.WriteWrk(os.Stdout, res, report.WrkOptions{Latency: true})
	fmt.Printf("offered %.0f/s, achieved %.0f/s, send lag p99 %d us\n",
		res.OfferedRate, res.AchievedRate, res.Histograms.Lag.ValueAtQuantile(99))
}

func ExampleFormatTimeUS() {
	fmt.Println(report.FormatTimeUS(849), report.FormatTimeUS(850), report.FormatTimeUS(16.76e6), report.FormatTimeUS(60e6))
	// Output: 849.00us 0.85ms 16.76s 1.00m
}

// Live progress from interval snapshots.
func ExampleConfig_onInterval() {
	cfg := loadgen.Config{
		URL:      "http://127.0.0.1:8080/",
		Rate:     2000,
		Duration: 5 * time.Second,
		OnInterval: func(s loadgen.Snapshot) {
			fmt.Printf("%s: %d requests, p99 so far %d us\n", s.End, s.Requests, s.Cumulative.ValueAtQuantile(99))
		},
	}
	if _, err := loadgen.Run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
