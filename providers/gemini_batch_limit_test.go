package providers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview10GeminiEmbedMoreThan100Inputs: Gemini's batchEmbedContents refuses a batch of
// more than 100 requests ("BatchEmbedContentsRequest.requests: at most 100 requests can be
// in one batch", 400 INVALID_ARGUMENT), while the gateway accepts up to 2,048 inputs. The
// fake below enforces Gemini's bound; the adapter should split the inputs into batches.
func TestReview10GeminiEmbedMoreThan100Inputs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Requests []json.RawMessage `json:"requests"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if len(body.Requests) > 100 {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"code":400,"message":"* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n","status":"INVALID_ARGUMENT"}}`)
			return
		}
		vs := make([]string, len(body.Requests))
		for i := range vs {
			vs[i] = `{"values":[0.1,0.2]}`
		}
		fmt.Fprintf(w, `{"embeddings":[%s]}`, strings.Join(vs, ","))
	}))
	defer srv.Close()
	g := providers.NewGemini(providers.Config{BaseURL: srv.URL, APIKey: "g-key"})
	in := make([]string, 150)
	for i := range in {
		in[i] = fmt.Sprintf("text %d", i)
	}
	res, err := g.Embed(context.Background(), &providers.EmbeddingRequest{Model: "gemini-embedding-001", Input: in})
	if err != nil {
		t.Fatalf("150 inputs (the gateway allows 2,048): %v (kind %s)", err, providers.KindOf(err))
	}
	if len(res.Vectors) != 150 {
		t.Fatalf("%d vectors", len(res.Vectors))
	}
}
