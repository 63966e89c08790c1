package completions

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// TestReview13aDeletedAnswerContinuedOnAnotherReplica: DELETE of a middle answer on one
// replica must stop the conversation after it "on every replica" (README: the answers after
// it can then no longer be continued). A second replica that read the chain before keeps
// the deleted answer in keptResponses and keeps feeding its content to the model.
func TestReview13aDeletedAnswerContinuedOnAnotherReplica(t *testing.T) {
	h := newHarness(t, nil)
	g2, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "one"})
	r1, err := respond(t, h.g, "alice", `{"model":"a/m","input":"1"}`)
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "SECRET-two"})
	r2, err := respond(t, g2, "alice", `{"model":"a/m","input":"2","previous_response_id":"`+r1.ID+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "three"})
	r3, err := respond(t, g2, "alice", `{"model":"a/m","input":"3","previous_response_id":"`+r2.ID+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	// Replica 1 deletes the middle answer.
	if err := h.g.DeleteResponse(context.Background(), "alice", r2.ID); err != nil {
		t.Fatal(err)
	}
	// Replica 2: continuing r3 must fail now, as it does on replica 1.
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","input":"4","previous_response_id":"`+r3.ID+`"}`); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("replica 1 continuing past the deleted answer: %v", err)
	}
	_, err = respond(t, g2, "alice", `{"model":"a/m","input":"4","previous_response_id":"`+r3.ID+`"}`)
	if !errors.Is(err, ErrResponseNotFound) {
		var sent []string
		for _, m := range h.a.lastRequest().Messages {
			sent = append(sent, m.Role+":"+m.Content)
		}
		t.Fatalf("replica 2 continued past the deleted answer %s (err %v); the model got %q", r2.ID, err, sent)
	}
}

// TestReview13aDeletedAnswerItemsStillResolve: after DELETE /v1/responses/{id}, an
// item_reference to one of its output items still resolves (from the per-process
// `answered` memory that DeleteResponse leaves), so a deleted answer's content is still
// served for an hour.
func TestReview13aDeletedAnswerItemsStillResolve(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "SECRET"})
	r1, err := respond(t, h.g, "alice", `{"model":"a/m","input":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	// The server keeps the items too (handleResponses' keep).
	h.g.KeepResponseItems("alice", r1)
	if err := h.g.DeleteResponse(context.Background(), "alice", r1.ID); err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "ok"})
	_, err = respond(t, h.g, "alice", `{"model":"a/m","input":[{"type":"item_reference","id":"`+r1.Output[0].ID+`"},{"role":"user","content":"go on"}]}`)
	if err == nil {
		t.Fatalf("an item of the deleted answer %s still resolved; the model got %+v", r1.ID, h.a.lastRequest().Messages)
	}
}

// TestReview13aReusedCallIDs: an upstream that reuses call ids across answers (Kimi-style
// "functions.get_weather:0") gives two stored answers the same item id "fc_<call id>". The
// ResponseItems index keeps only the later one: on a replica without memory the earlier
// answer's item resolves to the later answer's call, and once the later answer is deleted
// the earlier (still stored) answer's item does not resolve at all.
func TestReview13aReusedCallIDs(t *testing.T) {
	h := newHarness(t, nil)
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]`
	h.a.on("m", step{call: &providers.ToolCall{ID: "functions.get_weather:0", Name: "get_weather", Arguments: `{"city":"Paris"}`}})
	a, err := respond(t, h.g, "alice", `{"model":"a/m","input":"Weather in Paris?",`+tools+`}`)
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{call: &providers.ToolCall{ID: "functions.get_weather:0", Name: "get_weather", Arguments: `{"city":"London"}`}})
	b, err := respond(t, h.g, "alice", `{"model":"a/m","input":"Weather in London?",`+tools+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if a.Output[0].ID == b.Output[0].ID {
		t.Errorf("two stored answers share the output item id %q (OpenAI's item ids are unique)", a.Output[0].ID)
	}
	g2, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	ref := `{"model":"a/m",` + tools + `,"input":[{"role":"user","content":"Weather in Paris?"},{"type":"item_reference","id":"` + a.Output[0].ID + `"},{"type":"function_call_output","call_id":"functions.get_weather:0","output":"sunny"}]}`
	h.a.on("m", step{text: "ok"})
	if _, err := respond(t, g2, "alice", ref); err != nil {
		t.Fatal(err)
	}
	if msgs := h.a.lastRequest().Messages; len(msgs) < 2 || len(msgs[1].ToolCalls) != 1 || !strings.Contains(msgs[1].ToolCalls[0].Arguments, "Paris") {
		t.Errorf("answer A's call resolved to %+v, want A's Paris call", msgs[1].ToolCalls)
	}
	if err := h.g.DeleteResponse(context.Background(), "alice", b.ID); err != nil {
		t.Fatal(err)
	}
	g3, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := respond(t, g3, "alice", ref); err != nil {
		t.Errorf("answer A (still stored) after B was deleted: its item no longer resolves: %v", err)
	}
}

// TestReview13aStoreOffNeverSweeps: after `serve --responses-store=false` (README: "keeps
// none"), the answers stored while it was on are neither readable nor ever swept: wiring
// starts no sweep and SweepResponses returns 0 when StoresResponses is false, so they stay
// in the database past their 30 days, forever.
func TestReview13aStoreOffNeverSweeps(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "kept"})
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","input":"hi"}`); err != nil {
		t.Fatal(err)
	}
	off, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store, StoredResponses: StoredResponsesOptions{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := off.SweepResponses(context.Background(), time.Now().Add(DefaultResponsesTTL+time.Hour)); err != nil {
		t.Fatal(err)
	}
	if left, _ := h.store.List(context.Background(), store.Responses, store.ListOptions{}); len(left) != 0 {
		t.Errorf("%d stored answers left past their expiry with --responses-store=false", len(left))
	}
}
