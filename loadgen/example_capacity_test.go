package loadgen_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nettune/nettune/loadgen"
)

// One configuration measured as a tuning study measures each step: warm
// up until the rate stops climbing, then three saturating runs (the
// capacity, with its spread), then latency at a rate common to every
// configuration.
func ExampleMeasureCapacity() {
	ctx := context.Background()
	url := "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample"
	w, err := loadgen.WarmUp(ctx, loadgen.Config{URL: url, Connections: 64}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Printf("warm-up: %.0f req/s, stable %v\n", w.Rates, w.Stable)
	c, err := loadgen.MeasureCapacity(ctx, loadgen.Config{URL: url, Connections: 64, Duration: 5 * time.Second},
		&loadgen.CapacityOptions{Repeat: 3})
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
	step := loadgen.StepFigures{Name: "baseline", Capacity: c.Rate, CapacityErrors: c.Errors, Latency: loadgen.FiguresOf("baseline", res)}
	fmt.Print(loadgen.CompareSteps(step).Text())
}

// Three runs per step: the first uplift stands out of the runs' spread,
// the second does not.
func ExampleCompareSteps() {
	c := loadgen.CompareSteps(
		loadgen.StepFigures{Name: "baseline", Capacity: loadgen.SpreadOf([]float64{12100, 12400, 12900})},
		loadgen.StepFigures{Name: "access-log", Capacity: loadgen.SpreadOf([]float64{14900, 15200, 15300})},
		loadgen.StepFigures{Name: "threads", Capacity: loadgen.SpreadOf([]float64{14800, 15400, 15600})},
	)
	for _, r := range c.Rows[1:] {
		fmt.Printf("%s: %+.1f%% vs baseline (noise %v), %+.1f%% vs previous (noise %v)\n",
			r.Name, r.VsBaseline.Percent, r.VsBaseline.Noise, r.VsPrevious.Percent, r.VsPrevious.Noise)
	}
	// Output:
	// access-log: +22.6% vs baseline (noise false), +22.6% vs previous (noise false)
	// threads: +24.2% vs baseline (noise false), +1.3% vs previous (noise true)
}
