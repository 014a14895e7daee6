package loadgen

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Runs keep one P more than their event loops while any is active, and
// GOMAXPROCS is back as it was when the last one ends.
func TestReserveProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })

	release1 := reserveProcs(before + 1)
	assert.Equal(t, before+2, runtime.GOMAXPROCS(0), "one P more than loops")
	release2 := reserveProcs(before + 3)
	assert.Equal(t, before+4, runtime.GOMAXPROCS(0), "a second run needs more")
	release3 := reserveProcs(1)
	assert.Equal(t, before+4, runtime.GOMAXPROCS(0), "never lowered while runs are active")
	release1()
	release3()
	assert.Equal(t, before+4, runtime.GOMAXPROCS(0), "a run still active")
	release2()
	assert.Equal(t, before, runtime.GOMAXPROCS(0), "put back after the last run")

	if before > 1 {
		release := reserveProcs(before - 1)
		assert.Equal(t, before, runtime.GOMAXPROCS(0), "a spare P already: unchanged")
		release()
		assert.Equal(t, before, runtime.GOMAXPROCS(0))
	}
}
