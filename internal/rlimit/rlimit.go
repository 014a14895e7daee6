// Package rlimit reads and raises the open-files limit (RLIMIT_NOFILE),
// the `ulimit -n` a server needs before it accepts tens of thousands of
// connections: for this process, for a child it is about to start, and
// for another process by PID (prlimit(2)).
package rlimit

// DefaultNoFile is the open-files limit the Arm Neoverse Tomcat tuning
// guide sets before starting Tomcat (`ulimit -n 65535`).
const DefaultNoFile = 65535

// Limit is a soft and a hard RLIMIT_NOFILE. ^uint64(0) is unlimited.
type Limit struct{ Soft, Hard uint64 }

// Target returns the limit that gives a soft limit of at least n, given
// the current limit cur: cur itself when cur.Soft is already n or more;
// otherwise a soft limit of n, with the hard limit raised to n when it is
// lower (which needs privilege).
func Target(cur Limit, n uint64) Limit {
	if cur.Soft >= n {
		return cur
	}
	return Limit{Soft: n, Hard: max(cur.Hard, n)}
}
