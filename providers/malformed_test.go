package providers_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestMalformedSuccessBodySaysWhatItWas: a 200 whose body is an HTML page (a base URL
// missing its /v1, a proxy's or a portal's page), empty, a stream, or JSON cut short is a
// KindStreamBroken error saying which, with the page's start and the Content-Type, rather
// than only "malformed response body"; a stream answered with such a page likewise.
func TestMalformedSuccessBodySaysWhatItWas(t *testing.T) {
	const page = "<!doctype html>\n<html><body>Welcome to nginx!</body></html>"
	cases := []struct {
		name, ct, body string
		want           []string
	}{
		{"html", "text/html", page, []string{"is not JSON", "Content-Type text/html", `"<!doctype html> <html><body>Welcome to nginx!`, "base URL"}},
		{"empty", "application/json", "", []string{"empty response body"}},
		{"stream", "text/event-stream", "data: {\"choices\":[]}\n\n", []string{"is a stream (server-sent events, Content-Type text/event-stream)", "does not honour"}},
		{"cut short", "application/json", `{"id":"x","choices":[{"message":{"content":"hi"`, []string{"cut short", "ends after 47 bytes"}},
	}
	for _, f := range faultFormats {
		for _, tc := range cases {
			t.Run(string(f)+"/"+tc.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", tc.ct)
					w.Write([]byte(tc.body))
				}))
				defer srv.Close()
				_, err := newProvider(t, f, srv.URL, nil).Complete(context.Background(), hello("m-1"))
				pe, ok := err.(*providers.Error)
				if !ok || pe.Kind != providers.KindStreamBroken || pe.StatusCode != 200 {
					t.Fatalf("err = %#v, want a KindStreamBroken *providers.Error of HTTP 200", err)
				}
				for _, w := range tc.want {
					if !strings.Contains(pe.Message, w) {
						t.Errorf("message %q does not say %q", pe.Message, w)
					}
				}
			})
		}
	}
	for _, f := range allFormats {
		t.Run(string(f)+"/stream", func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte(page))
			}))
			defer srv.Close()
			s, err := newProvider(t, f, srv.URL, nil).Stream(context.Background(), hello("m-1"))
			if err == nil {
				_, err = drain(s)
			}
			pe, ok := err.(*providers.Error)
			if !ok || pe.Kind != providers.KindStreamBroken || !strings.Contains(pe.Message, "Welcome to nginx!") || !strings.Contains(pe.Message, "Content-Type text/html") {
				t.Fatalf("err = %v, want KindStreamBroken quoting the page and its Content-Type", err)
			}
		})
	}
	t.Run("embeddings", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(page))
		}))
		defer srv.Close()
		e := newProvider(t, providers.FormatOpenAI, srv.URL, nil).(providers.Embedder)
		_, err := e.Embed(context.Background(), &providers.EmbeddingRequest{Model: "e-1", Input: []string{"hi"}})
		if providers.KindOf(err) != providers.KindStreamBroken || !strings.Contains(err.Error(), "embeddings response is not JSON") || !strings.Contains(err.Error(), "Welcome to nginx!") {
			t.Fatalf("err = %v, want KindStreamBroken quoting the page", err)
		}
	})
}

// TestCompleteCutMidBodySaysSo: an upstream (or a proxy) closing the connection partway
// through a non-streamed answer of declared length is a KindConnection error (retried, then
// the next model) saying how much of the answer arrived.
func TestCompleteCutMidBodySaysSo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 64<<10)
				conn.Read(buf) // the request (small enough for one read)
				conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 186\r\n\r\n{\"id\":\"x\",\"choices\":[{\"index\":0,"))
			}()
		}
	}()
	for _, f := range faultFormats {
		t.Run(string(f), func(t *testing.T) {
			_, err := newProvider(t, f, "http://"+ln.Addr().String(), nil).Complete(context.Background(), hello("m-1"))
			pe, ok := err.(*providers.Error)
			if !ok || pe.Kind != providers.KindConnection || !strings.Contains(pe.Message, "closed the connection mid-answer: 32 of the 186 bytes") {
				t.Fatalf("err = %v, want KindConnection saying 32 of the 186 bytes arrived", err)
			}
		})
	}
}
