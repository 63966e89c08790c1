package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"sync/atomic"
	"time"
)

// tlsFlags make serve answer HTTPS itself, as LiteLLM's proxy does with
// --ssl_certfile_path and --ssl_keyfile_path: OpenAI's realtime clients dial wss:// only,
// and a small deployment needs no reverse proxy for it. The pair is read at start and again
// at SIGHUP, so a renewed certificate is served without a restart.
type tlsFlags struct {
	Cert, Key string
	current   atomic.Pointer[tls.Certificate]
}

func (t *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.Cert, "tls-cert", "", "PEM certificate file (the chain, leaf first): serve HTTPS on --addr (HTTP/2 too; wss:// for /v1/realtime), with --tls-key; both read again at SIGHUP, so a renewed certificate is served without a restart")
	fs.StringVar(&t.Key, "tls-key", "", "PEM private key file of --tls-cert")
}

func (t *tlsFlags) enabled() bool { return t.Cert != "" || t.Key != "" }

// check refuses one of the pair without the other.
func (t *tlsFlags) check(worker bool) error {
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
