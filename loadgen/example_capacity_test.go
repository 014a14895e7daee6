package loadgen_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
)

// One configuration measured as a tuning study measures each step: warm
// up until the rate stops climbing, then DefaultRepeat saturating runs
// (the capacity, with the runs for CompareSteps' test), then latency at a
// rate common to every configuration. For a JVM, set
// WarmUpOptions.CompilerShare to tomcatconf's JITMeter.CompilerShare so
// that the warm-up also waits for the JIT compilers.
func ExampleMeasureCapacity() {
	ctx := context.Background()
	url := "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample"
	w, err := loadgen.WarmUp(ctx, loadgen.Config{URL: url, Connections: 64}, &loadgen.WarmUpOptions{
		OnRun: func(r loadgen.WarmUpRun) { fmt.Printf("warm-up run %d: %.0f req/s\n", r.Index, r.Rate) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	c, err := loadgen.MeasureCapacity(ctx, loadgen.Config{URL: url, Connections: 64, Duration: 5 * time.Second},
		&loadgen.CapacityOptions{Repeat: stats.DefaultRepeat})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Printf("capacity %.0f req/s (%.0f-%.0f), saturated %v\n", c.Rate.Median, c.Rate.Min, c.Rate.Max, c.Saturated)
	res, err := loadgen.Run(ctx, loadgen.Config{URL: url, Connections: 64, Duration: 5 * time.Second, Rate: 0.6 * c.Rate.Median})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	step := loadgen.StepFigures{Name: "baseline", Capacity: c.Rate, CapacityRuns: c.Rates(), CapacityErrors: c.Errors,
		Latency: loadgen.FiguresOf("baseline", res), Unsettled: !w.Settled}
	fmt.Print(loadgen.CompareSteps(step).Text())
}

// Six runs per step: the access log's +8 % is a gain, with its interval
// and p; threads' +0.7 % on it is not; the guide's figure sits beside.
func ExampleCompareSteps() {
	c := loadgen.CompareSteps(
		loadgen.StepFigures{Name: "baseline", CapacityRuns: []float64{12100, 12400, 12900, 12650, 12300, 12500}},
		loadgen.StepFigures{Name: "access-log", CapacityRuns: []float64{13300, 13500, 13900, 13650, 13100, 13400},
			Reference: &loadgen.Reference{Source: "guide", VsPrevious: 11.1}},
		loadgen.StepFigures{Name: "threads", CapacityRuns: []float64{13200, 13650, 13800, 13500, 13350, 13600},
			Reference: &loadgen.Reference{Source: "guide", VsPrevious: 31.7}},
	)
	for _, r := range c.Rows[1:] {
		fmt.Printf("%s: %s vs baseline; %s vs previous (the guide: %+.1f %%)\n",
			r.Name, r.VsBaseline, r.VsPrevious, r.Reference.VsPrevious)
	}
	// Output:
	// access-log: +8.0 % [+4.8, +11.2] p=0.002 vs baseline; +8.0 % [+4.8, +11.2] p=0.002 vs previous (the guide: +11.1 %)
	// threads: +8.8 % [+5.5, +11.3] p=0.002 vs baseline; no significant change (+0.7 % [-2.2, +3.0] p=0.788) vs previous (the guide: +31.7 %)
}
