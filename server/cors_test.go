package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCORS: a browser preflight from an allowed origin is answered without a key; actual
// responses carry the origin and expose the request id; other origins get no CORS headers;
// without an allow-list CORS is off.
func TestCORS(t *testing.T) {
	s := testServer(t, Config{CORSOrigins: []string{"https://app.example.com"}}, nil)
	hs := httptest.NewServer(s)
	defer hs.Close()
	pre := func(origin string) *http.Response {
		req, _ := http.NewRequest("OPTIONS", hs.URL+"/v1/chat/completions", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-stainless-os,x-stainless-retry-count")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := pre("https://app.example.com")
	h := resp.Header
	if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "authorization") ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "x-stainless-os") ||
		h.Get("Access-Control-Max-Age") == "" || !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, h)
	}
	if resp := pre("https://evil.example.com"); resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.StatusCode == 204 {
		t.Fatalf("disallowed origin got %d %v", resp.StatusCode, resp.Header)
	}
	req, _ := http.NewRequest("GET", hs.URL+"/healthz", nil)
	req.Header.Set("Origin", "https://app.example.com")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(r2.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") || !strings.Contains(r2.Header.Get("Access-Control-Expose-Headers"), "X-Litellm-Response-Cost") {
		t.Fatalf("actual response: %v", r2.Header)
	}
	off := httptest.NewServer(testServer(t, Config{}, nil))
	defer off.Close()
	req, _ = http.NewRequest("OPTIONS", off.URL+"/v1/chat/completions", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	r3, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r3.Body.Close()
	if r3.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS on without an allow-list: %v", r3.Header)
	}
}
