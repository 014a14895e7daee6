//go:build linux

// Command tomcatconf shows a Tomcat server.xml's Connectors, Executors and
// Valves, edits Connector attributes and the access log with minimal diffs,
// prints the unified diff, and writes it with -apply. With -census it
// counts the running JVM's threads and recommends maxThreads.
//
//	tomcatconf -port 8080 -set maxThreads=7,minSpareThreads=7,maxKeepAliveRequests=500000,maxConnections=100000 -access-log=false
//	tomcatconf ... -apply
//	tomcatconf -census 5
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/cliflag"
	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/tomcatconf"
)

const synopsis = `usage: tomcatconf [-file server.xml]            show the Connectors, Executors and Valves
       tomcatconf [-file server.xml] [-set name=value,... [-port P] [-service S] [-to-executor] [-overwrite-placeholders]]
                  [-access-log=false [-access-log-mode comment|remove|enabled-false] | -access-log] [-apply]
       tomcatconf -census T                         the running JVM's threads, and a maxThreads
Edits print the diff and are written with -apply. A time T is a bare number of seconds or has a unit (10s, 1m).
Exit status: 0 done, 1 failed, 2 a bad command line.`

func main() {
	cliflag.Exit("tomcatconf", runArgs(os.Args[1:], os.Stdout))
}

// edit is what the command line asks of server.xml.
type edit struct {
	file, port, service   string
	set                   []tomcatconf.Attr // -set's, in order
	accessLog             *bool             // nil: leave it; false: disable it (in mode); true: enable it
	mode                  tomcatconf.AccessLogMode
	toExecutor, overwrite bool
	apply                 bool
}

// runArgs parses the command line, refusing contradictory or pointless
// flag combinations, then runs it.
func runArgs(args []string, w io.Writer) error {
	fs := cliflag.New("tomcatconf", synopsis, w)
	var e edit
	fs.StringVar(&e.file, "file", "", "server.xml to edit (default: the found instance's conf/server.xml)")
	fs.StringVar(&e.port, "port", "", "with -set: pick the Connector with this port (needed when there are several)")
	fs.StringVar(&e.service, "service", "", "with -set: pick the Connector in this Service")
	set := fs.String("set", "", "Connector attributes to set: name=value,name=value")
	accessLog := fs.Bool("access-log", false, "-access-log=false disables the AccessLogValve, -access-log enables it (default: left as it is)")
	mode := fs.String("access-log-mode", "comment", "how -access-log=false disables: comment, remove or enabled-false")
	fs.BoolVar(&e.toExecutor, "to-executor", false, "with -set: send thread attributes to the Connector's Executor")
	fs.BoolVar(&e.overwrite, "overwrite-placeholders", false, "with -set: replace ${property} values")
	fs.BoolVar(&e.apply, "apply", false, "write the file (default: print the diff only)")
	var census time.Duration
	cliflag.DurationVar(fs, &census, "census", 0, "take a thread census of the running instance over this `interval` (10 is 10s), and change nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	given := fs.Given()
	if given["census"] {
		if census <= 0 {
			return cliflag.Usagef("-census %s: want an interval > 0, such as 10s", census)
		}
		if other := given.Other("census"); other != "" {
			return cliflag.Usagef("-census takes a census of the running instance and changes nothing: drop -%s", other)
		}
		return takeCensus(w, census)
	}
	for _, f := range []string{"port", "service", "to-executor", "overwrite-placeholders"} {
		if given[f] && !given["set"] {
			return cliflag.Usagef("-%s goes with -set: give the attributes to set", f)
		}
	}
	switch {
	case given["access-log-mode"] && (!given["access-log"] || *accessLog):
		return cliflag.Usagef("-access-log-mode says how -access-log=false disables the access log: give -access-log=false")
	case given["apply"] && !given["set"] && !given["access-log"]:
		return cliflag.Usagef("-apply writes the edits of -set and -access-log: give one of them")
	}
	if given["access-log"] {
		e.accessLog = accessLog
	}
	if err := e.mode.UnmarshalText([]byte(*mode)); err != nil {
		return cliflag.Usagef("-access-log-mode: %w", err)
	}
	if given["set"] {
		var err error
		if e.set, err = parseAttrs(*set); err != nil {
			return cliflag.Usage(err)
		}
	}
	return run(w, e)
}

func run(w io.Writer, e edit) error {
	file := e.file
	if file == "" {
		in, err := tomcatconf.FindInstance("")
		if err != nil {
			return err
		}
		file = in.ServerXML()
	}
	c, err := tomcatconf.Load(file)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %s\n", c.Path())
	for _, cn := range c.Connectors() {
		fmt.Fprintf(w, "connector %-20s service=%s line=%d executor=%q\n", cn.Name(), cn.Service, cn.Line, cn.Executor)
	}
	for _, ex := range c.Executors() {
		fmt.Fprintf(w, "executor  %-20s service=%s line=%d used-by=%v\n", ex.Name, ex.Service, ex.Line, ex.UsedBy)
	}
	for _, v := range c.Valves("") {
		fmt.Fprintf(w, "valve     %s host=%s line=%d\n", v.ClassName, v.Host, v.Line)
	}
	if e.set != nil {
		q := tomcatconf.ConnectorQuery{Port: e.port, Service: e.service}
		opts := &tomcatconf.SetOptions{ToExecutor: e.toExecutor, OverwritePlaceholders: e.overwrite}
		if _, err := c.SetConnector(q, e.set, opts); err != nil {
			return err
		}
	}
	switch {
	case e.accessLog == nil:
	case !*e.accessLog:
		if _, err := c.DisableAccessLog(e.mode); err != nil {
			return err
		}
	default:
		if _, err := c.EnableAccessLog(); err != nil {
			return err
		}
	}
	fmt.Fprint(w, c.Diff())
	if !e.apply || !c.Changed() {
		return nil
	}
	res, err := c.Save(nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# wrote %s (backup %q); restart Tomcat to apply\n", res.Path, res.Backup)
	return nil
}

func takeCensus(w io.Writer, interval time.Duration) error {
	in, err := tomcatconf.FindInstance("")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	pid, err := in.PID()
	if err != nil {
		return err
	}
	opts := &tomcatconf.CensusOptions{}
	if names, err := tomcatconf.JavaThreadNames(ctx, nil, "", pid); err == nil {
		opts.Names = names
	}
	c, err := tomcatconf.TakeCensus(ctx, pid, interval, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "JVM %d, %d threads over %s, CPUs %s\n", pid, len(c.Threads), c.Interval.Round(time.Millisecond), cpuset.Of(c.CPUs...))
	for _, p := range c.Pools {
		fmt.Fprintf(w, "%-24s %-9s threads=%-3d cpu=%-8s load=%.2f\n", p.Pool, p.Kind, p.Threads, p.CPU, p.Load)
	}
	fmt.Fprintln(w, c.Recommend(0).Reason)
	return nil
}

// parseAttrs parses -set's "name=value,name=value" into attributes, in
// order. A value may not contain a comma.
func parseAttrs(s string) ([]tomcatconf.Attr, error) {
	var out []tomcatconf.Attr
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, value, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("-set %q: want name=value", kv)
		}
		out = append(out, tomcatconf.Attr{Name: name, Value: strings.TrimSpace(value)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-set %q: want name=value[,name=value...]", s)
	}
	return out, nil
}
