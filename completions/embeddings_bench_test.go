package completions

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

// embedBenchUpstream answers every embeddings call with 16 vectors of 1,536 numbers (a
// text-embedding-3-small batch), precomputed.
func embedBenchUpstream(b *testing.B) *httptest.Server {
	var data []string
	for i := range 16 {
		nums := make([]string, 1536)
		for j := range nums {
			nums[j] = fmt.Sprintf("%.8f", float64((i*1536+j)%997)/997-0.5)
		}
		data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%s]}`, i, strings.Join(nums, ",")))
	}
	body := []byte(`{"object":"list","data":[` + strings.Join(data, ",") + `],"model":"text-embedding-3-small","usage":{"prompt_tokens":160,"total_tokens":160}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	b.Cleanup(srv.Close)
	return srv
}

func embedBenchInputs() []string {
	in := make([]string, 16)
	for i := range in {
		in[i] = fmt.Sprintf("document %d: the quick brown fox jumps over the lazy dog", i)
	}
	return in
}

// BenchmarkEmbedAdapter is the OpenAI adapter alone: the HTTP call and decoding the vectors.
func BenchmarkEmbedAdapter(b *testing.B) {
	srv := embedBenchUpstream(b)
	o := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL, APIKey: "k"})
	req := &providers.EmbeddingRequest{Model: "text-embedding-3-small", Input: embedBenchInputs()}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.Embed(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedGateway is the same call through Gateway.Embed (validation, resolution,
// retries' bookkeeping, pricing, ledger) and the answer's encoding as the server writes it.
func BenchmarkEmbedGateway(b *testing.B) {
	for _, format := range []string{"float", "base64"} {
		b.Run(format, func(b *testing.B) {
			srv := embedBenchUpstream(b)
			env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}
			g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
				Prices: providers.DefaultCatalog(), Ledger: &recordingLedger{}})
			if err != nil {
				b.Fatal(err)
			}
			req := &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: embedBenchInputs()}, EncodingFormat: format}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := g.Embed(context.Background(), Scope{}, req)
				if err != nil {
					b.Fatal(err)
				}
				if err := resp.WriteJSON(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEmbedGatewayCached is BenchmarkEmbedGateway's float call with the response cache
// in memory: "miss" sends new inputs each time (the keys' hashes and the vectors kept in
// the background on top of the call), "hit" the same 16 again (no upstream call).
func BenchmarkEmbedGatewayCached(b *testing.B) {
	for _, mode := range []string{"miss", "hit"} {
		b.Run(mode, func(b *testing.B) {
			srv := embedBenchUpstream(b)
			env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}
			g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
				Prices: providers.DefaultCatalog(), Ledger: &recordingLedger{}, Cache: CacheOptions{Driver: &MemoryCache{}}})
			if err != nil {
				b.Fatal(err)
			}
			inputs := embedBenchInputs()
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				if mode == "miss" {
					n++
					for i := range inputs {
						inputs[i] = fmt.Sprintf("document %d/%d: the quick brown fox jumps over the lazy dog", n, i)
					}
				}
				req := &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: inputs}}
				resp, err := g.Embed(context.Background(), Scope{}, req)
				if err != nil {
					b.Fatal(err)
				}
				if err := resp.WriteJSON(io.Discard); err != nil {
					b.Fatal(err)
				}
				g.cacheWrites.wg.Wait()
			}
		})
	}
}
