package completions

import (
	"context"
	"testing"
)

// TestClosedGatewayServesCalls: as Gateway.Close documents, a closed gateway refuses only
// new background responses; a chat and an embeddings call made after Close still reach
// their upstream and are answered.
func TestClosedGatewayServesCalls(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Still here."})
	if err := h.g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, err := h.g.Complete(context.Background(), Scope{Owner: "alice"}, userReq("hi", "a/m"))
	if err != nil {
		t.Fatalf("chat after Close: %v", err)
	}
	if resp.Text() != "Still here." || h.a.callCount("m") != 1 {
		t.Errorf("chat after Close answered %q after %d upstream calls, want the upstream's answer after 1", resp.Text(), h.a.callCount("m"))
	}
	e := newEmbedHarness(t)
	if err := e.g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	emb, err := e.g.Embed(context.Background(), Scope{Owner: "alice"},
		&EmbeddingsRequest{Model: "text-embedding-3-small", Input: EmbeddingInput{Texts: []string{"one"}}})
	if err != nil {
		t.Fatalf("embeddings after Close: %v", err)
	}
	if len(emb.Data) != 1 || e.openai.calls != 1 {
		t.Errorf("embeddings after Close: %d vectors after %d upstream calls, want 1 after 1", len(emb.Data), e.openai.calls)
	}
}
