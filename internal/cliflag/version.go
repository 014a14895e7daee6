package cliflag

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the -version text of program name: the main module's path
// and version ("(devel)" when built from a checkout), the VCS settings
// the go command stamped (vcs.revision, vcs.time, vcs.modified), and the
// Go version, from runtime/debug.ReadBuildInfo.
func Version(name string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("%s: no build information (%s)\n", name, runtime.Version())
	}
	return versionText(name, bi)
}

func versionText(name string, bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n", name, bi.Main.Path, bi.Main.Version)
	vcs := false
	for _, s := range bi.Settings {
		if strings.HasPrefix(s.Key, "vcs.") {
			fmt.Fprintf(&b, "%s=%s\n", s.Key, s.Value)
			vcs = true
		}
	}
	if !vcs {
		b.WriteString("no VCS commit (built outside a git checkout, in a linked worktree (golang/go#58218), or with -buildvcs=false)\n")
	}
	fmt.Fprintf(&b, "%s %s/%s\n", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
