package tuning

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nettune/nettune/internal/rlimit"
)

// The limit RaiseOpenFilesLimit sets: the soft limit raised to n, the hard
// one only when it is lower.
func TestOpenFilesTarget(t *testing.T) {
	cur := FileLimit{Soft: 1024, Hard: 524288}
	target := func(n uint64) string { return FileLimit(rlimit.Target(rlimit.Limit(cur), n)).String() }
	assert.Equal(t, "soft 65535, hard 524288", target(rlimit.DefaultNoFile))
	assert.Equal(t, "soft 1048576, hard 1048576", target(1048576))
	assert.Equal(t, "soft unlimited, hard unlimited", FileLimit{Soft: ^uint64(0), Hard: ^uint64(0)}.String())
}
