package completions

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// respond answers the Responses request body for owner as the server does: the stored
// conversation first, the gateway's answer, then the answer stored.
func respond(t *testing.T, g *Gateway, owner, body string) (*ResponseObject, error) {
	t.Helper()
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := g.ResolveItemReferences(ctx, owner, &r); err != nil {
		return nil, err
	}
	if err := g.ContinueResponse(ctx, owner, &r); err != nil {
		return nil, err
	}
	defer g.ReleaseResponse(ctx, owner, &r)
	c, err := r.ToChatRequest()
	if err != nil {
		return nil, err
	}
	req, err := c.ToRequest()
	if err != nil {
		return nil, err
	}
	resp, err := g.Complete(ctx, Scope{Owner: owner}, req)
	if err != nil {
		return nil, err
	}
	o := NewResponseObject(&r, NewResponseID(resp.ResponseMessageID), time.Now())
	o.Complete(resp)
	if err := g.StoreResponse(ctx, owner, &r, o); err != nil {
		t.Fatal(err)
	}
	return o, nil
}

// TestStoredResponsesContinueAToolLoop: an agent's tool loop by previous_response_id alone —
// the second request sends only the function_call_output — reaches the model as the whole
// conversation: the first request's messages, the answer's reasoning and call, the result;
// the instructions of the first request are not carried over; another caller cannot
// continue it; a response asked with store: false is not kept.
func TestStoredResponsesContinueAToolLoop(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{call: &providers.ToolCall{ID: "call_7", Name: "weather", Arguments: `{"city":"Paris"}`},
		reasoning: []providers.ReasoningBlock{{Text: "I should look it up", Signature: "sig-1"}}})
	first, err := respond(t, h.g, "alice", `{"model":"a/m","instructions":"Be terse.","input":"Weather in Paris?",
		"tools":[{"type":"function","name":"weather","parameters":{"type":"object"}}],"reasoning":{"effort":"low"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Store || first.PreviousResponseID != nil {
		t.Fatalf("first answer store %v previous %v, want stored with no previous", first.Store, first.PreviousResponseID)
	}
	h.a.on("m", step{text: "Sunny."})
	second, err := respond(t, h.g, "alice", `{"model":"a/m","previous_response_id":"`+first.ID+`",
		"input":[{"type":"function_call_output","call_id":"call_7","output":"22C sunny"}],
		"tools":[{"type":"function","name":"weather","parameters":{"type":"object"}}],"reasoning":{"effort":"low"}}`)
	if err != nil {
		t.Fatal(err)
	}
	msgs := h.a.lastRequest().Messages
	if len(msgs) != 3 || msgs[0].Role != "user" || msgs[0].Content != "Weather in Paris?" ||
		msgs[1].Role != "assistant" || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].ID != "call_7" ||
		len(msgs[1].Reasoning) != 1 || msgs[1].Reasoning[0].Signature != "sig-1" ||
		msgs[2].Role != "tool" || msgs[2].ToolCallID != "call_7" || msgs[2].Content != "22C sunny" {
		t.Fatalf("the model got %+v, want the first question, the call with its reasoning, the result (and no instructions)", msgs)
	}
	if second.PreviousResponseID == nil || *second.PreviousResponseID != first.ID || !second.Store {
		t.Fatalf("second answer previous %v store %v", second.PreviousResponseID, second.Store)
	}

	// A third turn walks two answers back.
	h.a.on("m", step{text: "You asked about Paris."})
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","previous_response_id":"`+second.ID+`","input":"Which city?"}`); err != nil {
		t.Fatal(err)
	}
	if msgs := h.a.lastRequest().Messages; len(msgs) != 5 || msgs[3].Content != "Sunny." || msgs[4].Content != "Which city?" {
		t.Fatalf("third turn: the model got %+v", msgs)
	}

	// The items of the chain, oldest first, with ids.
	items, err := h.g.ResponseInputItems(context.Background(), "alice", second.ID)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, it := range items {
		if it.ID == "" {
			t.Errorf("input item %+v has no id", it)
		}
		types = append(types, it.Type)
	}
	if strings.Join(types, ",") != "message,reasoning,function_call,function_call_output" {
		t.Errorf("input items of the second answer: %v", types)
	}

	// Another caller: not found, neither to continue nor to read.
	var ve *ValidationError
	if _, err := respond(t, h.g, "bob", `{"model":"a/m","previous_response_id":"`+first.ID+`","input":"hi"}`); !errors.As(err, &ve) ||
		ve.Field != "previous_response_id" || !errors.Is(err, ErrResponseNotFound) {
		t.Errorf("bob continuing alice's answer: %v", err)
	}
	if _, err := h.g.StoredResponse(context.Background(), "bob", first.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Errorf("bob reading alice's answer: %v", err)
	}

	// store: false: answered, not kept.
	h.a.on("m", step{text: "ok"})
	unkept, err := respond(t, h.g, "alice", `{"model":"a/m","input":"hi","store":false}`)
	if err != nil || unkept.Store {
		t.Fatalf("store false: %v, store %v", err, unkept != nil && unkept.Store)
	}
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","previous_response_id":"`+unkept.ID+`","input":"hi"}`); !errors.Is(err, ErrResponseNotFound) {
		t.Errorf("continuing an answer asked with store false: %v", err)
	}
}

// TestStoredResponsesDeleteAndSweep: a deleted answer can be neither read nor continued, nor
// can the answers after it (their conversation has a hole); the sweep deletes the answers
// whose time is over and leaves the others, with their item index.
func TestStoredResponsesDeleteAndSweep(t *testing.T) {
	var skew time.Duration // the gateway's clock runs ahead of the real one by skew
	h := newHarness(t, func(o *Options) {
		o.StoredResponses.TTL = time.Hour
		o.Now = func() time.Time { return time.Now().Add(skew) }
	})
	h.a.on("m", step{text: "one"})
	first, err := respond(t, h.g, "alice", `{"model":"a/m","input":"1"}`)
	if err != nil {
		t.Fatal(err)
	}
	second, err := respond(t, h.g, "alice", `{"model":"a/m","input":"2","previous_response_id":"`+first.ID+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.g.DeleteResponse(context.Background(), "alice", first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.StoredResponse(context.Background(), "alice", first.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Errorf("read after delete: %v", err)
	}
	if err := h.g.DeleteResponse(context.Background(), "alice", first.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Errorf("second delete: %v", err)
	}
	var ve *ValidationError
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","input":"3","previous_response_id":"`+second.ID+`"}`); !errors.As(err, &ve) ||
		!strings.Contains(ve.Message, "no longer stored") {
		t.Errorf("continuing after an earlier answer was deleted: %v", err)
	}

	// Half an hour later a third answer; an hour after the second, only the third is left.
	skew = 30 * time.Minute
	third, err := respond(t, h.g, "alice", `{"model":"a/m","input":"4"}`)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := h.g.SweepResponses(context.Background(), time.Now().Add(skew+31*time.Minute)); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v, want the second answer deleted", n, err)
	}
	for _, c := range []store.Collection{store.Responses, store.ResponseExpiry, store.ResponseItems} {
		entries, err := h.store.List(context.Background(), c, store.ListOptions{})
		if err != nil || len(entries) != 1 {
			t.Errorf("%s after the sweep: %d entries %v, want the third answer's only", c, len(entries), err)
		}
	}
	if _, err := h.g.StoredResponse(context.Background(), "alice", third.ID); err != nil {
		t.Errorf("the third answer after the sweep: %v", err)
	}
	// Past its time, an answer the sweep has not reached yet is not returned either.
	skew += 2 * time.Hour
	if _, err := h.g.StoredResponse(context.Background(), "alice", third.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Errorf("an expired answer: %v", err)
	}
}

// TestItemReferenceFromTheStore: an item_reference resolves from the stored answers when
// this process does not have the item (another replica answered, or it restarted), and a
// conversation continues there.
func TestItemReferenceFromTheStore(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Let me check."})
	first, err := respond(t, h.g, "alice", `{"model":"a/m","input":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	// A second gateway on the same store: none of the first's memory.
	g2, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "done"})
	ref := `{"model":"a/m","input":[{"role":"user","content":"hi"},{"type":"item_reference","id":"` + first.Output[0].ID + `"},{"role":"user","content":"and?"}]}`
	if _, err := respond(t, g2, "alice", ref); err != nil {
		t.Fatal(err)
	}
	if msgs := h.a.lastRequest().Messages; len(msgs) != 3 || msgs[1].Role != "assistant" || msgs[1].Content != "Let me check." {
		t.Fatalf("the model got %+v", msgs)
	}
	if _, err := respond(t, g2, "bob", ref); err == nil {
		t.Error("bob resolved alice's item")
	}
	// The conversation continues on the second gateway too.
	h.a.on("m", step{text: "again"})
	if _, err := respond(t, g2, "alice", `{"model":"a/m","input":"more","previous_response_id":"`+first.ID+`"}`); err != nil {
		t.Fatal(err)
	}
	if msgs := h.a.lastRequest().Messages; len(msgs) != 3 || msgs[1].Content != "Let me check." || msgs[2].Content != "more" {
		t.Fatalf("continued on another gateway: the model got %+v", msgs)
	}
	// A gateway that keeps no responses refuses previous_response_id, naming it.
	g3, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store, StoredResponses: StoredResponsesOptions{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	if _, err := respond(t, g3, "alice", `{"model":"a/m","input":"x","previous_response_id":"`+first.ID+`"}`); !errors.As(err, &ve) || ve.Field != "previous_response_id" {
		t.Errorf("previous_response_id with stored responses off: %v", err)
	}
}

// TestOpenAIConversationBounds: a conversation may not bring more than MaxHistoryBytes of
// items (a validation error on conversation), nor take more than 20 items or 16 metadata
// pairs at once; a conversation id must look like one.
func TestOpenAIConversationBounds(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResponses.MaxHistoryBytes = 4096 })
	ctx := context.Background()
	big := strings.Repeat("x", 3000)
	var ve *ValidationError
	if _, err := h.g.CreateOpenAIConversation(ctx, "alice", []ResponsesItem{userTextItem(big), userTextItem(big)}, nil); !errors.As(err, &ve) || ve.Field != "items" {
		t.Errorf("a conversation created over the bound: %v", err)
	}
	c, err := h.g.CreateOpenAIConversation(ctx, "alice", []ResponsesItem{userTextItem(big)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.AddOpenAIConversationItems(ctx, "alice", c.ID, []ResponsesItem{userTextItem(big)}); !errors.As(err, &ve) || ve.Field != "items" {
		t.Errorf("items added over the bound: %v", err)
	}
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","conversation":"`+c.ID+`","input":"`+big+`"}`); !errors.As(err, &ve) || ve.Field != "input" {
		t.Errorf("an answer that would take the conversation over the bound: %v", err)
	}
	many := make([]ResponsesItem, 21)
	for i := range many {
		many[i] = userTextItem("x")
	}
	if _, err := h.g.AddOpenAIConversationItems(ctx, "alice", c.ID, many); !errors.As(err, &ve) || ve.Field != "items" {
		t.Errorf("21 items: %v", err)
	}
	md := map[string]string{}
	for i := range 17 {
		md[strings.Repeat("k", i+1)] = "v"
	}
	if _, err := h.g.UpdateOpenAIConversation(ctx, "alice", c.ID, md); !errors.As(err, &ve) || ve.Field != "metadata" {
		t.Errorf("17 metadata pairs: %v", err)
	}
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","conversation":"resp_1","input":"hi"}`); !errors.As(err, &ve) || ve.Field != "conversation" {
		t.Errorf("a conversation id that is not one: %v", err)
	}
	if _, err := h.g.OpenAIConversationOf(ctx, "bob", c.ID); !errors.Is(err, ErrConversationNotFound) {
		t.Errorf("bob reading alice's conversation: %v", err)
	}
}

// TestConversationLeaseOfADeadProcess: a request that took a conversation's lease and
// never released it (its process died) holds the conversation only for the lease, not for
// its whole timeout.
func TestConversationLeaseOfADeadProcess(t *testing.T) {
	var skew time.Duration
	h := newHarness(t, func(o *Options) { o.Now = func() time.Time { return time.Now().Add(skew) } })
	c, err := h.g.CreateOpenAIConversation(context.Background(), "alice", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var dead ResponsesRequest
	json.Unmarshal([]byte(`{"model":"a/m","conversation":"`+c.ID+`","input":"hi"}`), &dead)
	ctx, die := context.WithCancel(context.Background())
	if err := h.g.ContinueResponse(ctx, "alice", &dead); err != nil {
		t.Fatal(err)
	}
	die() // the process is gone: no answer, no release, no renewal
	h.a.on("m", step{text: "ok"})
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","conversation":"`+c.ID+`","input":"again"}`); !errors.Is(err, ErrConversationLocked) {
		t.Fatalf("while the lease lasts: %v, want conversation_locked", err)
	}
	skew = DefaultConversationLease + time.Second
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","conversation":"`+c.ID+`","input":"again"}`); err != nil {
		t.Fatalf("after the lease: %v", err)
	}
}

// TestStoredResponsesNoExpiry: an answer stored with NoExpiry survives every sweep — also
// one by a later gateway with a TTL — and is still read back and continued; deleted, it
// goes, and its tombstone is swept once no process can hold a copy (recentTTL).
func TestStoredResponsesNoExpiry(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResponses.NoExpiry = true })
	h.a.on("m", step{text: "one"}, step{text: "two"})
	kept, err := respond(t, h.g, "alice", `{"model":"a/m","input":"1"}`)
	if err != nil {
		t.Fatal(err)
	}
	later, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store, StoredResponses: StoredResponsesOptions{TTL: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	century := time.Now().Add(100 * 365 * 24 * time.Hour)
	for _, g := range []*Gateway{h.g, later} {
		if n, err := g.SweepResponses(context.Background(), century); err != nil || n != 0 {
			t.Fatalf("sweep a century later: %d deleted, %v; want none", n, err)
		}
	}
	if _, err := later.StoredResponse(context.Background(), "alice", kept.ID); err != nil {
		t.Fatalf("read after the sweeps: %v", err)
	}
	if _, err := respond(t, later, "alice", `{"model":"a/m","input":"2","previous_response_id":"`+kept.ID+`"}`); err != nil {
		t.Fatalf("continue after the sweeps: %v", err)
	}
	if err := h.g.DeleteResponse(context.Background(), "alice", kept.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.StoredResponse(context.Background(), "alice", kept.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Errorf("read after delete: %v", err)
	}
	tombstones := func() int {
		entries, err := h.store.List(context.Background(), store.ResponseTombstones, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	if _, err := h.g.SweepResponses(context.Background(), time.Now()); err != nil || tombstones() != 1 {
		t.Fatalf("tombstones right after the delete: %d (%v), want 1", tombstones(), err)
	}
	if _, err := h.g.SweepResponses(context.Background(), time.Now().Add(recentTTL+time.Minute)); err != nil || tombstones() != 0 {
		t.Errorf("tombstones past recentTTL: %d (%v), want 0", tombstones(), err)
	}
}
