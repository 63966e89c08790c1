package pgstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// What fakeCutProxy does to the next COMMIT it sees.
const (
	passCommit    int32 = iota // forward it (no cut armed)
	forwardAndCut              // forward it, then cut the client's connection: the server commits, the answer is lost
	swallowAndCut              // cut the client's connection without forwarding it: the server waits for it
)

// fakeCutProxy is a test TCP proxy between pgx and the test cluster that cuts a
// connection mid-commit as a network partition would: the client's side is closed, the
// server's is left open and silent (no FIN reaches the server, which holds the session
// as it would until its TCP keepalive gives up on the client).
type fakeCutProxy struct {
	ln     net.Listener
	dial   func() (net.Conn, error)
	armed  atomic.Int32 // passCommit, forwardAndCut or swallowAndCut, for the next COMMIT
	cuts   atomic.Int32
	mu     sync.Mutex
	server []net.Conn // every server connection, closed at the end of the test
}

// newFakeCutProxy listens on a local port and forwards to the cluster at dsn.
func newFakeCutProxy(t *testing.T, dsn string) (*fakeCutProxy, string) {
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
	p := &fakeCutProxy{ln: ln, dial: func() (net.Conn, error) { return net.Dial(network, addr) }}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.server {
			c.Close()
		}
	})
	go p.accept()
	proxied := "postgres://" + cfg.User + "@" + ln.Addr().String() + "/" + cfg.Database + "?sslmode=disable"
	return p, proxied
}

func (p *fakeCutProxy) accept() {
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
// simple-protocol COMMIT (pgx's Commit, pgstore's "COMMIT; …unlock") as armed says.
func (p *fakeCutProxy) forward(client, server net.Conn) {
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
		if header[0] == 'Q' && bytes.HasPrefix(bytes.ToUpper(bytes.TrimSpace(body)), []byte("COMMIT")) {
			switch mode := p.armed.Swap(passCommit); mode {
			case forwardAndCut, swallowAndCut:
				if mode == forwardAndCut {
					server.Write(append(header, body...))
				}
				cut = true
				p.cuts.Add(1)
				return // the client's side closed; the server's left open
			}
		}
		if _, err := server.Write(append(header, body...)); err != nil {
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
		return nil, errors.New("fake proxy: bad startup message")
	}
	msg := make([]byte, size)
	copy(msg, n[:])
	_, err := io.ReadFull(r, msg[4:])
	return msg, err
}

// TestCommitCutMidCommitIsResolvedOnce: a charge (an increment of a budget record) whose
// connection a real TCP proxy cuts mid-commit, the server's side left open as a network
// partition leaves it. When the COMMIT reached the server, CommitStatus says it committed
// and the charge is not applied again. When it did not, the server held the session open,
// idle in the transaction (and, under UpdateLocked, the record's advisory lock, so every
// other writer of the account waited too), and txid_status said "in progress" until the
// server's TCP keepalive gave up on the client, two hours by default: the charge waited
// that long to be told. The driver now ends that session (pg_terminate_backend of the
// process read with the transaction's id, while still idle in that transaction), so
// CommitStatus tells "rolled back" at once and the charge is applied again. Either way
// the record counts the charge once, never twice.
func TestCommitCutMidCommitIsResolvedOnce(t *testing.T) {
	addr := dsn(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	proxy, proxied := newFakeCutProxy(t, addr)
	schema := freshSchema()
	st, err := pgstore.Open(ctx, proxied, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	direct, err := pgstore.Open(ctx, addr, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()

	for _, c := range []struct {
		name          string
		mode          int32
		locked        bool
		wantCommitted bool
	}{
		{"COMMIT reached the server, Update", forwardAndCut, false, true},
		{"COMMIT reached the server, UpdateLocked", forwardAndCut, true, true},
		{"COMMIT lost on the way, Update", swallowAndCut, false, false},
		{"COMMIT lost on the way, UpdateLocked", swallowAndCut, true, false},
	} {
		key := strings.ReplaceAll(c.name, " ", "_")
		charge := func() error {
			fn := func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, key) }
			if c.locked {
				return st.UpdateLocked(ctx, []store.Ref{{Collection: store.Budgets, Key: key}}, fn)
			}
			return st.Update(ctx, fn)
		}
		cutsBefore := proxy.cuts.Load()
		proxy.armed.Store(c.mode)
		err := charge()
		proxy.armed.Store(passCommit)
		if proxy.cuts.Load() != cutsBefore+1 {
			t.Fatalf("%s: the proxy cut no connection at the COMMIT (charge: %v)", c.name, err)
		}
		var cu *store.CommitUnknownError
		if !errors.As(err, &cu) {
			t.Fatalf("%s: the charge's error %v, want a *store.CommitUnknownError", c.name, err)
		}
		// Resolve it as the gateway's pending charges do: ask until told (backing off),
		// apply it again only when it did not commit.
		var committed bool
		asked := 0
		for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
			asked++
			committed, err = st.CommitStatus(ctx, cu.Token)
			if ctx.Err() != nil {
				t.Fatalf("%s: CommitStatus still cannot tell after %d questions: %v (the server holds the lost session until its keepalive)", c.name, asked, err)
			}
			if !errors.Is(err, store.ErrCommitUnknown) {
				break
			}
			time.Sleep(wait)
		}
		if err != nil {
			t.Fatalf("%s: CommitStatus: %v", c.name, err)
		}
		if committed != c.wantCommitted {
			t.Errorf("%s: CommitStatus says committed %v, want %v", c.name, committed, c.wantCommitted)
		}
		if !committed {
			if err := charge(); err != nil {
				t.Fatalf("%s: applying the rolled-back charge again: %v", c.name, err)
			}
		}
		// Asked again, the answer stands.
		if again, err := st.CommitStatus(ctx, cu.Token); err != nil || again != committed {
			t.Errorf("%s: CommitStatus asked again: %v %v, want %v", c.name, again, err, committed)
		}
		if got := readCount(t, direct, store.Budgets, key); got != 1 {
			t.Errorf("%s: the account counts the charge %d times, want once", c.name, got)
		}
	}
}
