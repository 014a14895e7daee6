//go:build linux

package study

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nettune/nettune/tuning"
)

// PlannedStep is one step of the plan as its Prepare gave it: the change
// -apply would make (Change.Describe with its diff), why it is skipped or
// unchanged, or why it cannot be planned (Err).
type PlannedStep struct {
	Name, Title string
	// Baseline marks a step of the baseline.
	Baseline bool
	// Change is the step's dry run; nil when Err is set.
	Change *tuning.Change
	Err    error
	// Search is the step's planned search (-search on: maxThreads, the
	// queue count): the candidates -apply measures; nil for others.
	Search *Search
}

// Status is the step's status in the plan: StatusChange (-apply would
// change something), StatusUnchanged, StatusSkipped or StatusFailed (it
// cannot be planned).
func (p PlannedStep) Status() string {
	switch {
	case p.Err != nil:
		return StatusFailed
	case p.Change.Skip != "":
		return StatusSkipped
	case p.Change.Apply == nil:
		return StatusUnchanged
	}
	return StatusChange
}

// StatusChange is a planned step that -apply would apply (-plan's
// -json).
const StatusChange = "change"

// PlanReport is -plan's result: every step planned from the host, and
// how long an -apply run of them would take at most (Estimate) and
// likely (Likely).
type PlanReport struct {
	Steps            []PlannedStep
	Estimate, Likely time.Duration
}

// PlanSteps prepares every step o.Steps names on h, in order, reading
// only: no load, no JVM, no change to the host. A step that cannot be
// planned keeps its error and the others are planned still.
func PlanSteps(ctx context.Context, h Host, o Options) (PlanReport, error) {
	f := &Findings{}
	steps, err := Steps(h, o, f)
	if err != nil {
		return PlanReport{}, err
	}
	rep := PlanReport{Estimate: Estimate(h, o, steps), Likely: Likely(h, o, steps)}
	for _, st := range steps {
		ch, err := st.Prepare(ctx)
		if err == nil && ch == nil {
			ch = &tuning.Change{}
		}
		p := PlannedStep{Name: st.Name, Title: st.Title, Baseline: st.Baseline, Change: ch, Err: err}
		if err != nil {
			p.Change = nil
		}
		p.Search = f.Searches[st.Name]
		rep.Steps = append(rep.Steps, p)
	}
	return rep, nil
}

// WritePlan prints each step of the plan: its title, then its change
// (the diff of a file it edits), or why it is skipped, unchanged or
// cannot be planned.
func WritePlan(w io.Writer, steps []PlannedStep) {
	fmt.Fprintln(w, "== Plan (nothing is changed without -apply) ==")
	for i, p := range steps {
		fmt.Fprintf(w, "%d. %s: %s\n", i+1, p.Name, p.Title)
		ch := p.Change
		switch p.Status() {
		case StatusFailed:
			fmt.Fprintf(w, "   cannot plan: %v\n", p.Err)
		case StatusSkipped:
			fmt.Fprint(w, indent(ch.Describe))
			fmt.Fprintf(w, "   skipped: %s\n", ch.Skip)
		case StatusUnchanged:
			fmt.Fprintf(w, "   unchanged: %s\n", firstNonEmpty(strings.TrimSpace(ch.Describe), "nothing to do"))
		default:
			fmt.Fprint(w, indent(ch.Describe))
		}
	}
}

// PlanJSON is -plan's part of -json's document (Document.Plan): the host
// as discovered and every step's change as planned. Durations are in ms.
type PlanJSON struct {
	// Root is the host root planned on; Live is false for a fixture.
	Root  string         `json:"root"`
	Live  bool           `json:"live"`
	Host  HostJSON       `json:"host"`
	Steps []PlanStepJSON `json:"steps"`
	// ApplyEstimateMS bounds the duration of an -apply run of the plan
	// with the same flags (Estimate).
	ApplyEstimateMS int64 `json:"apply_estimate_ms"`
	// ElapsedMS is how long discovering and planning took.
	ElapsedMS int64 `json:"elapsed_ms"`
}

// PlanStepJSON is one planned step.
type PlanStepJSON struct {
	Step     string `json:"step"`
	Title    string `json:"title"`
	Baseline bool   `json:"baseline"`
	// Status is StatusChange, StatusUnchanged, StatusSkipped or
	// StatusFailed; Reason the skip's reason or the planning error.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Describe is the change as the text output prints it; Diff the
	// unified diffs in it (server.xml, the GRUB defaults file), from the
	// first "--- " line.
	Describe string `json:"describe,omitempty"`
	Diff     string `json:"diff,omitempty"`
	// Journal lists the kinds of the undo records -apply would journal
	// for the change (tuning.Undo.Kind).
	Journal []string `json:"journal_kinds,omitempty"`
	// Search is the planned search: its candidates, unmeasured.
	Search *SearchJSON `json:"search,omitempty"`
}

// HostJSON is what discovery found, in short.
type HostJSON struct {
	CPUsOnline string `json:"cpus_online"`
	// CPUsTomcat are the CPUs the cpus step gives Tomcat, CPUsLoad the
	// others (a local load generator's under affinity), by CPUMethod.
	CPUsTomcat string   `json:"cpus_tomcat"`
	CPUsLoad   string   `json:"cpus_load"`
	CPUs       int      `json:"cpus"`
	CPUMethod  string   `json:"cpu_method"`
	NUMANodes  int      `json:"numa_nodes"`
	CPUsWhy    string   `json:"cpus_why,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	// ServerXML is empty when no Tomcat instance was found (TomcatError
	// says why).
	CatalinaHome string `json:"catalina_home,omitempty"`
	CatalinaBase string `json:"catalina_base,omitempty"`
	ServerXML    string `json:"server_xml,omitempty"`
	Port         string `json:"port,omitempty"`
	Service      string `json:"service,omitempty"`
	Control      string `json:"control,omitempty"`
	JVMs         []int  `json:"jvm_pids,omitempty"`
	TomcatError  string `json:"tomcat_error,omitempty"`
	// NIC is the interface the NIC steps tune ("" none: NICWhy).
	URL        string `json:"url"`
	NIC        string `json:"nic,omitempty"`
	NICNode    int    `json:"nic_numa_node"`
	NICVirtual bool   `json:"nic_virtual,omitempty"`
	NICWhy     string `json:"nic_why,omitempty"`
	Channels   string `json:"nic_channels,omitempty"`
	// Grub is the GRUB defaults file; IOMMU the IOMMU state.
	Grub      string `json:"grub,omitempty"`
	GrubError string `json:"grub_error,omitempty"`
	IOMMU     string `json:"iommu,omitempty"`
}

// PlanJSONOf builds the plan's part of -json's document from the host
// and the plan; elapsed is how long discovering and planning took.
func PlanJSONOf(h Host, rep PlanReport, elapsed time.Duration) PlanJSON {
	p := PlanJSON{Root: h.Root, Live: h.Live, Host: hostJSONOf(h), Steps: []PlanStepJSON{},
		ApplyEstimateMS: rep.Estimate.Milliseconds(), ElapsedMS: elapsed.Milliseconds()}
	for _, s := range rep.Steps {
		st := PlanStepJSON{Step: s.Name, Title: s.Title, Baseline: s.Baseline, Status: s.Status()}
		if s.Search != nil {
			sj := searchJSONOf(s.Search)
			st.Search = &sj
		}
		if s.Err != nil {
			st.Reason = s.Err.Error()
		} else {
			st.Reason = s.Change.Skip
			st.Describe = strings.TrimRight(s.Change.Describe, "\n")
			st.Diff = diffOf(st.Describe)
			for _, u := range s.Change.Undo {
				st.Journal = append(st.Journal, u.Kind)
			}
		}
		p.Steps = append(p.Steps, st)
	}
	return p
}

// diffOf is the unified diff in a change's description: from its first
// "--- " line to the end; "" when it has none.
func diffOf(describe string) string {
	if strings.HasPrefix(describe, "--- ") {
		return describe + "\n"
	}
	if i := strings.Index(describe, "\n--- "); i >= 0 {
		return describe[i+1:] + "\n"
	}
	return ""
}

func hostJSONOf(h Host) HostJSON {
	c := h.CPUs
	j := HostJSON{CPUsOnline: c.Online.String(), CPUsTomcat: c.Tomcat.String(), CPUsLoad: c.Load.String(), CPUs: c.N,
		CPUMethod: c.Method, CPUsWhy: c.Pick.Why, Notes: c.Notes, URL: h.NIC.URL, NIC: h.NIC.Name, NICNode: h.NIC.Node,
		NICVirtual: h.NIC.Virtual, NICWhy: h.NIC.Why, Grub: h.Boot.GrubPath, IOMMU: h.Boot.IOMMU}
	if c.Topology != nil {
		j.NUMANodes = len(c.Topology.Nodes)
	}
	if t := h.Tomcat; t.Instance != nil {
		in := t.Instance
		j.CatalinaHome, j.CatalinaBase, j.ServerXML, j.Port, j.Service = in.Home, in.Base, in.ServerXML(), t.Port, in.Service
		if h.Live {
			j.Control = string(t.Control)
		}
		for _, jvm := range t.JVMs {
			j.JVMs = append(j.JVMs, jvm.PID)
		}
		if t.ConfigErr != nil {
			j.TomcatError = t.ConfigErr.Error()
		}
	} else if t.Err != nil {
		j.TomcatError = t.Err.Error()
	}
	if h.NIC.Channels != nil {
		j.Channels = channelsText(*h.NIC.Channels)
	} else if h.NIC.ChannelsErr != nil && h.NIC.Name != "" {
		j.NICWhy = firstNonEmpty(j.NICWhy, h.NIC.ChannelsErr.Error())
	}
	if h.Boot.Err != nil {
		j.GrubError = h.Boot.Err.Error()
	}
	return j
}

// PlanDocument is -json's document of a -plan run: the study's document
// (DocumentOf) with no step measured, and the plan.
func PlanDocument(o Options, p PlanJSON) Document {
	doc := DocumentOf(o, Results{Alpha: o.Alpha})
	doc.Steps = []StepJSON{}
	doc.Plan = &p
	return doc
}

// WriteJSON writes v, indented, to the file at path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	return nil
}

// WritePlanSummary prints what -plan did not do and what an -apply of
// the plan would take, after the plan.
func WritePlanSummary(w io.Writer, h Host, rep PlanReport, elapsed time.Duration) {
	changes := 0
	for _, s := range rep.Steps {
		if s.Status() == StatusChange {
			changes++
		}
	}
	fmt.Fprintf(w, "planned %d step(s), %d with a change, in %s: no load, no JVM started, nothing changed\n",
		len(rep.Steps), changes, elapsed.Round(time.Millisecond))
	if h.Live {
		fmt.Fprintf(w, "-apply with these flags runs the steps, measuring after each: likely about %s, at most about %s\n",
			rep.Likely.Round(time.Second), rep.Estimate.Round(time.Second))
	}
}
