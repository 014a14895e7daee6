package loadgen_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// selfSigned generates a certificate for localhost and 127.0.0.1/::1.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsServer serves "ok" over TLS on host:0 (closing after each response
// when closeEach is set) and records the SNI names it was sent. It stops
// in t.Cleanup.
type tlsServer struct {
	url  string
	mu   sync.Mutex
	snis map[string]int
}

func startTLS(t *testing.T, host string, maxVersion uint16, closeEach bool) *tlsServer {
	t.Helper()
	s := &tlsServer{snis: map[string]int{}}
	cfg := &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}, MaxVersion: maxVersion,
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			s.mu.Lock()
			s.snis[h.ServerName]++
			s.mu.Unlock()
			return nil, nil
		}}
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	if closeEach {
		resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
	}
	plain := rawServer(t, func(c *net.TCPConn, _ *bufio.Reader) {
		tc := tls.Server(c, cfg)
		r := bufio.NewReader(tc)
		for readRequest(r) {
			if _, err := tc.Write([]byte(resp)); err != nil || closeEach {
				return
			}
		}
	})
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(plain, "http://"), "/"))
	require.NoError(t, err)
	s.url = "https://" + net.JoinHostPort(host, port) + "/"
	return s
}

func TestIntegrationTLSKeepAlive(t *testing.T) {
	for _, v := range []struct {
		max  uint16
		name string
	}{{tls.VersionTLS12, "TLS 1.2"}, {tls.VersionTLS13, "TLS 1.3"}} {
		t.Run(v.name, func(t *testing.T) {
			s := startTLS(t, "127.0.0.1", v.max, false)
			res, err := loadgen.Run(context.Background(), loadgen.Config{URL: s.url, Insecure: true, Connections: 4, Threads: 2, Requests: 400})
			require.NoError(t, err)
			assert.Equal(t, uint64(400), res.Requests)
			assert.Zero(t, res.Errors.Socket()+res.Errors.Status, "%+v", res.Errors)
			assert.Equal(t, uint64(4), res.TLS.Handshakes, "one handshake per keep-alive connection")
			assert.Equal(t, v.name, res.TLS.Version)
			assert.NotEmpty(t, res.TLS.CipherSuite)
			assert.Equal(t, int64(2), res.DocumentLength)
			assert.Equal(t, int64(400), res.Histograms.Latency.TotalCount())
		})
	}
}

// TestIntegrationTLSResumption: a server that closes after each response
// makes every request reconnect; the reconnects resume the session.
func TestIntegrationTLSResumption(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		s := startTLS(t, "127.0.0.1", v, true)
		res, err := loadgen.Run(context.Background(), loadgen.Config{URL: s.url, Insecure: true, Connections: 2, Threads: 1, Requests: 60})
		require.NoError(t, err)
		assert.Equal(t, uint64(60), res.Requests, "%+v", res.Errors)
		assert.Zero(t, res.Errors.Socket(), "%+v", res.Errors)
		t.Logf("%+v", res.TLS)
		assert.GreaterOrEqual(t, res.TLS.Handshakes, uint64(60))
		assert.GreaterOrEqual(t, res.TLS.Resumed, res.TLS.Handshakes-2, "all but the first handshakes resume: %+v", res.TLS)
	}
}

// TestIntegrationTLSSNI: the URL's host is sent as SNI and the
// certificate is verified against it (no Insecure needed with a trusted
// root: here it is not trusted, so Insecure).
func TestIntegrationTLSSNI(t *testing.T) {
	ips, err := net.LookupIP("localhost")
	if err != nil || len(ips) == 0 || !ips[0].IsLoopback() {
		t.Skipf("localhost does not resolve to loopback here: %v %v", ips, err)
	}
	s := startTLS(t, "localhost", 0, false)
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: s.url, Insecure: true, Connections: 1, Requests: 10})
	require.NoError(t, err)
	assert.Equal(t, uint64(10), res.Requests)
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, map[string]int{"localhost": 1}, s.snis)
}

// TestIntegrationTLSHandshakeErrors: a self-signed certificate without
// Insecure, and a server that does not speak TLS, fail as TLS errors.
func TestIntegrationTLSHandshakeErrors(t *testing.T) {
	s := startTLS(t, "127.0.0.1", 0, false)
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: s.url, Connections: 1, Requests: 5})
	require.NoError(t, err)
	assert.Zero(t, res.Requests)
	assert.GreaterOrEqual(t, res.Errors.TLS, uint64(5), "%+v", res.Errors)
	assert.Equal(t, res.Errors.TLS, errnoCount(res, "tls", "certificate: unknown authority"), "%+v", res.Errors.Errnos)
	assert.Zero(t, res.TLS.Handshakes)

	plain := rawServer(t, func(c *net.TCPConn, r *bufio.Reader) {
		c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
	})
	res, err = loadgen.Run(context.Background(), loadgen.Config{URL: strings.Replace(plain, "http://", "https://", 1), Insecure: true, Connections: 1, Requests: 3})
	require.NoError(t, err)
	assert.Zero(t, res.Requests)
	assert.GreaterOrEqual(t, res.Errors.TLS, uint64(3), "%+v", res.Errors)
	assert.Equal(t, res.Errors.TLS, errnoCount(res, "tls", "not TLS"), "%+v", res.Errors.Errnos)
}

// TestIntegrationTLSOpenModel: an https open-model run ends at its window
// like an http one.
func TestIntegrationTLSOpenModel(t *testing.T) {
	s := startTLS(t, "127.0.0.1", 0, false)
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: s.url, Insecure: true, Connections: 8, Threads: 2, Rate: 400, Duration: 500 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, uint64(200), res.Sent+res.Missed)
	assert.Equal(t, res.Sent, res.Requests+res.Drain.Requests, "%+v %+v", res.Errors, res.Drain)
	assert.Zero(t, res.Errors.Socket(), "%+v", res.Errors)
}
