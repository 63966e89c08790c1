package providers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestBearerTokensNotInErrors: an upstream error that quotes the request's credential
// headers (a misbehaving proxy, a debug endpoint) leaves no piece of an access token in the
// error, whatever gave the token — a fixed Entra ID token for Azure, a fixed OAuth token
// for Vertex AI, an Entra token provider — as for an API key.
func TestBearerTokensNotInErrors(t *testing.T) {
	token := "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9." + strings.Repeat("QWxhZGRpbjpvcGVuIHNlc2FtZQ", 12)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"code":"401","message":"Access denied for Authorization=`+r.Header.Get("Authorization")+`"}}`)
	}))
	defer srv.Close()
	vertex, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: srv.URL}, Project: "p", AccessToken: token})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		p     providers.Provider
		model string
	}{
		{"azure ADToken", providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL}, ADToken: token}), "gpt-4o"},
		{"azure ADTokenProvider", providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL},
			ADTokenProvider: func(context.Context) (string, error) { return token, nil }}), "gpt-4o"},
		{"vertex AccessToken", vertex, "gemini-2.0-flash"},
	} {
		_, err := tc.p.Complete(context.Background(), hello(tc.model))
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		if !strings.Contains(err.Error(), "Access denied") {
			t.Fatalf("%s: the upstream's message is gone: %v", tc.name, err)
		}
		if leaks(err.Error(), token) {
			t.Errorf("%s: the error carries part of the access token: %s", tc.name, err)
		}
	}
}
