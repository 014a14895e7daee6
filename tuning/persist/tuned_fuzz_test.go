package persist_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nettune/nettune/tuning/persist"
)

// ParseTunedConf never panics, and what Render accepts reads back the
// same: parse, render, parse again gives the same sections, and rendering
// that again gives the same bytes. Seeds: every profile under
// testdata/tuned (shipped by tuned 2.20) and testdata/fuzz/FuzzParseTunedConf.
func FuzzParseTunedConf(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "tuned", "*.conf"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := persist.ParseTunedConf(data, "fuzz")
		if err != nil {
			return
		}
		out, err := c.Render()
		if err != nil {
			return
		}
		again, err := persist.ParseTunedConf(out, "rendered")
		if err != nil {
			t.Fatalf("our own output does not parse: %v\n%s", err, out)
		}
		if len(again.Sections) != len(c.Sections) {
			t.Fatalf("sections %d -> %d\n%q\n%q", len(c.Sections), len(again.Sections), data, out)
		}
		for i := range c.Sections {
			a, b := c.Sections[i], again.Sections[i]
			if a.Name != b.Name || len(a.Options) != len(b.Options) {
				t.Fatalf("section %d: %+v -> %+v\n%q", i, a, b, out)
			}
			for j := range a.Options {
				if a.Options[j] != b.Options[j] {
					t.Fatalf("[%s] %+v -> %+v\n%q", a.Name, a.Options[j], b.Options[j], out)
				}
			}
		}
		out2, err := again.Render()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("render is not a fixed point: %v\n%q\n%q", err, out, out2)
		}
	})
}
