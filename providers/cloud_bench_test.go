package providers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// The translation cost of the cloud adapters against the adapters they are built on: the
// same request (a system prompt, a few turns, two tools) answered by an httptest upstream
// with the same body, non-streamed (a whole answer) and streamed (20 text fragments and
// the usage), through OpenAI and Azure OpenAI, Gemini and Vertex AI (a fixed access token,
// as a cached one is). The upstream handler answers in memory (httptest.ResponseRecorder
// behind the client's transport), so that what is measured is the adapters' work, not the
// loopback's noise.
func BenchmarkCloudAdapters(b *testing.B) {
	var chat, chatSSE, gem, gemSSE strings.Builder
	chat.WriteString(`{"id":"c","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("word ", 60) + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":420,"completion_tokens":60}}`)
	gem.WriteString(`{"candidates":[{"content":{"role":"model","parts":[{"text":"` + strings.Repeat("word ", 60) + `"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":420,"candidatesTokenCount":60},"modelVersion":"gemini-2.0-flash"}`)
	for i := range 20 {
		fmt.Fprintf(&chatSSE, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"},\"finish_reason\":null}]}\n\n", i)
		fmt.Fprintf(&gemSSE, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"tok%d \"}]}}],\"modelVersion\":\"gemini-2.0-flash\"}\n\n", i)
	}
	chatSSE.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	chatSSE.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":420,\"completion_tokens\":20}}\n\ndata: [DONE]\n\n")
	gemSSE.WriteString("data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":420,\"candidatesTokenCount\":20}}\n\n")
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		stream := strings.Contains(r.URL.RawQuery, "alt=sse") || r.Header.Get("Accept") == "text/event-stream"
		body, ctype := chat.String(), "application/json"
		switch {
		case strings.Contains(r.URL.Path, "Content") && stream:
			body, ctype = gemSSE.String(), "text/event-stream"
		case strings.Contains(r.URL.Path, "Content"):
			body = gem.String()
		case stream:
			body, ctype = chatSSE.String(), "text/event-stream"
		}
		w.Header().Set("Content-Type", ctype)
		io.WriteString(w, body)
	})
	client := &http.Client{Transport: recorderTransport{upstream}}
	srv := struct{ URL string }{"http://upstream.test"}
	vertex, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: srv.URL, HTTPClient: client}, Project: "p", AccessToken: "ya29.bench"})
	if err != nil {
		b.Fatal(err)
	}
	adapters := []struct {
		name  string
		p     providers.Provider
		model string
	}{
		{"openai", providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "k", HTTPClient: client}), "gpt-4o"},
		{"azure", providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: client},
			BaseModels: map[string]string{"prod-4o": "gpt-4o-2024-08-06"}}), "prod-4o"},
		{"gemini", providers.NewGemini(providers.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: client}), "gemini-2.0-flash"},
		{"vertex", vertex, "gemini-2.0-flash"},
	}
	temp := 0.2
	for _, stream := range []bool{false, true} {
		for _, a := range adapters {
			req := &providers.Request{Model: a.model, Temperature: &temp, MaxTokens: 512, Tools: []providers.Tool{weatherTool, timeTool},
				Messages: []providers.Message{{Role: "system", Content: strings.Repeat("You are a careful assistant. ", 40)},
					{Role: "user", Content: "What's the weather in Paris?"}, {Role: "assistant", Content: "Let me check."},
					{Role: "user", Content: "And the time there?"}}}
			name := a.name + "/complete"
			if stream {
				name = a.name + "/stream"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if !stream {
						if _, err := a.p.Complete(context.Background(), req); err != nil {
							b.Fatal(err)
						}
						continue
					}
					s, err := a.p.Stream(context.Background(), req)
					if err != nil {
						b.Fatal(err)
					}
					for {
						if _, err := s.Recv(); err != nil {
							if err != io.EOF {
								b.Fatal(err)
							}
							break
						}
					}
					s.Close()
				}
			})
		}
	}
}

// recorderTransport answers every request with h, in memory.
type recorderTransport struct{ h http.Handler }

// RoundTrip serves r with the handler into a recorder and returns its response.
func (t recorderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
