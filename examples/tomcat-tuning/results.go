//go:build linux

package main

import (
	"fmt"
	"strings"

	"github.com/nettune/nettune/tuning"
)

// formatResults renders step results as an aligned text table.
func formatResults(results []tuning.StepResult) string {
	var b strings.Builder
	w := len("step")
	for _, r := range results {
		w = max(w, len(r.Name))
	}
	fmt.Fprintf(&b, "%-*s  %-9s  %s\n", w, "step", "status", "detail")
	for _, r := range results {
		fmt.Fprintf(&b, "%-*s  %-9s  %s\n", w, r.Name, r.Status, r.Reason)
	}
	return b.String()
}
