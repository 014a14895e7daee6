// Package jsonschema checks a tomcat-tuning -json document against the
// JSON Schema file that documents it (docs/tomcat-tuning.schema.json,
// draft 2020-12), for the tests: github.com/santhosh-tekuri/jsonschema
// compiles the schema and validates the document.
package jsonschema

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validate reads the schema file at schemaPath and validates doc, a JSON
// document, against it. It returns an error naming the file for a schema
// that does not compile, and the schema's own error (every failing
// keyword with its location in doc) for a document that does not conform.
func Validate(schemaPath string, doc []byte) error {
	abs, err := filepath.Abs(schemaPath)
	if err != nil {
		return err
	}
	f, err := os.Open(abs)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return fmt.Errorf("jsonschema: %s: %w", schemaPath, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(abs, s); err != nil {
		return fmt.Errorf("jsonschema: %s: %w", schemaPath, err)
	}
	sch, err := c.Compile(abs)
	if err != nil {
		return fmt.Errorf("jsonschema: %s: %w", schemaPath, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("jsonschema: the document: %w", err)
	}
	return sch.Validate(inst)
}
