package nettune_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// treeFiles returns every file of the module whose name ends in one of
// suffixes, skipping testdata and hidden folders.
func treeFiles(t *testing.T, suffixes ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		for _, s := range suffixes {
			if strings.HasSuffix(p, s) {
				out = append(out, p)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// definedTests counts the Test and Fuzz functions of the tree's test
// files by name (two packages can define the same name).
func definedTests(t *testing.T) map[string]int {
	t.Helper()
	def := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Z]\w*)\(`)
	names := map[string]int{}
	for _, p := range treeFiles(t, "_test.go") {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, m := range def.FindAllStringSubmatch(string(b), -1) {
			names[m[1]]++
		}
	}
	return names
}

// TestDocsFuzzCount: the README's count of fuzz targets is the number of
// Fuzz functions in the tree, so the count cannot go stale.
func TestDocsFuzzCount(t *testing.T) {
	n := 0
	for name, count := range definedTests(t) {
		if strings.HasPrefix(name, "Fuzz") {
			n += count
		}
	}
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`the (\d+) targets`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "README.md names the fuzz targets' count as \"the N targets\"")
	got, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.Equal(t, n, got, "README.md's fuzz-target count against the Fuzz functions in the tree")
}

// TestDocsNameTests: every test or fuzz target a README, PERF.md, doc.go
// or docs/*.md names in backquotes exists, so a renamed test cannot
// leave the docs behind.
func TestDocsNameTests(t *testing.T) {
	defined := definedTests(t)
	named := regexp.MustCompile("`((?:Test|Fuzz)[A-Z]\\w*)")
	for _, p := range treeFiles(t, ".md", "doc.go") {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			if m[1] == "TestIntegration" || m[1] == "FuzzX" {
				continue // the prefix of a kind of tests; a target's placeholder
			}
			assert.Positive(t, defined[m[1]], "%s names %s, which no test file defines", p, m[1])
		}
	}
}
