package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// tlsFlags make serve answer HTTPS itself, as LiteLLM's proxy does with
// --ssl_certfile_path and --ssl_keyfile_path: OpenAI's realtime clients dial wss:// only,
// and a small deployment needs no reverse proxy for it. The pair is read at start and again
// at SIGHUP, so a renewed certificate is served without a restart.
type tlsFlags struct {
	Cert, Key string
	// MaxStreams is --http2-max-concurrent-streams: the requests one HTTP/2 connection may
	// carry at once (its SETTINGS_MAX_CONCURRENT_STREAMS).
	MaxStreams int
	current    atomic.Pointer[tls.Certificate]
}

// HTTP/2's bound on a connection's streams at once: net/http's default, and the range
// --http2-max-concurrent-streams takes (each stream is a request served at once; more than
// maxHTTP2Streams on one connection is a typo, not a need).
const (
	defaultHTTP2Streams = 250
	maxHTTP2Streams     = 100000
)

func (t *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.Cert, "tls-cert", "", "PEM certificate file (the chain, leaf first): serve HTTPS on --addr (HTTP/2 too; wss:// for /v1/realtime), with --tls-key; both read again at SIGHUP, so a renewed certificate is served without a restart")
	fs.StringVar(&t.Key, "tls-key", "", "PEM private key file of --tls-cert")
	fs.IntVar(&t.MaxStreams, "http2-max-concurrent-streams", defaultHTTP2Streams, fmt.Sprintf("with --tls-cert: the requests one HTTP/2 connection may carry at once (its SETTINGS_MAX_CONCURRENT_STREAMS; a client opening more waits for one to end), 1 to %d; a client's requests in flight across its connections are bounded by --max-connections-per-client too", maxHTTP2Streams))
}

// http2 is the HTTP/2 configuration of the API's server (served with --tls-cert).
func (t *tlsFlags) http2() *http.HTTP2Config {
	return &http.HTTP2Config{MaxConcurrentStreams: t.MaxStreams}
}

func (t *tlsFlags) enabled() bool { return t.Cert != "" || t.Key != "" }

// check refuses one of the pair without the other, and a bound on HTTP/2 streams out of
// range.
func (t *tlsFlags) check(worker bool) error {
	if t.MaxStreams < 1 || t.MaxStreams > maxHTTP2Streams {
		return fmt.Errorf("--http2-max-concurrent-streams must be between 1 and %d, got %d", maxHTTP2Streams, t.MaxStreams)
	}
	switch {
	case !t.enabled():
		return nil
	case worker:
		return errors.New("--tls-cert: a worker serves no API (its agents reach it on loopback): set it on serve")
	case t.Cert == "":
		return errors.New("--tls-key needs --tls-cert (the certificate of that key)")
	case t.Key == "":
		return errors.New("--tls-cert needs --tls-key (the certificate's private key)")
	}
	return nil
}

// load reads the pair and serves it from now on; on an error the pair in force stays.
func (t *tlsFlags) load() (*x509.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", t.Cert, t.Key, err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("--tls-cert %s: %w", t.Cert, err)
		}
	}
	t.current.Store(&pair)
	return leaf, nil
}

// config is the listener's TLS configuration: the pair in force at each handshake.
func (t *tlsFlags) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Named, so that HTTP/2 is set up whichever of the server's listeners (this one or
		// the agents' plain one) starts first: net/http leaves it out when Serve begins
		// before ServeTLS on a TLS config without "h2".
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return t.current.Load(), nil
		},
	}
}

// describe is a certificate's subject and expiry, for the log.
func describe(c *x509.Certificate) []any {
	return []any{"subject", c.Subject.String(), "dns_names", c.DNSNames, "not_after", c.NotAfter.UTC().Format(time.RFC3339)}
}
