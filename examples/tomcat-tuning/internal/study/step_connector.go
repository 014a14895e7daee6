//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nettune/nettune/tomcatconf"
	"github.com/nettune/nettune/tuning"
)

// stepConnector is the kind of the user's Connector steps,
// connector:ATTR=VALUE in -steps.
const stepConnector = "connector"

// connectorKind sets one attribute of the tuned Connector, as the guide's
// threads step sets its pool: a minimal edit of server.xml, checked
// against Tomcat's documented attributes, undone from the journal, kept
// with -persist in server.xml's one edit.
func connectorKind() Kind {
	return Kind{Name: stepConnector, Arg: "ATTR=VALUE", With: connectorStep}
}

// connectorStep is the step of one connector:ATTR=VALUE.
func connectorStep(arg string) (Kind, error) {
	attr, value, ok := strings.Cut(arg, "=")
	attr = strings.TrimSpace(attr)
	switch {
	case !ok:
		return Kind{}, errors.New("no '=' between the attribute and its value")
	case attr == "":
		return Kind{}, errors.New("no attribute name")
	case strings.ContainsAny(attr, " \t\n\"'<>&="):
		return Kind{}, fmt.Errorf("attribute %q: want a name as Tomcat's docs list it, e.g. acceptCount", attr)
	case strings.ContainsAny(value, "\n"):
		return Kind{}, fmt.Errorf("value of %s holds a newline", attr)
	}
	set := []tomcatconf.Attr{{Name: attr, Value: value}}
	edit := func(h Host) func(*tomcatconf.Config) error {
		return func(c *tomcatconf.Config) error {
			_, err := c.SetConnector(h.Tomcat.Query, set, nil)
			return err
		}
	}
	return Kind{Name: stepConnector + ":" + arg, Title: title(fmt.Sprintf("Connector %s=%q", attr, value)),
		Plan: func(p *planner, _ context.Context) (*tuning.Change, error) {
			if !p.h.Tomcat.Usable() {
				return &tuning.Change{Skip: fmt.Sprintf("no Tomcat instance: %v", p.h.Tomcat.why())}, nil
			}
			ch, e, err := p.serverXML(edit(p.h))
			if err == nil && ch.Apply == nil {
				ch.Describe = fmt.Sprintf("the Connector in %s already has %s=%q", e.Path, attr, value)
			}
			return ch, err
		},
		Check: func(h Host) error {
			if !h.Tomcat.Usable() {
				return nil // skipped when planned, saying why
			}
			// The edit, not written: Tomcat's documented attributes and
			// their types, against the Connector the study tunes.
			if _, err := tomcatconf.EditServerXML(h.Tomcat.Instance.ServerXML(), edit(h)); err != nil {
				return fmt.Errorf("-steps connector:%s: %w", arg, err)
			}
			return nil
		},
		Needs: Needs{Persist: func(pp *persistPlan) error {
			pp.xml = append(pp.xml, edit(pp.h))
			return nil
		}}}, nil
}
