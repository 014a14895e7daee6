package tomcatconf

import (
	"strings"

	"github.com/nettune/nettune/internal/udiff"
)

// Diff returns a unified diff (3 lines of context) from the original file
// to the current contents, "" when nothing changed.
func (c *Config) Diff() string {
	return UnifiedDiff("a/"+strings.TrimPrefix(c.path, "/"), "b/"+strings.TrimPrefix(c.path, "/"), c.orig, c.src, 3)
}

// UnifiedDiff returns the unified diff from old to new with ctx lines of
// context, in the format of diff -u (including "\ No newline at end of
// file"); "" when they are equal.
func UnifiedDiff(oldName, newName string, old, new []byte, ctx int) string {
	return udiff.UnifiedContext(oldName, newName, old, new, ctx)
}
