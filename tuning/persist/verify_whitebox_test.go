package persist

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLocks(t *testing.T) {
	locks := `1: POSIX  ADVISORY  WRITE 17913 00:27:879816 0 EOF
2: FLOCK  ADVISORY  WRITE 19883 fe:00:10241718 0 EOF
2: -> FLOCK  ADVISORY  WRITE 20000 fe:00:10241718 0 EOF
3: FLOCK  ADVISORY  READ 10477 fe:00:9981457 0 EOF
`
	pid, err := parseLocks(strings.NewReader(locks), 0xfe, 0, 10241718)
	require.NoError(t, err)
	assert.Equal(t, 19883, pid)
	pid, err = parseLocks(strings.NewReader(locks), 0, 0x27, 879816)
	require.NoError(t, err)
	assert.Zero(t, pid, "a POSIX lock is not a journal's flock")
	_, err = parseLocks(strings.NewReader("1: FLOCK  ADVISORY  WRITE x fe:00:1 0 EOF\n"), 0xfe, 0, 1)
	assert.Error(t, err)
}
