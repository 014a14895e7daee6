package tuning

import (
	"context"
	"encoding/json"
	"fmt"
)

// VerifyUndo checks, reading only, that h still holds what one undo
// record of this package's kinds says its change set: the bytes
// FileChange wrote ("file"), exactly the CPUs KeepOnlineChange kept
// online ("cpu-online"), the value SysctlChange set ("sysctl").
// expected says what, on one line; err is nil when the host holds it and
// says what was found otherwise. ok is false when the record cannot
// tell: a kind that is not this package's, a record that does not
// decode, or one from before the state set was journaled (it holds only
// the state before its change, what Undo needs); err then says why.
// tuning/persist's VerifyJournal checks a whole journal through it.
func (h *Host) VerifyUndo(_ context.Context, u Undo) (expected string, ok bool, err error) {
	switch u.Kind {
	case undoFile:
		var r fileUndo
		if err := json.Unmarshal(u.Data, &r); err != nil {
			return "", false, fmt.Errorf("file undo record: %v", err)
		}
		if r.Written == nil {
			return r.Path + " as written", false, fmt.Errorf("the record of %s holds its bytes before the change only", r.Path)
		}
		return fmt.Sprintf("%s as written (%d bytes)", r.Path, len(r.Written)), true, verifyFile(r.Path, r.Written)
	case undoCPUs:
		var r cpuOnlineUndo
		if err := json.Unmarshal(u.Data, &r); err != nil {
			return "", false, fmt.Errorf("cpu-online undo record: %v", err)
		}
		if r.Want == nil {
			return "the CPUs kept online", false, fmt.Errorf("the record holds the CPUs online before the change (%s) only", r.Online)
		}
		return "online CPUs " + r.Want.String(), true, h.verifyOnline(*r.Want)
	case undoSysctl:
		var r sysctlUndo
		if err := json.Unmarshal(u.Data, &r); err != nil {
			return "", false, fmt.Errorf("sysctl undo record: %v", err)
		}
		if r.Set == nil {
			return "sysctl " + r.Name + " as set", false, fmt.Errorf("the record of %s holds its value before the change (%q) only", r.Name, r.Value)
		}
		return fmt.Sprintf("sysctl %s = %s", r.Name, *r.Set), true, h.verifySysctl(r.Name, *r.Set)
	}
	return "", false, fmt.Errorf("undo kind %q is not one of package tuning's", u.Kind)
}
