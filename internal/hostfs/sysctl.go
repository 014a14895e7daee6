package hostfs

import (
	"fmt"
	"strings"
)

// SysctlRel returns the path of a sysctl below /proc/sys, such as
// "net/ipv4/tcp_max_tw_buckets". name is either dotted, as sysctl(8) takes
// it ("net.ipv4.tcp_max_tw_buckets"), or slashed ("net/ipv4/conf/eth0.100/
// rp_filter"), the form to use when a component holds a dot, like a VLAN
// interface name. For a name that would leave /proc/sys or that is
// malformed, rel is "" and why says what is wrong with it; the caller
// wraps why in its own error.
func SysctlRel(name string) (rel, why string) {
	if name == "" {
		return "", "empty"
	}
	if strings.ContainsAny(name, " \t\r\n\x00") {
		return "", "it holds white space or a NUL"
	}
	if strings.HasPrefix(name, "/") {
		return "", "absolute paths are not sysctl names"
	}
	sep := "."
	if strings.Contains(name, "/") {
		sep = "/"
	}
	parts := strings.Split(name, sep)
	for _, p := range parts {
		switch p {
		case "":
			return "", "empty component"
		case ".", "..":
			return "", fmt.Sprintf("component %q", p)
		}
	}
	return strings.Join(parts, "/"), ""
}
