package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// An *Error carries the x-request-id the failure was answered with, also in its message.
func TestErrorCarriesRequestID(t *testing.T) {
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req_from_the_server")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"messages: at least one message is required","type":"invalid_request_error","param":"messages","code":null}}`)
	})
	_, err := c.ChatCompletion(context.Background(), &client.ChatCompletionRequest{Model: "openai/x"})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.RequestID != "req_from_the_server" {
		t.Fatalf("error %#v", err)
	}
	if !strings.Contains(err.Error(), "(request id req_from_the_server)") {
		t.Errorf("message %q does not name the request id", err)
	}
}

// TestErrorRequestIDFindsTheRequest: a request the server refused, through the Go client:
// the *Error's RequestID names the request in the usage history, recorded as an error.
func TestErrorRequestIDFindsTheRequest(t *testing.T) {
	rec := usagelog.New(usagelog.Options{})
	_, base := realServerURL(t, func(st *store.Store, _ string) []server.Option {
		reg := providers.FromEnv(func(k string) string {
			return map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:1"}[k]
		}, providers.Options{})
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: rec})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g), server.Usage(rec)}
	})
	c, err := client.New(client.WithBaseURL(base), client.WithAPIKey(testKey))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ChatCompletion(context.Background(), &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini"})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.HasPrefix(ae.RequestID, "req_") {
		t.Fatalf("error %#v", err)
	}
	req, _ := http.NewRequest("GET", base+"/api/v1/usage/requests", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var history struct{ Data []usagelog.Request }
	if err := json.NewDecoder(resp.Body).Decode(&history); err != nil {
		t.Fatal(err)
	}
	if len(history.Data) != 1 || history.Data[0].RequestID != ae.RequestID || history.Data[0].Outcome != completions.RequestFailed {
		t.Fatalf("history %+v, want the refused request %s", history.Data, ae.RequestID)
	}
}

// A stream that fails after it started: its error carries the stream's x-request-id, which
// the stream also reports, on both the native and the OpenAI-compatible stream.
func TestStreamErrorCarriesRequestID(t *testing.T) {
	withID := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Request-Id", "req_stream_1")
			h(w, r)
		}
	}
	chat := fakeServer(t, withID(fakeSSE("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"+
		"event: error\ndata: {\"error\":{\"message\":\"cut\",\"type\":\"server_error\"}}\n\n")))
	cs, err := chat.ChatCompletionStream(context.Background(), chatRequest("openai/gpt-4o"))
	if err != nil {
		t.Fatal(err)
	}
	for cs.Next() {
	}
	var cse *client.ChatStreamError
	if !errors.As(cs.Err(), &cse) || cse.RequestID != "req_stream_1" || cs.RequestID() != "req_stream_1" {
		t.Errorf("chat stream: Err() %#v, RequestID() %q", cs.Err(), cs.RequestID())
	}

	native := fakeServer(t, withID(fakeSSE("data: "+chunkA+"\n\nevent: error\ndata: {\"error\":\"Stream Error\",\"message\":\"upstream cut\"}\n\n")))
	st, err := native.CompleteStream(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	for st.Next() {
	}
	var se *client.StreamError
	if !errors.As(st.Err(), &se) || se.RequestID != "req_stream_1" || st.RequestID() != "req_stream_1" {
		t.Errorf("native stream: Err() %#v, RequestID() %q", st.Err(), st.RequestID())
	}
}
