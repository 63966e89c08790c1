package storetest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// CutMode says what a FakeCutProxy does to the next COMMIT it sees.
type CutMode int32

const (
	// PassCommit forwards it: no cut armed.
	PassCommit CutMode = iota
	// ForwardCommitAndCut forwards it, then cuts the client's connection: the server
	// commits, the answer is lost.
	ForwardCommitAndCut
	// SwallowCommitAndCut cuts the client's connection without forwarding it: the server
	// never gets it, and waits for it.
	SwallowCommitAndCut
)

// FakeCutProxy is a test TCP proxy between a PostgreSQL client (pgx) and a test cluster
// that cuts a connection mid-commit as a network partition would: the client's side is
// closed, the server's left open and silent (no FIN reaches the server, which holds the
// session as it would until its TCP keepalive gave up on the client). It acts on
// simple-protocol COMMITs (pgx's Tx.Commit, pgstore's "COMMIT; …unlock"); it parses no
// encrypted session (the proxied address says sslmode=disable).
type FakeCutProxy struct {
	ln     net.Listener
	dial   func() (net.Conn, error)
	armed  atomic.Int32 // a CutMode, for the next COMMIT
	cuts   atomic.Int32
	mu     sync.Mutex
	server []net.Conn // every server connection, closed at the end of the test
}

// NewFakeCutProxy listens on a local port and forwards to the cluster at dsn (a URL or
// key=value string, as pgx takes); proxied is the address to connect to instead. The
// proxy and the server sides of its connections close with the test.
func NewFakeCutProxy(t testing.TB, dsn string) (p *FakeCutProxy, proxied string) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", cfg.Host+"/.s.PGSQL."+strconv.Itoa(int(cfg.Port))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p = &FakeCutProxy{ln: ln, dial: func() (net.Conn, error) { return net.Dial(network, addr) }}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.server {
			c.Close()
		}
	})
	go p.accept()
	return p, "postgres://" + cfg.User + "@" + ln.Addr().String() + "/" + cfg.Database + "?sslmode=disable"
}

// Arm sets what the proxy does to the next COMMIT it sees, on any connection.
func (p *FakeCutProxy) Arm(m CutMode) { p.armed.Store(int32(m)) }

// Cuts counts the connections the proxy cut.
func (p *FakeCutProxy) Cuts() int { return int(p.cuts.Load()) }

func (p *FakeCutProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := p.dial()
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.server = append(p.server, server)
		p.mu.Unlock()
		go func() {
			io.Copy(client, server)
			client.Close()
		}()
		go p.forward(client, server)
	}
}

// forward copies the client's messages to the server, message by message, acting on a
// simple-protocol COMMIT as armed says.
func (p *FakeCutProxy) forward(client, server net.Conn) {
	defer client.Close()
	cut := false
	defer func() {
		if !cut {
			server.Close() // the client ended the session: so does the server's side
		}
	}()
	// Untyped messages first: SSL or GSS encryption requests, then the startup message.
	for {
		msg, err := readUntyped(client)
		if err != nil {
			return
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(msg[4:8]); code != 80877103 && code != 80877104 {
			break
		}
	}
	header := make([]byte, 5)
	for {
		if _, err := io.ReadFull(client, header); err != nil {
			return
		}
		body := make([]byte, int(binary.BigEndian.Uint32(header[1:]))-4)
		if _, err := io.ReadFull(client, body); err != nil {
			return
		}
		msg := append(header, body...)
		if header[0] == 'Q' && bytes.HasPrefix(bytes.ToUpper(bytes.TrimSpace(body)), []byte("COMMIT")) {
			switch mode := CutMode(p.armed.Swap(int32(PassCommit))); mode {
			case ForwardCommitAndCut, SwallowCommitAndCut:
				if mode == ForwardCommitAndCut {
					server.Write(msg)
				}
				cut = true
				p.cuts.Add(1)
				return // the client's side closed; the server's left open
			}
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// readUntyped reads a message without a type byte (its length first).
func readUntyped(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := int(binary.BigEndian.Uint32(n[:]))
	if size < 8 || size > 1<<16 {
		return nil, errors.New("fake cut proxy: bad startup message")
	}
	msg := make([]byte, size)
	copy(msg, n[:])
	_, err := io.ReadFull(r, msg[4:])
	return msg, err
}
