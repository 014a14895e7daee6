//go:build linux

package study

import (
	"context"
	"fmt"

	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// accessLogKind turns the access log off.
func accessLogKind() Kind {
	return Kind{Name: StepAccessLog, Title: title("Access log off"),
		Plan: (*planner).accessLog, Needs: Needs{Persist: persistAccessLog, GuideUplift: uplift(11.1)}}
}

// accessLog comments out every AccessLogValve in server.xml.
func (p *planner) accessLog(context.Context) (*tuning.Change, error) {
	if !p.h.Tomcat.Usable() {
		return &tuning.Change{Skip: fmt.Sprintf("no Tomcat instance: %v", p.h.Tomcat.why())}, nil
	}
	ch, e, err := p.serverXML(func(c *tomcatconf.Config) error {
		_, err := c.DisableAccessLog(tomcatconf.AccessLogComment)
		return err
	})
	if err == nil && ch.Apply == nil {
		ch.Describe = "no active AccessLogValve in " + e.Path
	}
	return ch, err
}

// persistAccessLog keeps the access log off in server.xml.
func persistAccessLog(pp *persistPlan) error {
	pp.xml = append(pp.xml, func(c *tomcatconf.Config) error {
		_, err := c.DisableAccessLog(tomcatconf.AccessLogComment)
		return err
	})
	return nil
}
