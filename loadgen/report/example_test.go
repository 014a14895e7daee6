package report_test

import (
	"fmt"
	"time"

	"github.com/nettune/nettune/loadgen/report"
)

func ExampleFormatDuration() {
	fmt.Println(report.FormatDuration(850 * time.Microsecond))
	fmt.Println(report.FormatDuration(1200 * time.Microsecond))
	fmt.Println(report.FormatTimeUS(16.76e6))
	fmt.Println(report.Percent(10.44))
	// Output:
	// 850us
	// 1.20ms
	// 16.76s
	// +10.4 %
}
