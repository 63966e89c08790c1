package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// testKey and otherKey are two callers the test server accepts.
const (
	testKey  = "client-test-key"
	otherKey = "client-other-key"
)

// realServer starts the real Switchyard server package over httptest with the capability
// options mk builds from the store and the server's base URL.
func realServer(t *testing.T, mk func(st *store.Store, baseURL string) []server.Option) (*client.Client, *store.Store) {
	t.Helper()
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	// The listener exists before the server starts, so the options can know its URL and
	// the handler is set before any request can arrive.
	ts := httptest.NewUnstartedServer(nil)
	var opts []server.Option
	if mk != nil {
		opts = mk(st, "http://"+ts.Listener.Addr().String())
	}
	s, err := server.New(server.Config{Store: st, APIKeys: []string{testKey, otherKey}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, opts...)
	if err != nil {
		ts.Close()
		t.Fatal(err)
	}
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		s.Close(context.Background())
	})
	c, err := client.New(client.WithBaseURL(ts.URL), client.WithAPIKey(testKey))
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

func selectionOptions(st *store.Store, _ string) []server.Option {
	return []server.Option{server.ModelSelection(routing.NewSelector(routing.Options{Store: st}))}
}

func TestNewReadsEnvironment(t *testing.T) {
	env := map[string]string{"SWITCHYARD_BASE_URL": "https://sy.example.com/api/v1/", "SERVICE_API_KEY": " env-key "}
	c, err := client.New(client.WithGetenv(func(k string) string { return env[k] }))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != "https://sy.example.com" {
		t.Fatalf("base URL %q", c.BaseURL())
	}
	c, err = client.New(client.WithGetenv(func(string) string { return "" }))
	if err != nil || c.BaseURL() != client.DefaultBaseURL {
		t.Fatalf("default: %v %v", c, err)
	}
	if _, err := client.New(client.WithBaseURL("ftp://x")); err == nil {
		t.Fatal("ftp base URL accepted")
	}
}

func TestKeyFromEnvironmentIsSent(t *testing.T) {
	c, _ := realServer(t, selectionOptions)
	ctx := context.Background()
	req := &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "hello"}},
		LLMProviders: []client.Provider{{Provider: "openai", Model: "gpt-4o"}},
	}
	env := map[string]string{"SWITCHYARD_BASE_URL": c.BaseURL(), "SERVICE_API_KEY": testKey}
	good, _ := client.New(client.WithGetenv(func(k string) string { return env[k] }))
	if _, err := good.ModelSelect(ctx, req); err != nil {
		t.Fatalf("key from SERVICE_API_KEY rejected: %v", err)
	}
	env["SERVICE_API_KEY"] = "wrong"
	bad, _ := client.New(client.WithGetenv(func(k string) string { return env[k] }))
	_, err := bad.ModelSelect(ctx, req)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Kind != "Unauthorized" || !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("wrong key: %#v", err)
	}
}

func TestModelSelectAgainstServer(t *testing.T) {
	c, _ := realServer(t, selectionOptions)
	ctx := context.Background()
	depth := 2
	res, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages: []client.Message{{Role: "user", Content: "Write a Go function that reverses a slice."}},
		LLMProviders: []client.Provider{
			{Provider: "openai", Model: "gpt-4o"},
			{Provider: "openai", Model: "gpt-4o-mini"},
			{Provider: "anthropic", Model: "claude-3-5-sonnet-20240620"},
		},
		MaxModelDepth: &depth,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.LLMLabel == "" || res.SessionID == "" || len(res.Providers) != 2 {
		t.Fatalf("answer %+v", res)
	}
	if res.Providers[0].Label() != res.LLMLabel || res.Providers[0].Rank != 1 {
		t.Fatalf("ranked list does not start with the label: %+v", res)
	}
	// The session links to the next call.
	res2, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:        []client.Message{{Role: "user", Content: "And now in Python?"}},
		LLMProviders:    []client.Provider{{Name: "fast"}, {Name: "smart", Attributes: map[string]any{"quality": 0.9}}},
		PreviousSession: res.SessionID,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res2.LLMLabel != "smart" {
		t.Fatalf("name shape: %+v", res2)
	}

	// The raw form sends a body as given, e.g. the "models" alias with plain strings.
	res3, err := c.ModelSelectRaw(ctx, map[string]any{
		"messages": []map[string]string{{"role": "user", "content": "hi"}},
		"models":   []string{"openai/gpt-4o-mini"},
	})
	if err != nil || res3.LLMLabel != "openai/gpt-4o-mini" {
		t.Fatalf("raw: %+v %v", res3, err)
	}
}

func TestModelSelectErrorsAreTyped(t *testing.T) {
	c, _ := realServer(t, selectionOptions)
	ctx := context.Background()
	_, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "robot", Content: "hi"}},
		LLMProviders: []client.Provider{{Name: "a"}},
	})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Kind != "Bad Request" || !strings.Contains(ae.Message, "role") {
		t.Fatalf("bad role: %#v", err)
	}
	if !errors.Is(err, client.ErrInvalid) || errors.Is(err, client.ErrNotFound) {
		t.Fatal("errors.Is mapping")
	}
	_, err = c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:        []client.Message{{Role: "user", Content: "hi"}},
		LLMProviders:    []client.Provider{{Name: "a"}},
		PreviousSession: "no-such-session",
	})
	if !errors.Is(err, client.ErrNotFound) || !strings.Contains(err.Error(), "previous_session") {
		t.Fatalf("unknown session: %v", err)
	}
}
