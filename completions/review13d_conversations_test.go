package completions

import (
	"context"
	"strings"
	"testing"
)

// TestReview13dPreviousResponseOfAConversationAnswer: an answer given in a conversation
// was answered from the conversation's items and its own input (OpenAI: "items from this
// conversation are prepended to input_items for this response request"). Continuing it
// by previous_response_id must bring those items, and its input_items must list them; the
// gateway stores only the request's own input, so the conversation's items are silently
// lost: the model no longer knows the user's name.
func TestReview13dPreviousResponseOfAConversationAnswer(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	c, err := h.g.CreateOpenAIConversation(ctx, "alice", []ResponsesItem{userTextItem("My name is Ada.")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "Hello."})
	first, err := respond(t, h.g, "alice", `{"model":"a/m","conversation":"`+c.ID+`","input":"Hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	if msgs := h.a.lastRequest().Messages; len(msgs) != 2 || msgs[0].Content != "My name is Ada." {
		t.Fatalf("first turn: the model got %+v", msgs)
	}
	if !first.Store {
		t.Fatal("the first answer was not stored")
	}

	items, err := h.g.ResponseInputItems(ctx, "alice", first.ID)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, it := range items {
		for _, p := range it.Content.Parts {
			texts = append(texts, p.Text)
		}
	}
	if strings.Join(texts, "|") != "My name is Ada.|Hi" {
		t.Errorf("input_items of an answer given in a conversation: %q, want the conversation's items then its input", texts)
	}

	h.a.on("m", step{text: "Ada."})
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","previous_response_id":"`+first.ID+`","input":"What is my name?"}`); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range h.a.lastRequest().Messages {
		got = append(got, m.Content)
	}
	if len(got) == 0 || got[0] != "My name is Ada." {
		t.Errorf("previous_response_id of an answer given in a conversation: the model got %q, without the conversation's items it was answered from", got)
	}
}

// TestReview13dConversationDuplicateItemIDs: an item whose id the conversation already
// holds is stored a second time (OpenAI refuses it: "Duplicate item found with id …").
// A client resending an earlier item (an agent resending a function_call with its id)
// leaves the conversation with the item twice — the model is sent the call twice — and
// item reads and deletes by id reach only the first copy.
func TestReview13dConversationDuplicateItemIDs(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	call := ResponsesItem{Type: "function_call", ID: "fc_1", CallID: "call_1", Name: "weather", Arguments: `{}`}
	c, err := h.g.CreateOpenAIConversation(ctx, "alice", []ResponsesItem{userTextItem("Weather?"), call}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, addErr := h.g.AddOpenAIConversationItems(ctx, "alice", c.ID, []ResponsesItem{call})
	_, respErr := respond(t, h.g, "alice", `{"model":"a/m","conversation":"`+c.ID+`","input":[
		{"type":"function_call","id":"fc_1","call_id":"call_1","name":"weather","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":"sunny"}]}`)
	items, err := h.g.OpenAIConversationItems(ctx, "alice", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range items {
		if it.ID == "fc_1" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the conversation holds %d items with id fc_1 (add: %v; /v1/responses: %v), want 1 and the duplicates refused", n, addErr, respErr)
	}
	if addErr == nil && respErr == nil {
		// Deleting fc_1 leaves fc_1 readable.
		if _, err := h.g.DeleteOpenAIConversationItem(ctx, "alice", c.ID, "fc_1"); err != nil {
			t.Fatal(err)
		}
		if _, err := h.g.OpenAIConversationItem(ctx, "alice", c.ID, "fc_1"); err == nil {
			t.Errorf("item fc_1 is still there after it was deleted")
		}
	}
}

// TestReview13dIssuerItemReferenceToItsKeysAnswer: an issuer reaches its virtual key's
// stored answers by id (store.Owns): it reads them and continues them by
// previous_response_id, but an item_reference to one of their output items is refused —
// the item index (store.ResponseItems) is keyed by the hash of the exact owner.
func TestReview13dIssuerItemReferenceToItsKeysAnswer(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	const issuer, vk = "key_0123456789abcdef", "key_0123456789abcdef/vk_0011223344556677"
	h.a.on("m", step{text: "Hello from the app."})
	o, err := respond(t, h.g, vk, `{"model":"a/m","input":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.StoredResponse(ctx, issuer, o.ID); err != nil {
		t.Fatalf("the issuer reading its key's answer: %v", err)
	}
	if _, err := respond(t, h.g, issuer, `{"model":"a/m","previous_response_id":"`+o.ID+`","input":"and?"}`); err != nil {
		t.Fatalf("the issuer continuing its key's answer: %v", err)
	}
	if _, err := respond(t, h.g, issuer, `{"model":"a/m","input":[{"type":"item_reference","id":"`+o.Output[0].ID+`"},{"role":"user","content":"and?"}]}`); err != nil {
		t.Errorf("the issuer's item_reference to an output item of its key's answer (which it reads by id): %v", err)
	}
}
