//go:build linux

package study

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/tuning"
)

// TestConnectorStep: connector:ATTR=VALUE on the upstream server.xml of
// Tomcat 10.1 plans the one attribute's edit of the tuned Connector,
// applies it, and the journal puts server.xml back byte for byte; an
// attribute Tomcat's docs do not list, or a value of the wrong type, is
// refused by Steps before any step is planned.
func TestConnectorStep(t *testing.T) {
	h, xml, orig := guideHost(t)
	o := DefaultOptions()
	o.Root, o.Steps = h.Root, []string{"connector:acceptCount=333"}
	steps, err := Steps(h, o, nil)
	require.NoError(t, err)
	require.Len(t, steps, 1)
	assert.Equal(t, `Connector acceptCount="333"`, steps[0].Title)

	res, revert := applySteps(t, h.Root, steps)
	require.Len(t, res, 1)
	assert.Equal(t, tuning.StatusApplied, res[0].Status)
	assert.Contains(t, res[0].Describe, `+               acceptCount="333"`, "the diff of the Connector's new attribute:\n%s", res[0].Describe)
	got, err := os.ReadFile(xml)
	require.NoError(t, err)
	assert.Contains(t, string(got), `acceptCount="333"`)
	revert()
	got, err = os.ReadFile(xml)
	require.NoError(t, err)
	assert.Equal(t, orig, got, "server.xml byte-identical after the revert")

	for _, tt := range []struct{ step, want string }{
		{"connector:acceptCont=333", `server.xml line 70: <Connector> has no attribute "acceptCont" in Tomcat 11.0.10's documentation; did you mean "acceptCount"?`},
		{"connector:acceptCount=many", `acceptCount="many" on <Connector>: want`},
	} {
		o.Steps = []string{"access-log", tt.step}
		_, err := Steps(h, o, nil)
		assert.ErrorContains(t, err, tt.want, tt.step)
	}
	assert.ErrorContains(t, func() error { _, err := ParseSteps("connector:acceptCount"); return err }(),
		`-steps: "connector:acceptCount": no '=' between the attribute and its value; want connector:ATTR=VALUE`)

	// -persist keeps it in server.xml's one edit.
	p, err := PlanPersist(h, o, nil, []string{"connector:acceptCount=333"})
	require.NoError(t, err)
	require.NotNil(t, p.ServerXML)
	assert.Contains(t, p.ServerXML.Describe(), `acceptCount="333"`)
}
