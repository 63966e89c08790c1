package providers_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestDialRealtime: OpenAI's adapter dials {base}/realtime?model=… with its key as a
// Bearer and the caller's headers; Azure OpenAI's dials its deployment's realtime URL
// (api-version and deployment, or the v1 API's model) with its api-key; a handshake the
// upstream refuses is a *Error with its status, kind and message; an adapter without a key
// dials nothing and fails with ErrNotConfigured.
func TestDialRealtime(t *testing.T) {
	var mu sync.Mutex
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Clone(context.Background())
		mu.Unlock()
		if r.URL.Query().Get("model") == "nope" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	last := func() *http.Request {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	ctx := context.Background()
	oa := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-server"})
	c, err := oa.DialRealtime(ctx, "gpt-realtime", http.Header{"Openai-Beta": {"realtime=v1"}})
	if err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
	if r := last(); r.URL.Path != "/v1/realtime" || r.URL.RawQuery != "model=gpt-realtime" || r.Header.Get("Authorization") != "Bearer sk-server" || r.Header.Get("OpenAI-Beta") != "realtime=v1" {
		t.Errorf("openai dialled %s with %v", r.URL, r.Header)
	}
	_, err = oa.DialRealtime(ctx, "nope", nil)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.StatusCode != 401 || pe.Kind != providers.KindAuth || pe.Message != "Incorrect API key provided" {
		t.Errorf("refused handshake: %#v", err)
	}

	az := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL, APIKey: "az-key"}, APIVersion: "2024-10-01-preview"})
	if c, err = az.DialRealtime(ctx, "prod-realtime", nil); err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
	if r := last(); r.URL.Path != "/openai/realtime" || r.URL.Query().Get("api-version") != "2024-10-01-preview" || r.URL.Query().Get("deployment") != "prod-realtime" || r.Header.Get("Api-Key") != "az-key" {
		t.Errorf("azure dialled %s with %v", r.URL, r.Header)
	}
	v1 := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL, APIKey: "az-key"}, APIVersion: "v1"})
	if c, err = v1.DialRealtime(ctx, "prod-realtime", nil); err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
	if r := last(); r.URL.Path != "/openai/v1/realtime" || r.URL.RawQuery != "model=prod-realtime" {
		t.Errorf("azure v1 dialled %s", r.URL)
	}

	none := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1"})
	if _, err := none.DialRealtime(ctx, "gpt-realtime", nil); !errors.Is(err, providers.ErrNotConfigured) {
		t.Errorf("without a key: %v", err)
	}
}

// TestDialRealtimeTranscription: a transcription session is dialled with intent=transcription
// and no model (OpenAI refuses one: the session update names the transcription model), with
// the adapter's credential: OpenAI's {base}/realtime, Azure OpenAI's api-version URL (no
// deployment) or its v1 API's.
func TestDialRealtimeTranscription(t *testing.T) {
	var mu sync.Mutex
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Clone(context.Background())
		mu.Unlock()
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		d         providers.RealtimeTranscriptionDialer
		path, q   string
		auth, val string
	}{
		{"openai", providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-server"}), "/v1/realtime", "intent=transcription", "Authorization", "Bearer sk-server"},
		{"azure", providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL, APIKey: "az-key"}, APIVersion: "2025-04-01-preview"}),
			"/openai/realtime", "api-version=2025-04-01-preview&intent=transcription", "Api-Key", "az-key"},
		{"azure v1", providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL, APIKey: "az-key"}, APIVersion: "v1"}),
			"/openai/v1/realtime", "intent=transcription", "Api-Key", "az-key"},
	} {
		conn, err := c.d.DialRealtimeTranscription(ctx, "gpt-4o-transcribe", nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		conn.CloseNow()
		mu.Lock()
		r := got
		mu.Unlock()
		if r.URL.Path != c.path || r.URL.RawQuery != c.q || r.Header.Get(c.auth) != c.val {
			t.Errorf("%s dialled %s with %v", c.name, r.URL, r.Header)
		}
	}
}
