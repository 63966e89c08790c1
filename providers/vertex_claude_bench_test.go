package providers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// The cost of Claude on Vertex AI beside Anthropic's own API: the same request (a system
// prompt, a few turns, a tool) built, sent to an in-memory upstream and its whole answer
// read, through the Anthropic adapter and through Vertex (a fixed token, as a cached one
// is): what the host seam adds (URL, Bearer, body members).
func BenchmarkVertexClaude(b *testing.B) {
	answer := `{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"` + strings.Repeat("word ", 60) + `"}],"stop_reason":"end_turn","usage":{"input_tokens":420,"output_tokens":60}}`
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	})
	client := &http.Client{Transport: recorderTransport{upstream}}
	vertex, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: "http://upstream.test", HTTPClient: client},
		Project: "p", Location: "us-east5", AccessToken: "ya29.bench"})
	if err != nil {
		b.Fatal(err)
	}
	req := func(model string) *providers.Request {
		return &providers.Request{Model: model, MaxTokens: 1000,
			Tools: []providers.Tool{{Name: "get_weather", Description: "Weather of a place", Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)}},
			Messages: []providers.Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Hello there."},
				{Role: "assistant", Content: "Hi."}, {Role: "user", Content: strings.Repeat("Tell me more. ", 40)}}}
	}
	for _, a := range []struct {
		name  string
		p     providers.Provider
		model string
	}{
		{"anthropic", providers.NewAnthropic(providers.Config{BaseURL: "http://upstream.test", APIKey: "k", HTTPClient: client}), "claude-sonnet-4-20250514"},
		{"vertex_claude", vertex, "claude-sonnet-4@20250514"},
	} {
		b.Run(a.name, func(b *testing.B) {
			r := req(a.model)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.p.Complete(context.Background(), r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
