package loadgen

import (
	"fmt"
	"strconv"
	"strings"
)

// StatusSet is a set of HTTP status codes (100-999), the responses a run
// counts as OK (Config.OKStatus). The zero value is the default set,
// 200-399 (wrk's "Non-2xx or 3xx responses" are the others). It reads and
// writes as text ("200,204,3xx"), so it serves in flag.TextVar and in JSON.
type StatusSet struct {
	set  bool // false: the default, 200-399
	bits [16]uint64
}

// ParseStatusSet parses a comma-separated list of status codes ("204"),
// classes ("2xx") and ranges ("200-299"), e.g. "200,204,3xx".
func ParseStatusSet(s string) (StatusSet, error) {
	var set StatusSet
	if err := set.UnmarshalText([]byte(s)); err != nil {
		return StatusSet{}, err
	}
	return set, nil
}

// UnmarshalText parses the form ParseStatusSet reads.
func (s *StatusSet) UnmarshalText(text []byte) error {
	var out StatusSet
	out.set = true
	for _, f := range strings.Split(string(text), ",") {
		f = strings.TrimSpace(f)
		lo, hi, err := statusRange(f)
		if err != nil {
			return fmt.Errorf("loadgen: OK statuses %q: %q: want codes, classes or ranges such as 200,204,3xx,400-403", text, f)
		}
		for c := lo; c <= hi; c++ {
			out.bits[c>>6] |= 1 << (c & 63)
		}
	}
	*s = out
	return nil
}

// statusRange parses one element of a status list.
func statusRange(f string) (lo, hi int, err error) {
	if len(f) == 3 && f[0] >= '1' && f[0] <= '9' && strings.EqualFold(f[1:], "xx") {
		c := int(f[0]-'0') * 100
		return c, c + 99, nil
	}
	a, b, isRange := strings.Cut(f, "-")
	if lo, err = strconv.Atoi(a); err != nil || len(a) != 3 {
		return 0, 0, fmt.Errorf("bad code")
	}
	hi = lo
	if isRange {
		if hi, err = strconv.Atoi(b); err != nil || len(b) != 3 {
			return 0, 0, fmt.Errorf("bad code")
		}
	}
	if lo < 100 || hi > 999 || lo > hi {
		return 0, 0, fmt.Errorf("out of range")
	}
	return lo, hi, nil
}

// MarshalText writes the set as ParseStatusSet reads it, with whole
// classes as "3xx": the zero value as DefaultOKStatus.
func (s StatusSet) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Has reports whether code is in the set.
func (s StatusSet) Has(code int) bool {
	if !s.set {
		return code >= 200 && code <= 399
	}
	if code < 0 || code > 999 {
		return false
	}
	return s.bits[code>>6]&(1<<(code&63)) != 0
}

// String is the set's text form: classes, ranges and codes, ascending.
func (s StatusSet) String() string {
	var parts []string
	for c := 100; c <= 999; {
		if !s.Has(c) {
			c++
			continue
		}
		end := c
		for end+1 <= 999 && s.Has(end+1) {
			end++
		}
		for c <= end {
			switch {
			case c%100 == 0 && c+99 <= end:
				parts = append(parts, strconv.Itoa(c/100)+"xx")
				c += 100
			default:
				stop := min(end, c-c%100+99) // ranges stay within a class
				if stop == c {
					parts = append(parts, strconv.Itoa(c))
				} else {
					parts = append(parts, fmt.Sprintf("%d-%d", c, stop))
				}
				c = stop + 1
			}
		}
	}
	return strings.Join(parts, ",")
}

// StatusClasses counts responses by status class.
type StatusClasses struct {
	Informational uint64 `json:"1xx"`   // 101 Switching Protocols (interim 1xx are not responses)
	Success       uint64 `json:"2xx"`   // 200-299
	Redirection   uint64 `json:"3xx"`   // 300-399
	ClientError   uint64 `json:"4xx"`   // 400-499
	ServerError   uint64 `json:"5xx"`   // 500-599
	Other         uint64 `json:"other"` // 600-999
}

// statusCounts is the event loops' form of StatusClasses: index
// status/100 - 1, 5 for 600 and above.
type statusCounts [6]uint64

func (c *statusCounts) add(status int) {
	i := status/100 - 1
	if i > 5 {
		i = 5
	}
	if i < 0 {
		i = 0
	}
	c[i]++
}

func (c statusCounts) classes() StatusClasses {
	return StatusClasses{c[0], c[1], c[2], c[3], c[4], c[5]}
}

// Add adds o's counts to c.
func (c *StatusClasses) Add(o StatusClasses) {
	c.Informational += o.Informational
	c.Success += o.Success
	c.Redirection += o.Redirection
	c.ClientError += o.ClientError
	c.ServerError += o.ServerError
	c.Other += o.Other
}

// String lists the classes with a count, "2xx 900, 4xx 12".
func (c StatusClasses) String() string {
	var parts []string
	for _, p := range []struct {
		name string
		n    uint64
	}{{"1xx", c.Informational}, {"2xx", c.Success}, {"3xx", c.Redirection}, {"4xx", c.ClientError}, {"5xx", c.ServerError}, {"other", c.Other}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", p.name, p.n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
