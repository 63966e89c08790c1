package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsBlocked(t *testing.T) {
	blocked := []string{
		"127.0.0.1", "127.8.9.10", "::1", "10.1.2.3", "172.16.0.1", "172.31.255.255",
		"192.168.1.1", "169.254.169.254", "169.254.0.1", "fe80::1", "fc00::1", "fd12::3",
		"0.0.0.0", "::", "100.64.0.1", "100.127.255.254", "224.0.0.1", "255.255.255.255",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "ff02::1",
	}
	allowed := []string{
		"8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "93.184.216.34",
		"2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
	}
	for _, s := range blocked {
		if !IsBlocked(netip.MustParseAddr(s)) {
			t.Errorf("IsBlocked(%s) = false, want true", s)
		}
	}
	for _, s := range allowed {
		if IsBlocked(netip.MustParseAddr(s)) {
			t.Errorf("IsBlocked(%s) = true, want false", s)
		}
	}
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestLoopbackBlockedByDefault(t *testing.T) {
	hits := 0
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { hits++; fmt.Fprint(w, "secret") })
	var f Fetcher
	// The literal loopback address and a name that resolves to it are both refused at dial time.
	for _, u := range []string{srv.URL + "/data.json", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		_, err := f.Get(context.Background(), u)
		if !errors.Is(err, ErrBlocked) || !errors.Is(err, ErrFetch) {
			t.Fatalf("Get(%s) error = %v, want ErrBlocked", u, err)
		}
		if !strings.Contains(err.Error(), u) {
			t.Errorf("error %q does not name the URL %s", err, u)
		}
	}
	if hits != 0 {
		t.Fatalf("server was reached %d times", hits)
	}
}

func TestAllowLocal(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		fmt.Fprint(w, "problem,correct_models\n")
	})
	f := Fetcher{AllowLocal: true}
	r, err := f.Fetch(context.Background(), srv.URL+"/x.csv")
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Body) != "problem,correct_models\n" || r.ContentType != "text/csv" {
		t.Fatalf("got %q, %q", r.Body, r.ContentType)
	}
}

func TestRedirectToBlockedAddressRefused(t *testing.T) {
	// 127.0.0.2 plays an internal host; 127.0.0.1 plays a public one.
	internalHits := 0
	internal := serve(t, func(w http.ResponseWriter, r *http.Request) { internalHits++; fmt.Fprint(w, "metadata") })
	internalURL := strings.Replace(internal.URL, "127.0.0.1", "127.0.0.2", 1)
	public := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internalURL+"/latest/meta-data", http.StatusFound)
	})
	f := Fetcher{blocked: func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.2") }}
	_, err := f.Get(context.Background(), public.URL)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("error = %v, want ErrBlocked", err)
	}
	if internalHits != 0 {
		t.Fatal("redirect target was reached")
	}
	// The same fetcher reads the public host when it does not redirect.
	ok := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "fine") })
	body, err := f.Get(context.Background(), ok.URL)
	if err != nil || string(body) != "fine" {
		t.Fatalf("Get = %q, %v", body, err)
	}
}

func TestRedirectLimitAndScheme(t *testing.T) {
	var srv *httptest.Server
	srv = serve(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		switch {
		case r.URL.Path == "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case n > 0:
			http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
		default:
			fmt.Fprint(w, "done")
		}
	})
	f := Fetcher{AllowLocal: true}
	if body, err := f.Get(context.Background(), srv.URL+"/r/5"); err != nil || string(body) != "done" {
		t.Fatalf("5 redirects: %q, %v", body, err)
	}
	if _, err := f.Get(context.Background(), srv.URL+"/r/6"); !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("6 redirects: error = %v, want ErrTooManyRedirects", err)
	}
	if _, err := f.Get(context.Background(), srv.URL+"/file"); !errors.Is(err, ErrUnsupportedScheme) {
		t.Fatalf("redirect to file://: error = %v, want ErrUnsupportedScheme", err)
	}
}

func TestSizeCap(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		fmt.Fprint(w, strings.Repeat("x", 100))
	})
	f := Fetcher{AllowLocal: true, MaxBytes: 99}
	for _, p := range []string{"/sized", "/chunked"} {
		if _, err := f.Get(context.Background(), srv.URL+p); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: error = %v, want ErrTooLarge", p, err)
		}
	}
	f2 := Fetcher{AllowLocal: true, MaxBytes: 100}
	if b, err := f2.Get(context.Background(), srv.URL+"/chunked"); err != nil || len(b) != 100 {
		t.Fatalf("exactly at the cap: %d bytes, %v", len(b), err)
	}
}

func TestStatusAndSchemes(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	f := Fetcher{AllowLocal: true}
	if _, err := f.Get(context.Background(), srv.URL); !errors.Is(err, ErrStatus) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("error = %v, want ErrStatus 404", err)
	}
	var strict Fetcher
	for u, want := range map[string]error{
		"ftp://example.com/x":   ErrUnsupportedScheme,
		"file:///etc/passwd":    ErrUnsupportedScheme,
		"example.com/data.json": ErrInvalidURL,
		"http://":               ErrInvalidURL,
		"http://%zz":            ErrInvalidURL,
	} {
		if _, err := strict.Get(context.Background(), u); !errors.Is(err, want) {
			t.Errorf("Get(%q) error = %v, want %v", u, err, want)
		}
	}
}

func TestFileURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(path, []byte(`{"problem":"p"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f := Fetcher{AllowLocal: true}
	b, err := f.Get(context.Background(), "file://"+path)
	if err != nil || string(b) != `{"problem":"p"}` {
		t.Fatalf("Get = %q, %v", b, err)
	}
	if _, err := f.Get(context.Background(), "file://"+path+".missing"); !errors.Is(err, ErrFetch) {
		t.Fatalf("missing file: %v", err)
	}
	small := Fetcher{AllowLocal: true, MaxBytes: 3}
	if _, err := small.Get(context.Background(), "file://"+path); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("capped file: %v", err)
	}
}

func TestContextCancel(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := Fetcher{AllowLocal: true}
	if _, err := f.Get(ctx, srv.URL); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}
