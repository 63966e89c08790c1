package completions

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

// rerankBenchUpstream answers every rerank call with the ranking of 100 documents, in
// Cohere's v2 shape (one search unit, no tokens: the adapter counts them) or Jina's (its
// tokens reported), precomputed; it reads the whole request first.
func rerankBenchUpstream(b *testing.B, cohere bool) *httptest.Server {
	results := make([]string, 100)
	for i := range results {
		results[i] = fmt.Sprintf(`{"index":%d,"relevance_score":%g}`, (i*37)%100, 1-float64(i)/100)
	}
	body := []byte(`{"model":"jina-reranker-v2-base-multilingual","usage":{"total_tokens":2400},"results":[` + strings.Join(results, ",") + `]}`)
	if cohere {
		body = []byte(`{"id":"b","results":[` + strings.Join(results, ",") + `],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}}}`)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// rerankBenchDocs are 100 documents of a RAG retrieval (about 20 tokens each).
func rerankBenchDocs() []string {
	docs := make([]string, 100)
	for i := range docs {
		docs[i] = fmt.Sprintf("Passage %d: the quick brown fox jumps over the lazy dog while the committee reviews section %d.", i, i*7)
	}
	return docs
}

// BenchmarkRerank is a rerank of 100 documents through the adapter alone (the HTTP call,
// decoding and sorting the results, Cohere's tokens counted locally) and through
// Gateway.Rerank (validation, resolution, the attempt's bookkeeping, pricing, the ledger,
// the answer encoded as the server writes it), for Cohere's shape and Jina's.
func BenchmarkRerank(b *testing.B) {
	for _, api := range []string{"cohere", "jina"} {
		srv := rerankBenchUpstream(b, api == "cohere")
		env := map[string]string{"COHERE_API_KEY": "k", "COHERE_BASE_URL": srv.URL, "JINA_API_KEY": "k", "JINA_BASE_URL": srv.URL}
		reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
		model := map[string]string{"cohere": "rerank-v3.5", "jina": "jina-reranker-v2-base-multilingual"}[api]
		docs := rerankBenchDocs()
		b.Run(api+"/adapter", func(b *testing.B) {
			p, _ := reg.Lookup(api)
			req := &providers.RerankRequest{Model: model, Query: "which passage mentions the committee's review?", Documents: docs, TopN: 100}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.(providers.Reranker).Rerank(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(api+"/gateway", func(b *testing.B) {
			g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog(), Ledger: &recordingLedger{}})
			if err != nil {
				b.Fatal(err)
			}
			rdocs := make([]RerankDocument, len(docs))
			for i, d := range docs {
				rdocs[i] = RerankDocument(d)
			}
			req := &RerankRequest{Model: api + "/" + model, Query: "which passage mentions the committee's review?", Documents: rdocs, TopN: intp(100)}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := g.Rerank(context.Background(), Scope{}, req)
				if err != nil {
					b.Fatal(err)
				}
				if err := json.NewEncoder(io.Discard).Encode(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
