package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// embeddingsUpstream is a scripted OpenAI upstream answering /v1/embeddings (one vector,
// two prompt tokens) and nothing else.
type embeddingsUpstream struct{}

func (embeddingsUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"ok","usage":{"prompt_tokens":2,"total_tokens":2}}`)
}

// TestOperationMetadataTags: /v1/embeddings (as rerank, moderation and images, which share
// its handler) reads LiteLLM's metadata.tags and litellm_metadata.tags as tags, beside the
// body's tags and the header's: the request's spend log row carries them all; a malformed
// metadata.tags is a 400 naming it.
func TestOperationMetadataTags(t *testing.T) {
	hs, s := keysServerWith(t, nil, embeddingsUpstream{}, Config{APIKeys: []string{testKey}})
	st, b := postWith(t, hs.URL+"/v1/embeddings", testKey, `{"model":"openai/ok","input":"hi","tags":["body"],"metadata":{"tags":["feature:search"]},"litellm_metadata":{"tags":["team:a"]}}`,
		map[string]string{"X-Litellm-Tags": "hdr"})
	if st != http.StatusOK {
		t.Fatalf("embeddings with metadata tags: %d %s", st, b)
	}
	rows := spendLogs(t, s, testKey, "")
	if len(rows) != 1 || !slices.Equal(rows[0].RequestTags, []string{"body", "feature:search", "team:a", "hdr"}) {
		t.Fatalf("the request's tags: %+v", rows)
	}
	st, b = postWith(t, hs.URL+"/v1/embeddings", testKey, `{"model":"openai/ok","input":"hi","litellm_metadata":{"tags":[1]}}`, nil)
	if st != http.StatusBadRequest && st != http.StatusUnprocessableEntity || !strings.Contains(b, "litellm_metadata.tags") {
		t.Fatalf("a malformed litellm_metadata.tags: %d %s", st, b)
	}
}
