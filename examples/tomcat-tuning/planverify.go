//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/study"
)

// planOnly is -plan: discover, print the host and every step's change,
// and write -json; no load, no JVM, no change.
func planOnly(ctx context.Context, w io.Writer, o study.Options) error {
	start := time.Now()
	if err := o.Check(); err != nil {
		return err
	}
	h, err := study.Discover(ctx, o)
	if err != nil {
		return err
	}
	study.WriteHost(w, h)
	rep, err := study.PlanSteps(ctx, h, o)
	if err != nil {
		return err
	}
	study.WritePlan(w, rep.Steps)
	elapsed := time.Since(start)
	study.WritePlanSummary(w, h, rep, elapsed)
	if o.JSONFile == "" {
		return nil
	}
	if err := study.WriteJSON(o.JSONFile, study.PlanDocument(o, study.PlanJSONOf(h, rep, elapsed))); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote the plan to %s\n", o.JSONFile)
	return nil
}
