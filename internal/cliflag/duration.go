package cliflag

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// ParseDuration parses a duration as wrk2 does, a bare number being
// seconds: "60", "2.5", "30s", "1m", "2h"; Go forms such as "1m30s" or
// "500ms" also work. Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v*float64(time.Second) < math.MaxInt64 {
		return time.Duration(v * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%q: want a duration such as 60 (seconds), 30s, 1m or 2h", s)
}

// Duration is a flag.Value for a time.Duration read by ParseDuration:
//
//	fs.Var((*cliflag.Duration)(&o.Duration), "duration", "length of each run, a `duration` (60 is 60s)")
type Duration time.Duration

// Set parses s with ParseDuration.
func (d *Duration) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// String is the duration as time.Duration prints it ("1m0s").
func (d *Duration) String() string { return time.Duration(*d).String() }

// DurationVar defines a duration flag in fs: a bare number is seconds.
// The usage's first `quoted` word names the value in -h, as for any flag.
func DurationVar(fs *FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*Duration)(p), name, usage)
}
