package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parsed is what the parser extracted from one response.
type parsed struct {
	status    int
	body      int64
	mustClose bool
	used      int
	done      bool
	err       error
}

// parseChunks feeds chunks in order and, if the response is not complete
// when they run out, tells the parser about the end of the stream.
func parseChunks(head bool, chunks ...[]byte) parsed {
	var p respParser
	p.reset(head)
	used := 0
	for _, c := range chunks {
		n, err := p.feed(c)
		used += n
		if err != nil {
			return parsed{err: err}
		}
		if p.done() {
			return parsed{status: p.status, body: p.bodyBytes, mustClose: p.mustClose(), used: used, done: true}
		}
	}
	if err := p.eof(); err != nil {
		return parsed{err: err}
	}
	return parsed{status: p.status, body: p.bodyBytes, mustClose: p.mustClose(), used: used, done: p.done()}
}

// TestParseRealResponses parses responses captured from nginx 1.22 (Debian),
// Go's net/http and Python's http.server on 127.0.0.1, and checks status and
// body length against net/http's own parser, whole and split at every byte.
func TestParseRealResponses(t *testing.T) {
	files, err := filepath.Glob("testdata/responses/*.http")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			head := strings.Contains(f, "head")
			method := "GET"
			if head {
				method = "HEAD"
			}
			req, _ := http.NewRequest(method, "http://x/", nil)
			ref, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), req)
			require.NoError(t, err)
			body, err := io.ReadAll(ref.Body)
			require.NoError(t, err)

			got := parseChunks(head, raw)
			require.NoError(t, got.err)
			assert.True(t, got.done)
			assert.Equal(t, ref.StatusCode, got.status)
			assert.Equal(t, int64(len(body)), got.body, "body bytes (de-chunked)")
			assert.Equal(t, len(raw), got.used, "the capture holds exactly one response")
			assert.Equal(t, ref.Close, got.mustClose, "connection must close")

			for i := 1; i < len(raw); i++ {
				split := parseChunks(head, raw[:i], raw[i:])
				require.NoError(t, split.err, "split at %d", i)
				require.Equal(t, got, split, "split at %d", i)
			}
			var bytewise [][]byte
			for i := range raw {
				bytewise = append(bytewise, raw[i:i+1])
			}
			assert.Equal(t, got, parseChunks(head, bytewise...), "byte by byte")
		})
	}
}

func TestParseEdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		head   bool
		in     string
		status int
		body   int64
		close  bool
		err    bool
	}{
		{name: "chunk extensions and upper-case hex", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA;name=val\r\n0123456789\r\n0\r\n\r\n", status: 200, body: 10},
		{name: "trailers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n", status: 200, body: 3},
		{name: "bare LF line endings", in: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", status: 200, body: 2},
		{name: "100 continue then 200", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: 1},
		{name: "HEAD ignores Content-Length", head: true, in: "HTTP/1.1 200 OK\r\nContent-Length: 999\r\n\r\n", status: 200},
		{name: "304 has no body", in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", status: 304},
		{name: "204 has no body", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "body until close", in: "HTTP/1.1 200 OK\r\n\r\nuntil the end", status: 200, body: 13, close: true},
		{name: "HTTP/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "HTTP/1.0 without keep-alive closes", in: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, close: true},
		{name: "Connection token list", in: "HTTP/1.1 200 OK\r\nconnection: Upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n", status: 200, close: true},
		{name: "gzip, chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n", status: 200, body: 1},
		{name: "zero Content-Length", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "garbage", in: "SSH-2.0-OpenSSH_9.2\r\n", err: true},
		{name: "status not numeric", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: true},
		{name: "bad Content-Length", in: "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n", err: true},
		{name: "conflicting Content-Length", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", err: true},
		{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: true},
		{name: "missing CRLF after chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy", err: true},
		{name: "header without colon", in: "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", err: true},
		{name: "truncated body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", err: true},
		{name: "oversized line", in: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLine+1), err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseChunks(tt.head, []byte(tt.in))
			if tt.err {
				require.Error(t, got.err)
				assert.True(t, errors.Is(got.err, ErrProtocol))
				var pe *protocolError
				assert.True(t, errors.As(got.err, &pe))
				assert.NotEmpty(t, pe.What)
				return
			}
			require.NoError(t, got.err)
			assert.True(t, got.done)
			assert.Equal(t, tt.status, got.status)
			assert.Equal(t, tt.body, got.body)
			assert.Equal(t, tt.close, got.mustClose)
		})
	}
}

// TestParserReusesBuffer checks the "no per-request allocation" claim: a
// warm parser parses a response split across reads without allocating.
func TestParserReusesBuffer(t *testing.T) {
	raw, err := os.ReadFile("testdata/responses/go-net-http-chunked.http")
	require.NoError(t, err)
	var p respParser
	run := func() {
		p.reset(false)
		for i := 0; i < len(raw); i += 7 {
			if _, err := p.feed(raw[i:min(i+7, len(raw))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	assert.Zero(t, testing.AllocsPerRun(100, run))
}

// FuzzResponseParser: never panics; the result does not depend on where
// the input is split; a successfully parsed response is one net/http's
// parser also accepts with the same status.
func FuzzResponseParser(f *testing.F) {
	files, _ := filepath.Glob("testdata/responses/*.http")
	for _, fn := range files {
		raw, err := os.ReadFile(fn)
		if err == nil {
			f.Add(raw, uint16(len(raw)/2))
		}
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), uint16(30))
	f.Fuzz(func(t *testing.T, raw []byte, at uint16) {
		whole := parseChunks(false, raw)
		i := int(at) % (len(raw) + 1)
		split := parseChunks(false, raw[:i], raw[i:])
		if (whole.err == nil) != (split.err == nil) {
			t.Fatalf("split at %d changes the outcome: %v vs %v", i, whole.err, split.err)
		}
		if whole.err == nil && whole != split {
			t.Fatalf("split at %d: %+v vs %+v", i, whole, split)
		}
		if whole.err == nil && whole.done && whole.used > 0 {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw[:whole.used])), nil)
			if err == nil && resp.StatusCode != whole.status && whole.status >= 200 {
				t.Fatalf("status %d, net/http says %d", whole.status, resp.StatusCode)
			}
		}
	})
}
