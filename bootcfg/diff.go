package bootcfg

import "github.com/nettune/nettune/internal/udiff"

// unifiedDiff returns "diff -u" output for old and new, labelled with path.
func unifiedDiff(path, old, new string) string {
	return udiff.Unified(path, path, []byte(old), []byte(new))
}
