//go:build linux

package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A run that fails after -persist wrote its files says so: "made
// persistent" alone would read as a run that succeeded.
func TestPersistedLine(t *testing.T) {
	kept := []string{"persist-server-xml", "persist-drop-in"}
	assert.Equal(t, "every measured change reverted; made persistent: persist-server-xml, persist-drop-in (undo them with -revert -journal /j)",
		persistedLine(kept, nil, "/j"))
	failed := persistedLine(kept, errors.New("tomcat10.service did not stay up"), "/j")
	assert.Equal(t, "the run failed after -persist wrote persist-server-xml, persist-drop-in: they are in force until -revert -journal /j", failed)
	assert.NotContains(t, failed, "made persistent")
}
