//go:build linux

package study

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/stats"
	"github.com/nettune/nettune/tomcatconf"
)

// Search modes (Options.Search): measure candidates where the guide
// applies a rule, or apply the guide's rules exactly.
const (
	SearchOn  = "on"
	SearchOff = "off"
)

// Candidate is one value a searched step measures.
type Candidate struct {
	Value int
	// Why says where the value comes from: "the guide's rule: CPUs - 1",
	// "the thread census", "4 × CPUs".
	Why string
	// Previous marks the value the server ran with before the step: its
	// figures are the step before's, not measured again.
	Previous bool
	// Figures are the candidate's, once measured.
	Figures *loadgen.StepFigures
}

// Search is a step measured over several values of its setting instead
// of applying the guide's rule alone: the rule first (the step's own
// change), then each other candidate in place, and the best kept
// (loadgen.PickBest).
type Search struct {
	Step string
	// Setting names the values: "maxThreads", "queues".
	Setting    string
	Candidates []Candidate
	// Rule is the index of the guide's rule among Candidates.
	Rule int
	// Choice is PickBest's over Candidates (its indexes are theirs); nil
	// until every candidate is measured.
	Choice *loadgen.Choice
	// set puts a candidate's value in place (the step's journaled change
	// restores the original, whatever the search wrote since).
	set func(ctx context.Context, c Candidate) error
}

// addCandidate appends c to cs, or, when its value is there already, adds
// its reason to that candidate's.
func addCandidate(cs []Candidate, c Candidate) []Candidate {
	for i := range cs {
		if cs[i].Value == c.Value {
			if !strings.Contains(cs[i].Why, c.Why) {
				cs[i].Why += "; " + c.Why
			}
			cs[i].Previous = cs[i].Previous || c.Previous && i > 0
			return cs
		}
	}
	return append(cs, c)
}

// ThreadCandidates are the maxThreads values the threads step measures on
// cpus CPUs: the guide's rule CPUs − 1 first (index 0, what the step
// applies), the census's recommendation when there is one, 2× and 4× the
// CPUs, and the pool the server ran with before the step (current;
// Tomcat's default is 200), whose figures are the step before's. A value
// two reasons give is measured once.
func ThreadCandidates(cpus int, census *tomcatconf.Recommendation, current int) []Candidate {
	return threadCandidates(cpus, census, current, nil)
}

// threadCandidates is ThreadCandidates with the user's values
// (-threads-candidates), when there are any, in place of the census's
// and the multiples of the CPUs.
func threadCandidates(cpus int, census *tomcatconf.Recommendation, current int, user []int) []Candidate {
	cs := []Candidate{{Value: max(1, cpus-1), Why: "the guide's rule: CPUs − 1"}}
	switch {
	case len(user) > 0:
		for _, v := range user {
			cs = addCandidate(cs, Candidate{Value: v, Why: "-threads-candidates"})
		}
	default:
		if census != nil && census.MaxThreads > 0 {
			cs = addCandidate(cs, Candidate{Value: census.MaxThreads, Why: "the thread census"})
		}
		cs = addCandidate(cs, Candidate{Value: 2 * cpus, Why: "2 × CPUs"})
		cs = addCandidate(cs, Candidate{Value: 4 * cpus, Why: "4 × CPUs"})
	}
	if current > 0 {
		why := "as before the step"
		if current == 200 {
			why += ", Tomcat's default"
		}
		cs = addCandidate(cs, Candidate{Value: current, Why: why, Previous: true})
	}
	return cs
}

// QueueCandidates are the queue counts the nic-queues step measures on
// cpus CPUs, for a device of at most limit queues that has current now:
// the guide's rule (queues = CPUs, capped at limit) first, then one
// queue, CPUs / 2, the device's maximum, and current (the step before's
// figures).
func QueueCandidates(cpus, limit, current uint32) []Candidate {
	return queueCandidates(cpus, limit, current, nil)
}

// queueCandidates is QueueCandidates with the user's counts
// (-queues-candidates, capped at limit), when there are any, in place of
// one queue, CPUs / 2 and the maximum.
func queueCandidates(cpus, limit, current uint32, user []int) []Candidate {
	capped := func(n uint32) int { return int(max(1, min(n, limit))) }
	cs := []Candidate{{Value: capped(cpus), Why: "the guide's rule: queues = CPUs"}}
	switch {
	case len(user) > 0:
		for _, v := range user {
			cs = addCandidate(cs, Candidate{Value: capped(uint32(v)), Why: "-queues-candidates"})
		}
	default:
		cs = addCandidate(cs, Candidate{Value: 1, Why: "one queue"})
		cs = addCandidate(cs, Candidate{Value: capped(cpus / 2), Why: "CPUs / 2"})
		cs = addCandidate(cs, Candidate{Value: capped(limit), Why: "the device's maximum"})
	}
	if current > 0 {
		cs = addCandidate(cs, Candidate{Value: int(current), Why: "as before the step", Previous: true})
	}
	return cs
}

// values lists the candidates' values: "1, 2, 4, 200".
func (s *Search) values() string {
	v := make([]string, len(s.Candidates))
	for i, c := range s.Candidates {
		v[i] = strconv.Itoa(c.Value)
	}
	return strings.Join(v, ", ")
}

// Plan says what the step measures, for its description.
func (s *Search) Plan() string {
	var parts []string
	for i, c := range s.Candidates {
		if i != s.Rule {
			parts = append(parts, fmt.Sprintf("%d (%s)", c.Value, c.Why))
		}
	}
	return fmt.Sprintf("search: %s=%d (%s) first, then measured against %s; the best is kept (-search=false: the rule alone)",
		s.Setting, s.Candidates[s.Rule].Value, s.Candidates[s.Rule].Why, strings.Join(parts, ", "))
}

// Best is the chosen candidate; false before the choice.
func (s *Search) Best() (Candidate, bool) {
	if s.Choice == nil {
		return Candidate{}, false
	}
	return s.Candidates[s.Choice.Best], true
}

// Label is the step's setting for the step table:
// "maxThreads=4 (measured best; the guide's rule 1: −27 %)", or, when the
// rule won, "maxThreads=1 (the guide's rule, measured best of 1, 2, 4,
// 200)".
func (s *Search) Label() string {
	best, ok := s.Best()
	if !ok {
		return ""
	}
	if s.Choice.Best == s.Rule {
		return fmt.Sprintf("%s=%d (the guide's rule, measured best of %s)", s.Setting, best.Value, s.values())
	}
	u := s.Choice.VsBest[s.Rule]
	rule := fmt.Sprintf("%+.0f %%", u.Percent)
	if math.Abs(u.Percent) < 10 {
		rule = fmt.Sprintf("%+.1f %%", u.Percent)
	}
	rule = strings.Replace(rule, "-", "−", 1)
	if !u.Verdict.Significant() {
		rule += ", " + string(u.Verdict)
	}
	return fmt.Sprintf("%s=%d (measured best; the guide's rule %d: %s)", s.Setting, best.Value, s.Candidates[s.Rule].Value, rule)
}

// Text lists every candidate with its capacity and its change against
// the best, and why the best won.
func (s *Search) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s searched over %s (median capacity; change against the best):\n", s.Step, s.Setting, s.values())
	for i, c := range s.Candidates {
		mark, capacity, vs := "", "not measured", ""
		if c.Figures != nil {
			sp := c.Figures.Capacity
			if sp.N == 0 {
				sp = stats.SpreadOf(c.Figures.CapacityRuns)
			}
			capacity = fmt.Sprintf("%.0f req/s", sp.Median)
			if c.Figures.Unsettled {
				capacity += " (unsettled)"
			}
		}
		if s.Choice != nil {
			if i == s.Choice.Best {
				mark = "best"
			} else {
				vs = s.Choice.VsBest[i].String()
			}
		}
		fmt.Fprintf(&b, "   %6d  %-4s %-22s %s  %s\n", c.Value, mark, capacity, vs, "("+c.Why+")")
	}
	if best, ok := s.Best(); ok {
		fmt.Fprintf(&b, "   kept %s=%d: %s\n", s.Setting, best.Value, s.Choice.Why)
	}
	return b.String()
}

// search measures a searched step's other candidates after the rule's
// own measurement (the last of r.measured), keeps the best in place and
// makes its figures the step's row, labelled (Search.Label).
func (r *run) search(ctx context.Context, s *Search) error {
	n := len(r.measured)
	if n == 0 {
		return fmt.Errorf("%s: search: the rule's value was not measured", s.Step)
	}
	rule := r.measured[n-1]
	s.Candidates[s.Rule].Figures = &rule
	last := s.Rule
	for i := range s.Candidates {
		c := &s.Candidates[i]
		if i == s.Rule {
			continue
		}
		if c.Previous && n >= 2 {
			prev := r.measured[n-2]
			c.Figures = &prev
			fmt.Fprintf(r.log, "== %s: %s=%d (%s): the figures of %s ==\n", s.Step, s.Setting, c.Value, c.Why, prev.Name)
			continue
		}
		name := fmt.Sprintf("%s %s=%d", s.Step, s.Setting, c.Value)
		fmt.Fprintf(r.log, "== %s: try %s=%d (%s) ==\n", s.Step, s.Setting, c.Value, c.Why)
		if err := s.set(ctx, *c); err != nil {
			return fmt.Errorf("%s: set %s=%d: %w", s.Step, s.Setting, c.Value, err)
		}
		last = i
		if err := r.restart(ctx); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		m, err := r.measure(ctx, name, r.h.NIC.URL, r.jvmPID)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		c.Figures = &m
	}
	figs := make([]loadgen.StepFigures, len(s.Candidates))
	for i, c := range s.Candidates {
		figs[i] = *c.Figures
	}
	ch, err := loadgen.PickBest(figs, &stats.UpliftOptions{Alpha: r.o.Alpha})
	if err != nil {
		return fmt.Errorf("%s: %w", s.Step, err)
	}
	s.Choice = &ch
	best := s.Candidates[ch.Best]
	if ch.Best != last {
		if err := s.set(ctx, best); err != nil {
			return fmt.Errorf("%s: keep %s=%d: %w", s.Step, s.Setting, best.Value, err)
		}
		if r.o.Keep {
			if err := r.restart(ctx); err != nil {
				return err
			}
		}
	}
	row := *best.Figures
	row.Name, row.Setting, row.Reference = s.Step, s.Label(), rule.Reference
	r.measured[n-1] = row
	if why := r.bound[best.Figures.Name]; why != "" && ch.Best != s.Rule {
		r.bound[s.Step] = why
	} else if ch.Best != s.Rule {
		delete(r.bound, s.Step)
	}
	if c, ok := r.costs[best.Figures.Name]; ok {
		r.costs[s.Step] = c
	}
	if wu, ok := r.warmUps[best.Figures.Name]; ok {
		r.warmUps[s.Step] = wu
	}
	if wu, ok := r.firstWarmUps[best.Figures.Name]; ok {
		r.firstWarmUps[s.Step] = wu
	} else {
		delete(r.firstWarmUps, s.Step)
	}
	r.findings.choose(s.Step, best.Value)
	r.searches = append(r.searches, *s)
	fmt.Fprint(r.log, s.Text())
	return nil
}
