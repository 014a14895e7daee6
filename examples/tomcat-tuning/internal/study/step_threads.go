//go:build linux

package study

import (
	"context"
	"fmt"
	"os"

	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// threadsKind sets maxThreads by the guide's rule, planned from the
// census and searched over candidates.
func threadsKind() Kind {
	return Kind{Name: StepThreads, Title: title("maxThreads: the guide's CPUs - 1 and measured candidates, keep-alive limits"),
		Plan: (*planner).threads, Needs: Needs{Census: true, Measures: threadsMeasures, Persist: persistThreads, GuideUplift: uplift(31.7)}}
}

// threads sets the guide's maxThreads = CPUs - 1 with its keep-alive
// limits. With -search (the default) that is the first candidate: the
// run then measures the census's recommendation, 2× and 4× the CPUs and
// the pool before the step in its place, and keeps the best (Search).
func (p *planner) threads(context.Context) (*tuning.Change, error) {
	if !p.h.Tomcat.Usable() {
		return &tuning.Change{Skip: fmt.Sprintf("no Tomcat instance: %v", p.h.Tomcat.why())}, nil
	}
	workers := max(1, p.h.CPUs.N-1)
	how := fmt.Sprintf("the guide's CPUs - 1 = %d", workers)
	ch, e, err := p.serverXML(func(c *tomcatconf.Config) error {
		_, err := c.SetConnector(p.h.Tomcat.Query, tomcatconf.ArmGuideConnectorAttrs(workers), &tomcatconf.SetOptions{ToExecutor: true})
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.o.Search != SearchOff {
		cur, err := tomcatconf.Parse(e.Path, []byte(e.Before))
		if err != nil {
			return nil, err
		}
		current, err := cur.MaxThreads(p.h.Tomcat.Query)
		if err != nil {
			current = 0 // a ${...} pool: measured as a candidate of its own is not possible; left out
		}
		s := threadSearch(e.Path, p.h.Tomcat.Query, p.o.threadCandidates(p.h.CPUs.N, p.f.Census, current), e.Before)
		p.f.search(s)
		how += "\n" + s.Plan()
		if p.f.Census == nil && len(p.o.ThreadCandidates) == 0 {
			how += " (-apply adds the thread census's recommendation)"
		}
		if !e.Changed() {
			// Already the rule: the step is applied as it is (a write of
			// the same bytes, journaled), so that it is measured and the
			// search runs from it.
			if ch, err = tuning.ChangeFor(e); err != nil {
				return nil, err
			}
			ch.Describe = e.Path + " already has the guide's Connector attributes: kept as it is and measured, for the search"
		}
	}
	ch.Describe = fmt.Sprintf("maxThreads=%d from %s\n%s", workers, how, ch.Describe)
	return ch, nil
}

// threadsMeasures: the rule, and with -search each measured candidate
// and the census's recommendation.
func threadsMeasures(h Host, o Options) int {
	if o.Search == SearchOff {
		return 1
	}
	if len(o.ThreadCandidates) > 0 {
		return 1 + measuredCandidates(o.threadCandidates(h.CPUs.N, nil, currentMaxThreads(h)))
	}
	return 1 + measuredCandidates(ThreadCandidates(h.CPUs.N, nil, currentMaxThreads(h))) + 1 // + the census's
}

// threadCandidates are the maxThreads candidates, with -threads-candidates.
func (o Options) threadCandidates(cpus int, census *tomcatconf.Recommendation, current int) []Candidate {
	return threadCandidates(cpus, census, current, o.ThreadCandidates)
}

// persistThreads keeps the search's maxThreads (the guide's rule
// without one) with the guide's Connector attributes.
func persistThreads(pp *persistPlan) error {
	workers := max(1, pp.h.CPUs.N-1)
	if v := pp.f.chosen(StepThreads); v > 0 {
		workers = v // the search's choice
	}
	q := pp.h.Tomcat.Query
	pp.xml = append(pp.xml, func(c *tomcatconf.Config) error {
		_, err := c.SetConnector(q, tomcatconf.ArmGuideConnectorAttrs(workers), &tomcatconf.SetOptions{ToExecutor: true})
		return err
	})
	return nil
}

// threadSearch is the threads step's search over the server.xml at path,
// as read when the step was planned (before): each candidate sets the
// Connector's pool (the guide's attributes, with its value); the one the
// server ran before puts before back.
func threadSearch(path string, q tomcatconf.ConnectorQuery, cands []Candidate, before string) *Search {
	return &Search{Step: StepThreads, Setting: "maxThreads", Candidates: cands,
		set: func(ctx context.Context, c Candidate) error {
			var e tomcatconf.ServerXMLEdit
			if c.Previous {
				cur, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				e = tomcatconf.ServerXMLEdit{Path: path, Before: string(cur), After: before}
			} else {
				var err error
				e, err = tomcatconf.EditServerXML(path, func(cfg *tomcatconf.Config) error {
					_, err := cfg.SetConnector(q, tomcatconf.ArmGuideConnectorAttrs(c.Value), &tomcatconf.SetOptions{ToExecutor: true})
					return err
				})
				if err != nil {
					return err
				}
			}
			if !e.Changed() {
				return nil
			}
			return e.Apply(ctx)
		}}
}
