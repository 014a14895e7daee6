package loadgen

import (
	"fmt"

	"github.com/nettune/nettune/internal/rlimit"
)

// raiseNoFile makes sure this process may hold need file descriptors. When
// the soft RLIMIT_NOFILE is lower, it raises it to the hard limit if that
// is enough (as the Arm Neoverse Tomcat tuning guide's `ulimit -n 65535`
// does), and otherwise both limits to need, which takes CAP_SYS_RESOURCE.
// A failure wraps ErrOpenFiles and the errno.
func raiseNoFile(need uint64) (RlimitChange, error) {
	cur, err := rlimit.Get(0)
	if err != nil {
		return RlimitChange{}, fmt.Errorf("loadgen: read RLIMIT_NOFILE: %w", err)
	}
	ch := RlimitChange{Before: cur.Soft, After: cur.Soft, Max: cur.Hard}
	if cur.Soft >= need {
		return ch, nil
	}
	want := rlimit.Limit{Soft: cur.Hard, Hard: cur.Hard}
	if cur.Hard < need {
		want = rlimit.Limit{Soft: need, Hard: need}
	}
	if err := rlimit.Set(0, want); err != nil {
		if why := rlimit.Hint(0, want, cur, err); why != "" {
			err = fmt.Errorf("%s: %w", why, err)
		}
		return ch, fmt.Errorf("%w: need %d, have %d (hard %d); use fewer connections or raise ulimit -Hn: %w", ErrOpenFiles, need, cur.Soft, cur.Hard, err)
	}
	ch.After, ch.Max = want.Soft, want.Hard
	return ch, nil
}
