package stats_test

import (
	"fmt"

	"github.com/nettune/nettune/loadgen/stats"
)

// Six capacity runs of a baseline and of a tuned configuration, in
// requests/s: the tuned runs are all higher, by about 8 %.
func ExampleUpliftOfRuns() {
	before := []float64{12100, 12400, 12900, 12650, 12300, 12500}
	after := []float64{13300, 13500, 13900, 13650, 13100, 13400}
	u, err := stats.UpliftOfRuns(before, after, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Verdict)
	fmt.Println(u)
	fmt.Println(stats.SpreadOf(after).Median)
	// Output:
	// gain
	// +8.0 % [+4.8, +11.2] p=0.002
	// 13450
}
