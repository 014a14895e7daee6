package integration

import (
	"os"
	"testing"

	"github.com/nettune/nettune/internal/testutil"
)

// TestMain gives the container's tomcat10 the cheap JVM options of
// testutil.SetTestJVMOptions: it starts on each of the test's three
// boots, and the test reads only its limits and CPUs.
func TestMain(m *testing.M) {
	testutil.SetTestJVMOptions()
	os.Exit(m.Run())
}
