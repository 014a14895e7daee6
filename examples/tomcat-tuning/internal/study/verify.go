//go:build linux

package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nettune/nettune/examples/tomcat-tuning/internal/remoteload"
	"github.com/nettune/nettune/tuning"
	"github.com/nettune/nettune/tuning/persist"
)

// Verifiers check, reading only, every kind of change the study journals,
// as Reverters undoes them: tuning's (file, cpu-online, sysctl, under h's
// root) and each package's value through its own Verify (persist.AddVerifier):
// the channels set, the Tomcat the run holds, the drop-in, server.xml, the
// persistent files, the .link file and the tuned profile switch. A client's
// worker directory cannot be checked from here (persist.ErrNotVerifiable).
func Verifiers(h *persist.Host) persist.Verifiers {
	ver := h.Verifiers()
	journaled(nil, ver)
	remoteload.Register(nil, ver)
	return ver
}

// ErrVerifyFailed is matched by errors.Is when Verify finds a change the
// journal keeps in force that the host no longer holds, or one it cannot
// check.
var ErrVerifyFailed = errors.New("verification failed")

// Verify checks the host against the changes the journal at path keeps in
// force (-persist's files and switches, a -keep run's state, a crash's
// leftovers), reading only, and prints each as expected/found to w, then a
// verdict, as `tuned-adm verify` does. It returns nil when every one
// holds; an error matching ErrVerifyFailed, naming the steps, when one
// differs, cannot be checked (persist.ErrNotVerifiable) or never finished
// applying. A journal that is missing, unreadable or held by a live run is
// an error of its own.
func Verify(ctx context.Context, path string, w io.Writer) error {
	fmt.Fprintf(w, "journal: %s\n", path)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("nothing to verify (-verify checks what an -apply -persist or -apply -keep run left in force): %w", err)
	}
	checks, err := persist.VerifyJournal(ctx, path, Verifiers(persist.NewDefault()))
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	return writeChecks(w, path, checks)
}

// writeChecks prints each check as expected/found, then the verdict; the
// error names the checks that failed.
func writeChecks(w io.Writer, path string, checks []persist.RecordCheck) error {
	var failed []string
	n := 0
	for _, c := range checks {
		if c.NoRecord {
			fmt.Fprintf(w, "%s: journaled no record (a change of the run's own, such as a pin): nothing on the host to check\n", c.Step)
			continue
		}
		n++
		verdict, found := checkText(c)
		if c.Err != nil || c.Interrupted {
			failed = append(failed, c.Step)
		}
		fmt.Fprintf(w, "%-5s %s (%s)\n", verdict, c.Step, firstNonEmpty(c.Kind, "a cut record"))
		fmt.Fprintf(w, "      expected: %s\n", firstNonEmpty(c.Expected, "(cannot be told)"))
		fmt.Fprintf(w, "      found:    %s\n", found)
	}
	switch {
	case n == 0:
		fmt.Fprintln(w, "nothing in force: every change the journal records is reverted")
		return nil
	case len(failed) == 0:
		fmt.Fprintf(w, "verification succeeded: the host holds all %d setting(s) the journal keeps in force\n", n)
		return nil
	}
	fmt.Fprintf(w, "verification failed: %d of %d setting(s) do not hold; -revert -journal %s puts back what the journal records\n", len(failed), n, path)
	return fmt.Errorf("%w: %d of %d setting(s) the journal keeps in force do not hold (%s)", ErrVerifyFailed, len(failed), n, strings.Join(failed, ", "))
}

// checkText is the verdict and the "found" line of one check.
func checkText(c persist.RecordCheck) (verdict, found string) {
	switch {
	case c.Interrupted:
		return "FAIL", "the change began and never finished applying (a run killed part-way): -revert undoes it" + errSuffix(c.Err)
	case errors.Is(c.Err, persist.ErrNotVerifiable) || errors.Is(c.Err, tuning.ErrTornJournal):
		return "FAIL", "cannot be verified: " + c.Err.Error()
	case c.Err != nil:
		return "FAIL", c.Err.Error()
	}
	return "ok", "as expected"
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return "; " + err.Error()
}
