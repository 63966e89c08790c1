package completions

import (
	"context"
	"testing"
)

// TestReview10cEmbedPartialBillingNotDoubledOnContentFilter: a Gemini embeddings request
// whose second batch is refused by a content filter after the first was answered (and
// billed, 300 tokens). Embed's try closure records the billed part (g.account), then
// run() sees KindContentFilter and contentFiltered() records pe.Usage a second time.
func TestReview10cEmbedPartialBillingNotDoubledOnContentFilter(t *testing.T) {
	g, ledger, in := geminiBatchGateway(t, "input blocked by the content filter", true)
	_, err := g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "gemini/gemini-embedding-001", Input: EmbeddingInput{Texts: in}})
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
	g, ledger, in := geminiBatchGateway(t, "bad", false)
	if _, err := g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "gemini/gemini-embedding-001", Input: EmbeddingInput{Texts: in}}); err == nil {
		t.Fatal("want the failure")
	}
	e := ledger.all()
	if len(e) != 1 || !e[0].Estimated {
		t.Errorf("locally counted tokens of the answered batch recorded as reported: %+v", e)
	}
}
