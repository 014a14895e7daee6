//go:build linux

package study

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/jsonschema"
)

// schemaFile is the JSON Schema of -json's document.
const schemaFile = "../../docs/tomcat-tuning.schema.json"

// TestDocumentSchema: the document of a whole study (every part: steps
// measured, skipped and failed, a search, the drift guard, the load
// sizing, the CPU method) conforms to the schema file, and the schema
// rejects a wrong type, a missing field and a field it does not know.
func TestDocumentSchema(t *testing.T) {
	o := DefaultOptions()
	o.Apply = true
	doc := DocumentOf(o, realisticResults(t))
	require.NotNil(t, doc.Drift)
	require.NotNil(t, doc.Load)
	require.Len(t, doc.Searches, 1)
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, jsonschema.Validate(schemaFile, b), "%s", b)

	for _, tt := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"a string version", func(m map[string]any) { m["schema_version"] = "1" }, "schema_version"},
		{"another version", func(m map[string]any) { m["schema_version"] = 2.0 }, "schema_version"},
		{"no steps", func(m map[string]any) { delete(m, "steps") }, "steps"},
		{"a capacity as a number", func(m map[string]any) { step(m, StepAccessLog)["capacity"] = 272000.0 }, "capacity"},
		{"a latency in ns", func(m map[string]any) {
			l := step(m, StepAccessLog)["latency"].(map[string]any)
			l["p99_ns"] = l["p99_ms"]
			delete(l, "p99_ms")
		}, "p99"},
		{"a measured step without figures", func(m map[string]any) { delete(step(m, StepAccessLog), "capacity") }, "capacity"},
		{"drift nested in itself", func(m map[string]any) {
			d := m["drift"].(map[string]any)
			d["drift"] = d["vs_baseline"]
		}, "drift"},
		{"an unknown status", func(m map[string]any) { step(m, StepAccessLog)["status"] = "fine" }, "status"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var generic map[string]any
			require.NoError(t, json.Unmarshal(b, &generic))
			tt.edit(generic)
			bad, err := json.Marshal(generic)
			require.NoError(t, err)
			err = jsonschema.Validate(schemaFile, bad)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// step is the step of that name in a document decoded as generic JSON.
func step(m map[string]any, name string) map[string]any {
	for _, s := range m["steps"].([]any) {
		if st := s.(map[string]any); st["step"] == name {
			return st
		}
	}
	panic("no step " + name)
}

// TestDocumentUnits: one unit convention: every number named for a
// duration is in ms, no field is in ns, us or s.
func TestDocumentUnits(t *testing.T) {
	b, err := json.Marshal(DocumentOf(DefaultOptions(), realisticResults(t)))
	require.NoError(t, err)
	for _, unit := range []string{`_ns"`, `_us"`, `_s"`} {
		assert.NotContains(t, string(b), unit)
	}
	assert.Contains(t, string(b), `"duration_ms":5000`)
}
