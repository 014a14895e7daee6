// Package remoteload runs the study's loads away from the Tomcat host, as
// the Arm guide runs wrk2 on a separate client machine: each load is a
// loadgen.Config handed, in loadgen's wire form, to a worker process (the
// study's own binary started with WorkerArg) that runs it and answers
// with its loadgen.Result.
//
// The worker runs either in another network namespace of this host
// (NetNSLoad, through ip netns exec), or on client machines over OpenSSH
// (SSHClient, one per -load-host; Clients runs one load as shards of one
// schedule on several, from a shared start set by each client's measured
// clock offset, and merges their histograms). Connect puts the worker on
// the clients, verified by SHA-256, built for a client's architecture
// from this module's source when it differs (WorkerBuilder), and
// journals each directory it makes (KindRemoteDir, under StepLoadHost) so
// a killed run's leftovers are reverted with the rest of the study.
//
// Every method that runs a load has loadgen.RunFunc's shape, so the study
// measures through them as through loadgen.Run.
package remoteload
