package loadgen

import (
	"bytes"
	"fmt"
)

// protocolError says what was wrong with a response and where.
type protocolError struct {
	What string // what was expected, e.g. "status line \"HTTP/1.x NNN reason\""
	Got  string // the offending bytes, truncated to 64
}

// Error says what was expected and what arrived.
func (e *protocolError) Error() string {
	return fmt.Sprintf("loadgen: malformed HTTP response: want %s, got %q", e.What, e.Got)
}

// Unwrap returns ErrProtocol.
func (e *protocolError) Unwrap() error { return ErrProtocol }

func protoErr(what string, got []byte) error {
	if len(got) > 64 {
		got = got[:64]
	}
	return &protocolError{What: what, Got: string(got)}
}

// maxLine bounds one status, header, chunk-size or trailer line.
const maxLine = 16 << 10

type parseState uint8

const (
	stStatus parseState = iota
	stHeader
	stBody      // Content-Length bytes remain
	stBodyEOF   // body runs until the server closes the connection
	stChunkSize // reading a chunk-size line
	stChunkData // in a chunk
	stChunkCRLF // the CRLF after a chunk's data
	stTrailer   // trailer lines after the last chunk
	stDone      // response complete
)

// respParser is a streaming HTTP/1.x response parser. It keeps only what it
// needs for load generation (status, framing, keep-alive) and reuses its
// line buffer, so parsing a response allocates nothing once warm. Input may
// be split at any byte.
type respParser struct {
	state     parseState
	head      bool // the request was HEAD: no body whatever the headers say
	status    int
	minor     int // HTTP/1.minor
	clen      int64
	remaining int64
	chunked   bool
	close     bool // the server will close (Connection: close, or HTTP/1.0 without keep-alive)
	keepAlive bool // Connection: keep-alive seen
	bodyBytes int64
	line      []byte // a partial line carried between reads
	crlfSeen  int
	// captureServer asks for the Server header to be kept in server (an
	// allocation, so only for the first response).
	captureServer bool
	server        string
}

// reset prepares the parser for the next response on the connection.
func (p *respParser) reset(head bool) {
	line := p.line[:0]
	*p = respParser{head: head, line: line, clen: -1}
}

// done reports whether a whole response has been parsed.
func (p *respParser) done() bool { return p.state == stDone }

// mustClose reports whether the connection must be closed after this
// response.
func (p *respParser) mustClose() bool {
	if p.close || p.state == stBodyEOF {
		return true
	}
	return p.minor == 0 && !p.keepAlive
}

// eof tells the parser the server closed the connection. It returns nil if
// that completed the response (a body delimited by the close).
func (p *respParser) eof() error {
	if p.state == stBodyEOF {
		p.state = stDone
		return nil
	}
	if p.state == stDone {
		return nil
	}
	return protoErr("the rest of the response", []byte("EOF"))
}

// nextLine returns the next complete line from b (without CR LF), the
// number of bytes of b consumed, and whether a line was complete. Partial
// lines are carried in p.line.
func (p *respParser) nextLine(b []byte) (line []byte, n int, ok bool, err error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(p.line)+len(b) > maxLine {
			return nil, len(b), false, protoErr(fmt.Sprintf("a line shorter than %d bytes", maxLine), append(p.line, b...))
		}
		p.line = append(p.line, b...)
		return nil, len(b), false, nil
	}
	if len(p.line) > 0 {
		if len(p.line)+i > maxLine {
			return nil, i + 1, false, protoErr(fmt.Sprintf("a line shorter than %d bytes", maxLine), p.line)
		}
		p.line = append(p.line, b[:i]...)
		line = p.line
		p.line = p.line[:0]
	} else {
		line = b[:i]
	}
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, i + 1, true, nil
}

// feed parses b. It returns how many bytes it consumed; it stops after the
// end of a response (p.done()), leaving any further bytes unconsumed.
func (p *respParser) feed(b []byte) (int, error) {
	off := 0
	for off < len(b) && p.state != stDone {
		switch p.state {
		case stStatus, stHeader, stChunkSize, stTrailer:
			line, n, ok, err := p.nextLine(b[off:])
			off += n
			if err != nil {
				return off, err
			}
			if !ok {
				return off, nil
			}
			if err := p.onLine(line); err != nil {
				return off, err
			}
		case stBody, stChunkData:
			n := int64(len(b) - off)
			if n > p.remaining {
				n = p.remaining
			}
			off += int(n)
			p.remaining -= n
			p.bodyBytes += n
			if p.remaining == 0 {
				if p.state == stBody {
					p.state = stDone
				} else {
					p.state = stChunkCRLF
					p.crlfSeen = 0
				}
			}
		case stBodyEOF:
			p.bodyBytes += int64(len(b) - off)
			off = len(b)
		case stChunkCRLF:
			c := b[off]
			off++
			switch {
			case c == '\r' && p.crlfSeen == 0:
				p.crlfSeen = 1
			case c == '\n':
				p.state = stChunkSize
			default:
				return off, protoErr("CRLF after chunk data", b[off-1:])
			}
		}
	}
	return off, nil
}

func (p *respParser) onLine(line []byte) error {
	switch p.state {
	case stStatus:
		if len(line) == 0 && p.status == 0 {
			// Tolerate the stray CRLF some servers send before a response.
			return nil
		}
		return p.statusLine(line)
	case stHeader:
		if len(line) == 0 {
			return p.endHeaders()
		}
		return p.headerLine(line)
	case stChunkSize:
		return p.chunkSize(line)
	case stTrailer:
		if len(line) == 0 {
			p.state = stDone
		}
		return nil
	}
	return nil
}

func (p *respParser) statusLine(line []byte) error {
	// HTTP/1.1 200 OK
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
		line[7] < '0' || line[7] > '9' || (len(line) > 12 && line[12] != ' ') {
		return protoErr(`status line "HTTP/1.x NNN reason"`, line)
	}
	st := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return protoErr(`a 3-digit status code`, line)
		}
		st = st*10 + int(c-'0')
	}
	if st < 100 {
		return protoErr(`a status code of at least 100`, line)
	}
	p.status = st
	p.minor = int(line[7] - '0')
	p.state = stHeader
	return nil
}

// equalFold reports whether b equals the lower-case ASCII string s,
// ignoring case, without allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// hasToken reports whether the comma-separated list v holds token s
// (lower case), ignoring case.
func hasToken(v []byte, s string) bool {
	for len(v) > 0 {
		i := bytes.IndexByte(v, ',')
		var t []byte
		if i < 0 {
			t, v = v, nil
		} else {
			t, v = v[:i], v[i+1:]
		}
		if equalFold(trimOWS(t), s) {
			return true
		}
	}
	return false
}

func (p *respParser) headerLine(line []byte) error {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return protoErr(`a header line "Name: value"`, line)
	}
	name, val := line[:i], trimOWS(line[i+1:])
	switch {
	case equalFold(name, "content-length"):
		if len(val) == 0 || len(val) > 18 {
			return protoErr("a decimal Content-Length", line)
		}
		var n int64
		for _, c := range val {
			if c < '0' || c > '9' {
				return protoErr("a decimal Content-Length", line)
			}
			n = n*10 + int64(c-'0')
		}
		if p.clen >= 0 && p.clen != n {
			return protoErr("one Content-Length", line)
		}
		p.clen = n
	case equalFold(name, "transfer-encoding"):
		// chunked must be the final coding (RFC 9112 6.1).
		j := bytes.LastIndexByte(val, ',')
		if equalFold(trimOWS(val[j+1:]), "chunked") {
			p.chunked = true
		}
	case p.captureServer && equalFold(name, "server"):
		p.server = string(val)
	case equalFold(name, "connection"):
		if hasToken(val, "close") {
			p.close = true
		}
		if hasToken(val, "keep-alive") {
			p.keepAlive = true
		}
	}
	return nil
}

func (p *respParser) endHeaders() error {
	switch {
	case p.status >= 100 && p.status < 200 && p.status != 101:
		// An interim response: the final one follows.
		head := p.head
		p.reset(head)
		return nil
	case p.head || p.status == 204 || p.status == 304 || p.status == 101:
		p.state = stDone
	case p.chunked:
		p.state = stChunkSize
	case p.clen >= 0:
		p.remaining = p.clen
		if p.clen == 0 {
			p.state = stDone
		} else {
			p.state = stBody
		}
	default:
		p.state = stBodyEOF
		p.close = true
	}
	return nil
}

func (p *respParser) chunkSize(line []byte) error {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = trimOWS(line)
	if len(line) == 0 || len(line) > 15 {
		return protoErr("a hexadecimal chunk size", line)
	}
	var n int64
	for _, c := range line {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return protoErr("a hexadecimal chunk size", line)
		}
		n = n<<4 | int64(d)
	}
	if n == 0 {
		p.state = stTrailer
		return nil
	}
	p.remaining = n
	p.state = stChunkData
	return nil
}
