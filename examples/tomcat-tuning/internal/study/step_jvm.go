//go:build linux

package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// stepJVM is the kind of the user's JVM option steps, jvm:OPTION in
// -steps.
const stepJVM = "jvm"

// jvmKind adds one option to the JVM Tomcat runs, through
// CATALINA_BASE/bin/setenv.sh, which catalina.sh reads in every layout:
// a tarball's, a copy's and Debian's (its tomcat-start.sh sources
// /etc/default/tomcat10, which sets JAVA_OPTS afresh, so a unit's
// Environment=JAVA_OPTS never reaches the JVM; then it runs catalina.sh).
func jvmKind() Kind {
	return Kind{Name: stepJVM, Arg: "OPTION", With: jvmStep}
}

// setenvLine is the line the jvm step adds to setenv.sh for option.
func setenvLine(option string) string {
	return `JAVA_OPTS="$JAVA_OPTS ` + option + `" # nettune: -steps jvm:` + option + "\n"
}

// jvmStep is the step of one jvm:OPTION.
func jvmStep(option string) (Kind, error) {
	switch {
	case !strings.HasPrefix(option, "-") || len(option) < 2:
		return Kind{}, fmt.Errorf("option %q: want one JVM option, e.g. -XX:+UseSerialGC or -Xmx2g", option)
	case strings.ContainsAny(option, " \t\n\"'`$\\;&|<>(){}*?"):
		return Kind{}, fmt.Errorf("option %q: want one option without spaces, quotes or shell characters", option)
	}
	return Kind{Name: stepJVM + ":" + option, Title: title("JVM option " + option + " (CATALINA_BASE/bin/setenv.sh)"),
		Plan: func(p *planner, _ context.Context) (*tuning.Change, error) {
			if !p.h.Tomcat.Usable() {
				return &tuning.Change{Skip: fmt.Sprintf("no Tomcat instance: %v", p.h.Tomcat.why())}, nil
			}
			e, err := setenvEdit(p.h, option)
			if err != nil {
				return nil, err
			}
			return tuning.ChangeFor(e)
		},
		Check: func(Host) error { return checkJVMOption(option) },
		Needs: Needs{JVMArg: option, Persist: func(pp *persistPlan) error {
			if !pp.h.Tomcat.Usable() {
				return nil
			}
			e, err := setenvEdit(pp.h, option)
			if err == nil {
				pp.p.Files = append(pp.p.Files, PersistFile{Path: e.Path, Data: e.Data,
					What: "the JVM option " + option + ", read by catalina.sh at every start"})
			}
			return err
		}}}, nil
}

// setenvEdit is the write of CATALINA_BASE/bin/setenv.sh with option
// added: the file as it is plus the line, or a new file of its own.
func setenvEdit(h Host, option string) (persist.FileEdit, error) {
	path := filepath.Join(h.Tomcat.Instance.Base, "bin", "setenv.sh")
	cur, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		cur = []byte("#!/bin/sh\n# Written by nettune's tomcat-tuning; remove this file to undo it.\n")
	case err != nil:
		return persist.FileEdit{}, err
	case len(cur) > 0 && cur[len(cur)-1] != '\n':
		cur = append(cur, '\n')
	}
	if bytes.Contains(cur, []byte(setenvLine(option))) {
		return persist.PlanFile(path, cur)
	}
	return persist.PlanFile(path, append(cur, setenvLine(option)...))
}

// checkJVMOption asks the JVM whether it takes option (java OPTION
// -version), and refuses the option with the JVM's own words otherwise.
// The JVM is $JAVA_HOME/bin/java, else java on PATH, else Debian's
// default-java; with none, the step is left for Tomcat's start to judge.
func checkJVMOption(option string) error {
	java := ""
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	} else if p, err := exec.LookPath("java"); err == nil {
		java = p
	} else if _, err := os.Stat("/usr/lib/jvm/default-java/bin/java"); err == nil {
		java = "/usr/lib/jvm/default-java/bin/java"
	}
	if java == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, java, option, "-version").CombinedOutput()
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return fmt.Errorf("-steps jvm:%s: the JVM refuses it (%s %s -version: %v): %s", option, java, option, err, first)
	}
	return nil
}

// checkJVMArg checks that the JVM pid was started with option, from its
// command line in /proc.
func checkJVMArg(pid int, option string) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return err
	}
	for _, a := range strings.Split(string(b), "\x00") {
		if a == option {
			return nil
		}
	}
	return fmt.Errorf("the JVM %d was started without %s: its CATALINA_BASE/bin/setenv.sh was not read", pid, option)
}
