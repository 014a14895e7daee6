// Package tomcatconf edits Apache Tomcat's conf/server.xml with minimal
// diffs — Connectors, Executors and the AccessLogValve found by meaning, not
// by regular expression, attribute values validated against Tomcat's own
// documentation — and runs a Tomcat instance (CATALINA_HOME, CATALINA_BASE):
// start and stop through catalina.sh with a raised open-files limit, wait
// until it answers, and take a census of its threads from
// /proc/PID/task/*/stat to size maxThreads.
//
// Connector attributes: https://tomcat.apache.org/tomcat-11.0-doc/config/http.html.
//
// # server.xml
//
// Load or Parse reads the file into a Config: a model built with
// github.com/beevik/etree, plus the byte range of every element and
// comment found with encoding/xml's Decoder.InputOffset. Edits never
// re-serialise the document (etree would join multi-line attributes, turn
// " />" into "/>" and re-quote values): they splice new text into the
// original bytes of the one start tag or element they change, then
// re-parse. An existing attribute keeps its place, quote character and
// entities; a new one follows the last attribute, on its own line with the
// same indentation when the tag puts attributes on their own lines. Bytes
// outside the edited elements — comments, the prolog, entities, a missing
// final newline — are untouched, a no-op edit is byte-identical, and Diff
// prints the unified diff. Save writes through the module's safe-rewrite
// helper: skip when unchanged, back up to server.xml.nettune.bak the first
// time, temp file + fsync + rename, mode and owner kept.
//
// A Connector inside a comment is not a Connector. A Connector whose
// executor attribute names an Executor of its Service ignores its own
// maxThreads, minSpareThreads and threadPriority: SetConnector refuses them
// (ErrExecutorThreads) or, with SetOptions.ToExecutor, sets them on the
// Executor. Names and values are checked against Tomcat 11.0.10's
// configuration reference (http.xml, executor.xml, valve.xml), from which
// the attribute table in attrspecs_gen.go is derived by a test that also
// fails when the table is stale: unknown names fail with the closest documented
// one suggested, integers must fit a Java int (or long) and be >= 0, or -1
// where the documentation allows it, booleans are true or false, and a
// ${property} placeholder is never overwritten silently (ErrPlaceholder).
//
// # Tomcat instance
//
// An Instance is run the way its installation runs it. Start runs a
// foreground command — the systemd unit's ExecStart= when UseService
// applied one (Debian's tomcat10: /bin/sh tomcat-start.sh), else
// `catalina.sh run` — as the instance's user (the unit's User=, else the
// owner of Base/conf), in its own session, under a raised open-files
// limit set before privileges are dropped, its output appended to
// Base/logs/catalina.out by a shell running as that user. The command execs
// the JVM, so the child's PID is the JVM's: no PID file is needed (Debian's
// CATALINA_BASE has no temp/ for one). Daemon keeps upstream's
// `catalina.sh start` with CATALINA_PID through a Runner. JVMs, PID, Stop
// and StopAll find JVMs in /proc by -Dcatalina.base=Base (seen from the
// process's own root, so a container's instance is not this one), and
// Launches by the LaunchEnv variable Start sets, before the JVM exists.
// Start refuses a second JVM of a base and a taken Connector port, polls
// a URL until it answers, and stops whatever it launched when it fails,
// returning ErrStart with the SEVERE records and the last lines this start
// wrote to catalina.out. Stop uses `catalina.sh stop` only when server.xml
// enables the shutdown port (Debian ships <Server port="-1">), otherwise
// SIGTERM to the PID, then SIGKILL, each bounded, and reports which one
// worked. readServiceFile reads a unit (/etc/systemd/system over
// /lib/systemd/system, with drop-ins) for User=, Group=, Environment=,
// EnvironmentFile= and ExecStart=.
//
// # Thread census
//
// TakeCensus reads /proc/PID/task/TID/stat twice (thread name, utime +
// stime in USER_HZ ticks), /proc/PID/status (Cpus_allowed_list) and
// /sys/devices/system/cpu/online, and groups threads into Tomcat's pools:
// http-nio-PORT-exec-N workers, the -Poller and -Acceptor, shared
// Executor workers (tomcat-exec-N), GC, JIT compiler and other JVM
// threads. The kernel keeps only 15 bytes of a name ("http-nio-8080-e");
// JavaThreadNames reads the full names from `jcmd PID Thread.print`.
// Census.Recommend sizes maxThreads as the Arm guide reasons: CPUs
// available to the JVM minus the busy non-worker threads (the Poller).
//
// # Privileges
//
// Reading needs read access to server.xml (Debian ships it root:tomcat
// 0640). Writing it keeps its mode and owner, which needs root for a
// root-owned file. Starting Tomcat as another user needs root; that user
// needs write access to Base/logs and the work and temp directories;
// raising the open-files limit above the hard limit needs
// CAP_SYS_RESOURCE (without it the JVM gets the hard limit, reported in
// StartResult.NoFile). Stopping needs the JVM's user or root. The census
// reads /proc/PID/task, which any user may read; jcmd must run as the
// JVM's user or root.
//
// # Host root
//
// FindInstance, Instance.Root and CensusOptions.Root take a directory
// standing for "/" ("" is this host), so a mounted image or a captured
// /proc tree can be inspected.
package tomcatconf
