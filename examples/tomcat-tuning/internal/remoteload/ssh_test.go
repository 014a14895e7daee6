//go:build linux

package remoteload

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseLoadHost: [USER@]HOST[:PORT] becomes ssh's -l, host and -p,
// with BatchMode and strict host keys always on.
func TestParseLoadHost(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"client", "ssh -F cfg -T -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -- client true"},
		{"bench@10.0.0.2:2222", "ssh -F cfg -T -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -p 2222 -l bench -- 10.0.0.2 true"},
		{"root@[fd00::2]:22", "ssh -F cfg -T -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -p 22 -l root -- fd00::2 true"},
	} {
		c, err := ParseLoadHost(tt.in, "cfg")
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, strings.Join(c.sshArgs("true"), " "))
	}
	for _, bad := range []string{"", "@h", "h:0", "h;rm", "[::1", "-F/x"} {
		_, err := ParseLoadHost(bad, "")
		assert.Error(t, err, bad)
	}
}

// TestSSHErrorFix: ssh's own failures are named, with the fix.
func TestSSHErrorFix(t *testing.T) {
	c, err := ParseLoadHost("bench@client:2222", "")
	require.NoError(t, err)
	for _, tt := range []struct {
		stderr string
		is     error
		fix    string
	}{
		{"No ED25519 host key is known for [client]:2222 and you have requested strict checking.\r\nHost key verification failed.", ErrHostKey, "ssh-keyscan -p 2222 client"},
		{"bench@client: Permission denied (publickey).", ErrAuth, "BatchMode=yes"},
		{"ssh: connect to host client port 2222: Connection refused", ErrUnreachable, "runs sshd"},
	} {
		err := c.sshError("read its architecture", errors.New("exit status 255"), tt.stderr)
		assert.ErrorIs(t, err, tt.is)
		assert.ErrorContains(t, err, "client bench@client:2222 (ssh): read its architecture")
		assert.ErrorContains(t, err, tt.fix)
	}
}
