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
// # Privileges
//
// Reading needs read access to server.xml (Debian ships it root:tomcat
// 0640). Writing it keeps its mode and owner, which needs root for a
// root-owned file. Starting Tomcat needs whatever its CATALINA_BASE needs.
package tomcatconf
