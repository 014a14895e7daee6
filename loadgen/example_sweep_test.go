package loadgen_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// Three generators, each running shard i of 3 of a 3000 requests/s load,
// send every third request of the whole schedule: 1000/s each, offset by
// 1/3000 s, so together they send one evenly spaced load.
func ExampleShard() {
	whole := loadgen.Constant(3000)
	for i := 0; i < 3; i++ {
		p := loadgen.Shard(whole, i, 3)
		fmt.Printf("%s: %g/s, first sends at %v %v\n", p, p.Rate(0), p.Due(0), p.Due(1))
	}
	// Output:
	// shard 0/3 of constant 3000/s: 1000/s, first sends at 0s 1ms
	// shard 1/3 of constant 3000/s: 1000/s, first sends at 333.334µs 1.333334ms
	// shard 2/3 of constant 3000/s: 1000/s, first sends at 666.667µs 1.666667ms
}

// A sweep over connection counts against a server, sampling this
// process's CPU (use the server's PID, e.g. Tomcat's JVM), printed as a
// comparison table with the knee analysis.
func ExampleSweep() {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer hello.Close()
	res, err := loadgen.Sweep(context.Background(), loadgen.SweepConfig{
		Base:        loadgen.Config{URL: hello.URL, Threads: 1},
		Connections: []int{1, 4, 16},
		Warmup:      100 * time.Millisecond,
		Duration:    300 * time.Millisecond,
		PID:         os.Getpid(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res.Levels), "levels; best:", res.Levels[res.Analysis.Best].Name != "")
	// Output:
	// 3 levels; best: true
}

// Record a run's intervals as an HdrHistogram log, one second each, tagged
// corrected, uncorrected and lag.
func ExampleHlogRecorder() {
	hello, err := loadgen.StartHelloWorld("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer hello.Close()
	f, err := os.CreateTemp("", "run-*.hlog")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	rec := report.NewHlogRecorder(f, "example")
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: hello.URL, Rate: 500, Duration: 1500 * time.Millisecond, OnInterval: rec.Record})
	if err != nil || rec.Err() != nil {
		fmt.Println(err, rec.Err())
		return
	}
	if _, err := f.Seek(0, 0); err != nil {
		fmt.Println(err)
		return
	}
	log, err := report.ReadHlog(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, first, last := log.Total(report.TagCorrected)
	fmt.Println(h.TotalCount() == int64(res.Requests), last.Sub(first))
	// Output:
	// true 1.5s
}

// Compare tuning steps against the baseline, as seeds 000-002 report
// their uplift.
func ExampleCompare() {
	c := loadgen.Compare(
		loadgen.Figures{Name: "baseline", Throughput: 244000},
		loadgen.Figures{Name: "iommu", Throughput: 272000},
		loadgen.Figures{Name: "nic queues", Throughput: 358000},
		loadgen.Figures{Name: "numa", Throughput: 379000},
	)
	for _, r := range c.Rows[1:] {
		fmt.Printf("%-10s %+.1f%% vs baseline, %+.1f%% vs previous\n", r.Name, r.VsBaseline, r.VsPrevious)
	}
	// Output:
	// iommu      +11.5% vs baseline, +11.5% vs previous
	// nic queues +46.7% vs baseline, +31.6% vs previous
	// numa       +55.3% vs baseline, +5.9% vs previous
}
