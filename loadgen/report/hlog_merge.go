package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/nettune/nettune/loadgen/internal/format"
)

// Summary renders a merge: each generator's count, active window and
// rate, then the total count, the throughput (sum of each generator's
// rate) and the merged latency percentiles.
func (m *MergedLogs) Summary(names []string, tag string) string {
	rows := [][]string{{"log", "requests", "window", "req/s"}}
	for i := range m.Windows {
		name := fmt.Sprintf("log %d", i+1)
		if i < len(names) {
			name = names[i]
		}
		rows = append(rows, []string{name, fmt.Sprint(m.Counts[i]), fmt.Sprintf("%.3fs", m.Windows[i].Seconds()), fmt.Sprintf("%.2f", rate(m.Counts[i], m.Windows[i]))})
	}
	var b strings.Builder
	b.WriteString(format.Table(rows))
	h := m.Total
	fmt.Fprintf(&b, "\nmerged %q: %d requests, %.2f requests/sec\n", tag, h.TotalCount(), m.Throughput)
	fmt.Fprintf(&b, "  mean %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		format.Duration(format.Micros(h.Mean())), format.Duration(format.Micros(float64(h.ValueAtQuantile(50)))),
		format.Duration(format.Micros(float64(h.ValueAtQuantile(90)))), format.Duration(format.Micros(float64(h.ValueAtQuantile(99)))),
		format.Duration(format.Micros(float64(h.ValueAtQuantile(99.9)))), format.Duration(format.Micros(float64(h.Max()))))
	if m.Dropped > 0 {
		fmt.Fprintf(&b, "  %d values out of range were dropped\n", m.Dropped)
	}
	return b.String()
}

func rate(n int64, w time.Duration) float64 {
	if w <= 0 {
		return 0
	}
	return float64(n) / w.Seconds()
}
