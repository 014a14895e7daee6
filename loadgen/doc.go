// Package loadgen generates HTTP/1.1 load and measures latency without
// coordinated omission.
//
// In the open model (wrk2's -R) each connection follows its own schedule of
// intended send times and latency is measured from when a request should
// have been sent, so a stalled server shows up in the percentiles instead of
// silently slowing the load. In the closed model (ab's -n -c -k) C
// connections send N requests back to back. Latencies are kept in
// HdrHistograms and reported in wrk2's and ab's text layouts, as JSON and as
// HdrHistogram interval logs; sweeps run a list of load levels and
// comparisons put variations against a baseline.
//
// # Privileges
//
// None. Many connections need a raised RLIMIT_NOFILE, which Run raises to
// the hard limit when it can. Send load only to servers you run.
package loadgen
