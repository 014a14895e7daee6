//go:build linux

// Command tomcatconf shows a Tomcat server.xml's Connectors, Executors and
// Valves, edits Connector attributes and the access log with minimal diffs,
// prints the unified diff, and writes it with -apply. With -census it
// counts the running JVM's threads and recommends maxThreads.
//
//	tomcatconf -port 8080 -set maxThreads=7,minSpareThreads=7,maxKeepAliveRequests=500000,maxConnections=100000 -access-log off
//	tomcatconf ... -apply
//	tomcatconf -census 5s
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/tomcatconf"
)

func main() {
	file := flag.String("file", "", "server.xml to edit (default: the found instance's conf/server.xml)")
	port := flag.String("port", "", "pick the Connector with this port (needed when there are several)")
	service := flag.String("service", "", "pick the Connector in this Service")
	set := flag.String("set", "", "Connector attributes to set: name=value,name=value")
	accessLog := flag.String("access-log", "", "off or on")
	mode := flag.String("access-log-mode", "comment", "how -access-log off disables: comment, remove or enabled-false")
	toExecutor := flag.Bool("to-executor", false, "send thread attributes to the Connector's Executor")
	overwrite := flag.Bool("overwrite-placeholders", false, "replace ${property} values")
	apply := flag.Bool("apply", false, "write the file (default: print the diff only)")
	census := flag.Duration("census", 0, "take a thread census of the running instance over this interval")
	flag.Parse()
	log.SetFlags(0)
	if err := run(*file, *port, *service, *set, *accessLog, *mode, *toExecutor, *overwrite, *apply, *census); err != nil {
		log.Fatal(err)
	}
}

func run(file, port, service, set, accessLog, mode string, toExecutor, overwrite, apply bool, census time.Duration) error {
	in, findErr := tomcatconf.FindInstance("")
	if census > 0 {
		if findErr != nil {
			return findErr
		}
		return takeCensus(in, census)
	}
	if file == "" {
		if findErr != nil {
			return findErr
		}
		file = in.ServerXML()
	}
	c, err := tomcatconf.Load(file)
	if err != nil {
		return err
	}
	fmt.Printf("# %s\n", c.Path())
	for _, cn := range c.Connectors() {
		fmt.Printf("connector %-20s service=%s line=%d executor=%q\n", cn.Name(), cn.Service, cn.Line, cn.Executor)
	}
	for _, e := range c.Executors() {
		fmt.Printf("executor  %-20s service=%s line=%d used-by=%v\n", e.Name, e.Service, e.Line, e.UsedBy)
	}
	for _, v := range c.Valves("") {
		fmt.Printf("valve     %s host=%s line=%d\n", v.ClassName, v.Host, v.Line)
	}
	if set != "" {
		attrs, err := parseAttrs(set)
		if err != nil {
			return err
		}
		q := tomcatconf.ConnectorQuery{Port: port, Service: service}
		opts := &tomcatconf.SetOptions{ToExecutor: toExecutor, OverwritePlaceholders: overwrite}
		if _, err := c.SetConnector(q, attrs, opts); err != nil {
			return err
		}
	}
	switch accessLog {
	case "":
	case "off":
		var m tomcatconf.AccessLogMode
		if err := m.UnmarshalText([]byte(mode)); err != nil {
			return err
		}
		if _, err := c.DisableAccessLog(m); err != nil {
			return err
		}
	case "on":
		if _, err := c.EnableAccessLog(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("-access-log %q: want off or on", accessLog)
	}
	fmt.Print(c.Diff())
	if !apply || !c.Changed() {
		return nil
	}
	res, err := c.Save(nil)
	if err != nil {
		return err
	}
	fmt.Printf("# wrote %s (backup %q); restart Tomcat to apply\n", res.Path, res.Backup)
	return nil
}

func takeCensus(in *tomcatconf.Instance, interval time.Duration) error {
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
	fmt.Printf("JVM %d, %d threads over %s, CPUs %s\n", pid, len(c.Threads), c.Interval.Round(time.Millisecond), cpuset.Of(c.CPUs...))
	for _, p := range c.Pools {
		fmt.Printf("%-24s %-9s threads=%-3d cpu=%-8s load=%.2f\n", p.Pool, p.Kind, p.Threads, p.CPU, p.Load)
	}
	fmt.Println(c.Recommend(0).Reason)
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
