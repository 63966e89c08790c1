package fetch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// fakeDNS answers every A query with ip and every other query with no answer, over UDP
// on loopback; resolver returns a Go resolver that asks it.
func fakeDNS(t *testing.T, ip netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			// Header (12 bytes), then one question: labels, zero byte, type, class.
			end := 12
			for end < len(q) && q[end] != 0 {
				end += int(q[end]) + 1
			}
			end += 5
			if end > len(q) {
				continue
			}
			qtype := binary.BigEndian.Uint16(q[end-4:])
			resp := append([]byte{}, q[:2]...)    // id
			resp = append(resp, 0x81, 0x80, 0, 1) // response, recursion available; 1 question
			answers := byte(0)
			if qtype == 1 {
				answers = 1
			}
			resp = append(resp, 0, answers, 0, 0, 0, 0) // answers, authority, additional
			resp = append(resp, q[12:end]...)
			if answers == 1 {
				a := ip.As4()
				resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4)
				resp = append(resp, a[:]...)
			}
			pc.WriteTo(resp, addr)
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

func TestResolvedAddressIsChecked(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "internal") })
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	// A public-looking name that resolves to loopback.
	res := fakeDNS(t, netip.MustParseAddr("127.0.0.1"))
	u := "http://data.example.test:" + port + "/d.json"

	guarded := Fetcher{Resolver: res}
	if _, err := guarded.Get(context.Background(), u); !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("guarded: error = %v, want ErrBlocked naming 127.0.0.1", err)
	}
	// The same resolver is used when local addresses are allowed: the name reaches the server.
	open := Fetcher{Resolver: res, AllowLocal: true}
	if b, err := open.Get(context.Background(), u); err != nil || string(b) != "internal" {
		t.Fatalf("allow local: %q, %v", b, err)
	}
}

func TestRedirectToNameResolvingInternalRefused(t *testing.T) {
	hits := 0
	internal := serve(t, func(w http.ResponseWriter, r *http.Request) { hits++; fmt.Fprint(w, "metadata") })
	port := internal.URL[strings.LastIndex(internal.URL, ":")+1:]
	public := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://rebind.example.test:"+port+"/", http.StatusFound)
	})
	// 127.0.0.1 plays a public address; the name in the redirect resolves to 127.0.0.2,
	// which plays an internal one.
	f := Fetcher{
		Resolver: fakeDNS(t, netip.MustParseAddr("127.0.0.2")),
		blocked:  func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.2") },
	}
	if _, err := f.Get(context.Background(), public.URL); !errors.Is(err, ErrBlocked) {
		t.Fatalf("error = %v, want ErrBlocked", err)
	}
	if hits != 0 {
		t.Fatal("internal server reached")
	}
}
