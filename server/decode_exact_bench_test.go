package server

import (
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// BenchmarkDecodeExactCompletions decodes a native completions body (four messages, the
// integer fields maxTokens and maxRetries) the way POST /api/v1/completions does.
func BenchmarkDecodeExactCompletions(b *testing.B) {
	body := []byte(`{"models":["openai/gpt-4o-mini"],"fallback_models":["anthropic/claude-3-5-haiku"],` +
		`"messages":[{"role":"system","content":[{"type":"text","text":"You are terse."}]},` +
		`{"role":"user","content":[{"type":"text","text":"What is the capital of France?"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Paris."}]},` +
		`{"role":"user","content":[{"type":"text","text":"And of Italy?"}]}],` +
		`"temperature":0.2,"maxTokens":256,"maxRetries":2}`)
	b.ReportAllocs()
	for b.Loop() {
		var req completions.Request
		if err := decodeExact(body, &req, http.StatusUnprocessableEntity); err != nil {
			b.Fatal(err)
		}
	}
}
