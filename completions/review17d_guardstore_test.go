package completions

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// review17d: a pre_call secrets/pii guardrail with action mask rewrites only the Request
// sent upstream; the Responses API stores the caller's own input items (ownItems) as
// they came, so the API key the guardrail masked is persisted in the gateway's store and
// served back by GET /v1/responses/{id}/input_items (and kept in the chain a
// previous_response_id replays), while the native surface's stored conversation holds the
// masked text. LiteLLM masks before anything is logged or kept. Fix: store the masked
// input (map the masked texts back onto the input items), or document that stored
// responses keep the unmasked input.
func TestReview17dStoredResponseKeepsMaskedInput(t *testing.T) {
	f := newFake("a")
	f.on("m", step{text: "ok"})
	g, err := New(Options{Providers: fakeRegistry{"a": f}, Prices: fakePrices{}, Store: memstore.New(),
		Guardrails: []GuardrailConfig{{Name: "keys", Kind: GuardrailSecrets, Mode: GuardrailPreCall, DefaultOn: true}}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := respond(t, g, "alice", `{"model":"a/m","input":"is sk-proj-abcdefghijklmnopqrstuvwx valid?"}`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(f.lastRequest().Messages[0].Content, "sk-proj-") {
		t.Fatal("the key reached the upstream")
	}
	items, err := g.ResponseInputItems(context.Background(), "alice", o.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if b, _ := json.Marshal(it); strings.Contains(string(b), "sk-proj-") {
			t.Errorf("the stored input item keeps the masked key: %s", b)
		}
	}
}
