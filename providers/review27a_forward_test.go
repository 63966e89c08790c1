package providers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestReview27aForwardRefusesEncodedEscapes: a path whose dot segments or slashes are
// percent-encoded in any mix is refused (KindBadRequest) before any call: the provider may
// decode them and reach another model or resource than the one the path seems to name.
func TestReview27aForwardRefusesEncodedEscapes(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer up.Close()
	g := NewGemini(Config{Name: "gemini", BaseURL: up.URL, APIKey: "k"})
	for _, path := range []string{
		"v1beta/models/a/.%2e/b:generateContent",
		"v1beta/models/a/%2E./b:generateContent",
		"v1beta/models/a/%2e%2E/b:generateContent",
		"v1beta/models/a%2F..%2Fb:generateContent",
		"v1beta/models/a%5C..%5Cb:generateContent",
		"v1beta/models/a/%zz:generateContent",
	} {
		_, err := g.Forward(context.Background(), &ForwardRequest{Method: "POST", Path: path, Body: []byte(`{}`)})
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindBadRequest {
			t.Errorf("%s: %v, want a bad request", path, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the provider was called %d times", n)
	}
	resp, err := g.Forward(context.Background(), &ForwardRequest{Method: "POST", Path: "v1beta/models/gemini-2.0-flash:generateContent", Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if calls.Load() != 1 {
		t.Errorf("a plain path was not forwarded")
	}
}
