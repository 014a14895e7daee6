package tomcatconf

import (
	"strings"

	"github.com/nettune/nettune/internal/udiff"
)

// Diff returns a unified diff (3 lines of context) from the original file
// to the current contents, "" when nothing changed.
func (c *Config) Diff() string {
	return udiff.UnifiedContext("a/"+strings.TrimPrefix(c.path, "/"), "b/"+strings.TrimPrefix(c.path, "/"), c.orig, c.src, 3)
}
