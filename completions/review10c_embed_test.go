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

// TestReview10cEmbedPartialBillingNotDoubledOnContentFilter: a Gemini embeddings request
// whose second batch is refused by a content filter after the first was answered (and
// billed, 300 tokens). Embed's try closure records the billed part (g.account), then
// run() sees KindContentFilter and contentFiltered() records pe.Usage a second time.
func TestReview10cEmbedPartialBillingNotDoubledOnContentFilter(t *testing.T) {
	gemini := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Requests []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body.Requests[0].Content.Parts[0].Text == "w100" {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"code":400,"message":"input blocked by the content filter","status":"INVALID_ARGUMENT"}}`)
			return
		}
		var vs []string
		for range body.Requests {
			vs = append(vs, `{"values":[1]}`)
		}
		fmt.Fprintf(w, `{"embeddings":[%s],"usageMetadata":{"promptTokenCount":%d}}`, strings.Join(vs, ","), 3*len(body.Requests))
	}))
	t.Cleanup(gemini.Close)
	ledger := &recordingLedger{}
	g, err := New(Options{Providers: fakeRegistry{"gemini": providers.NewGemini(providers.Config{BaseURL: gemini.URL, APIKey: "k"})},
		Prices: providers.DefaultCatalog(), Ledger: ledger, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]string, 150)
	for i := range in {
		in[i] = fmt.Sprintf("w%d", i)
	}
	_, err = g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "gemini/gemini-embedding-001", Input: EmbeddingInput{Texts: in}})
	if err == nil {
		t.Fatal("want the failure")
	}
	total := 0
	for _, e := range ledger.all() {
		total += e.Usage.PromptTokens
	}
	if total != 300 {
		t.Errorf("ledger records %d prompt tokens over %d entries (%+v); Google billed 300 (err %v)", total, len(ledger.all()), ledger.all(), err)
	}
}

// TestReview10cEmbedPartialBillingEstimatedFlag: Gemini answers without usageMetadata (the
// adapter then counts the inputs locally, UsageEstimated on success). On a failure the
// answered batches' locally counted tokens travel in Error.Usage and are recorded with
// Estimated false, as if Google had reported them.
func TestReview10cEmbedPartialBillingEstimatedFlag(t *testing.T) {
	gemini := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Requests []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body.Requests[0].Content.Parts[0].Text == "w100" {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`)
			return
		}
		var vs []string
		for range body.Requests {
			vs = append(vs, `{"values":[1]}`)
		}
		fmt.Fprintf(w, `{"embeddings":[%s]}`, strings.Join(vs, ","))
	}))
	t.Cleanup(gemini.Close)
	ledger := &recordingLedger{}
	g, err := New(Options{Providers: fakeRegistry{"gemini": providers.NewGemini(providers.Config{BaseURL: gemini.URL, APIKey: "k"})},
		Prices: providers.DefaultCatalog(), Ledger: ledger, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]string, 150)
	for i := range in {
		in[i] = fmt.Sprintf("w%d", i)
	}
	if _, err := g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "gemini/gemini-embedding-001", Input: EmbeddingInput{Texts: in}}); err == nil {
		t.Fatal("want the failure")
	}
	e := ledger.all()
	if len(e) != 1 || !e[0].Estimated {
		t.Errorf("locally counted tokens of the answered batch recorded as reported: %+v", e)
	}
}
