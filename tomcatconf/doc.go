// Package tomcatconf edits Apache Tomcat's conf/server.xml with minimal
// diffs — Connectors, Executors and the AccessLogValve found by meaning, not
// by regular expression, attribute values validated against Tomcat's own
// documentation — and runs a Tomcat instance (CATALINA_HOME, CATALINA_BASE):
// start it as its user or through its systemd unit with a raised
// open-files limit, wait until it answers, stop it, and take a census of
// its threads from /proc/PID/task/*/stat to size maxThreads.
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
// prints the unified diff. Save skips an unchanged file, backs up to
// server.xml.nettune.bak the first time, and replaces the file atomically
// (temp file, fsync, rename), keeping its mode and owner.
//
// A Connector inside a comment is not a Connector. A Connector whose
// executor attribute names an Executor of its Service ignores its own
// maxThreads, minSpareThreads and threadPriority: SetConnector refuses them
// (ErrExecutorThreads) or, with SetOptions.ToExecutor, sets them on the
// Executor. Names and values are checked against Tomcat 11.0.10's
// configuration reference (http.xml, executor.xml, valve.xml): unknown
// names fail with the closest documented one suggested (ErrUnknownAttr);
// integers must fit a Java int (or long) and be >= 0, or -1 where the
// documentation allows it, and booleans be true or false
// (ErrInvalidValue); a ${property} placeholder is never overwritten
// silently (ErrPlaceholder).
//
// # Tomcat instance
//
// An Instance (FindInstance, or Home and Base set by hand) is run the way
// its installation runs it: UseService reads the systemd unit (Debian's
// tomcat10.service) for its User=, Group=, environment and ExecStart=.
// Start runs that foreground command (else `catalina.sh run`) as the
// instance's user, in its own session, with the open-files limit raised,
// its output appended to Base/logs/catalina.out; the command execs the
// JVM, so the child's PID is the JVM's and no PID file is needed.
// Daemon runs upstream's `catalina.sh start` with CATALINA_PID instead.
// When the unit is active or enabled (DetectControl), Start, Stop and
// Restart go through `systemctl` instead, with the limit in a runtime
// drop-in (Unit.SetDropIn), so systemd keeps tracking the JVM. A
// Persistent Unit keeps its drop-in under /etc/systemd/system/UNIT.d,
// read at every boot, instead of /run; PlanDropIn returns either as a
// DropInChange whose Undo puts the previous file back, or none.
//
// JVMs, PID, Stop and StopAll find the JVMs in /proc by
// -Dcatalina.base=Base, whoever started them. Start refuses a second JVM
// and a taken Connector port, polls a URL until it answers, and stops
// what it launched when it fails (ErrStart, with the SEVERE records and
// the last lines of catalina.out). Stop uses `catalina.sh stop` only when
// server.xml enables the shutdown port (Debian ships <Server port="-1">),
// else SIGTERM, then SIGKILL, and says which one worked. CopyTo makes a
// temporary CATALINA_BASE from an instance, to run beside it.
//
// # Thread census
//
// TakeCensus reads /proc/PID/task/TID/stat and status twice (thread name,
// utime + stime, context switches), /proc/PID/status (Cpus_allowed_list) and
// /sys/devices/system/cpu/online, and groups threads into Tomcat's pools:
// http-nio-PORT-exec-N workers, the -Poller and -Acceptor, shared
// Executor workers (tomcat-exec-N), GC, JIT compiler and other JVM
// threads. The kernel keeps only 15 bytes of a name ("http-nio-8080-e");
// JavaThreadNames reads the full names from `jcmd PID Thread.print`.
// ReadThreads and CensusSince do the same from two readings a caller
// takes around its own measurement, with no wait of their own.
// Census.Recommend sizes maxThreads as the Arm Neoverse Tomcat tuning
// guide reasons: CPUs available to the JVM minus the busy non-worker
// threads (the Poller).
//
// # JIT compilers
//
// JITMeter reads the CPU time of a HotSpot JVM's JIT compiler threads
// ("C1 CompilerThre", "C2 CompilerThre" in /proc/PID/task/TID/stat) and of
// the whole JVM (/proc/PID/stat) between readings: a rate measured while
// the compilers still use a good share of the JVM's CPU is not the
// compiled code's. JITMeter.CompilerShare is the hook loadgen's warm-up
// takes to wait for the JIT.
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
// FindInstance, Instance.Root, Unit.Root, CensusOptions.Root and JITOptions.Root take a
// directory standing for "/" ("" is this host), so a mounted image or a
// captured /proc tree can be inspected.
package tomcatconf
