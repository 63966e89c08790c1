package completions

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// startBackgroundScoped is startBackground under a given scope (a key's budget).
func startBackgroundScoped(t *testing.T, g *Gateway, scope Scope, owner, body string) (*ResponseObject, error) {
	t.Helper()
	return startBackgroundCtx(t, context.Background(), g, scope, owner, body)
}

// startBackgroundCtx is startBackgroundScoped under the caller's context ctx.
func startBackgroundCtx(t *testing.T, ctx context.Context, g *Gateway, scope Scope, owner, body string) (*ResponseObject, error) {
	t.Helper()
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		return nil, err
	}
	req, err := c.ToRequest()
	if err != nil {
		return nil, err
	}
	return g.StartBackgroundResponse(ctx, scope, owner, &r, req)
}

// TestReview17aBackgroundRefusedAtCreate: what is WRONG — StartBackgroundResponse does
// none of the checks Complete does before calling upstream (the key's budget: max calls
// used up, a model the key may not call; a model no provider serves). It stores a queued
// response and answers 200; the client learns only by polling that it "failed" (an
// exhausted budget reads failed with code rate_limit_exceeded, a forbidden model
// server_error). OpenAI and LiteLLM refuse such a request at create time (429 / 401 / 403 /
// 404), and a client with a spent key should not get a response id for work that can never
// run. Fix: run Complete's admission (model resolution, Budget.allows/reserve) before
// storing the queued record, and return its error.
func TestReview17aBackgroundRefusedAtCreate(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one"})
	spent := NewBudget(BudgetLimits{MaxCalls: 1})
	if _, err := h.g.Complete(context.Background(), Scope{Owner: "alice", Budget: spent}, userReq("hi", "a/m")); err != nil {
		t.Fatal(err)
	}
	forbidden := NewBudget(BudgetLimits{AllowedModels: []string{"b/other"}})
	for name, c := range map[string]struct {
		scope Scope
		body  string
	}{
		"max calls used up": {Scope{Owner: "alice", Budget: spent}, `{"model":"a/m","input":"x","background":true}`},
		"model not allowed": {Scope{Owner: "alice", Budget: forbidden}, `{"model":"a/m","input":"x","background":true}`},
		"unknown provider":  {Scope{Owner: "alice"}, `{"model":"nosuch/m","input":"x","background":true}`},
	} {
		o, err := startBackgroundScoped(t, h.g, c.scope, "alice", c.body)
		if err == nil {
			later := waitEnded(t, h.g, "alice", o.ID)
			t.Errorf("%s: created %s (status %s), later read %s %+v; want an error at create time", name, o.ID, o.Status, later.Status, later.Error)
		}
	}
}

// waitEnded polls until the response is no longer queued or in_progress.
func waitEnded(t *testing.T, g *Gateway, owner, id string) *ResponseObject {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		o, err := g.StoredResponse(context.Background(), owner, id)
		if err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
		if !unfinished(o.Status) || time.Now().After(deadline) {
			return o
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pausingDriver lets a test stop a non-transactional Get of store.Responses after it read.
type pausingDriver struct {
	store.Driver
	mu    sync.Mutex
	armed bool
	read  chan struct{} // closed after the armed Get read
	go_   chan struct{} // the armed Get returns once closed
}

func (d *pausingDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	b, err := d.Driver.Get(ctx, c, key)
	d.mu.Lock()
	armed := d.armed && c == store.Responses
	if armed {
		d.armed = false
	}
	d.mu.Unlock()
	if armed {
		close(d.read)
		<-d.go_
	}
	return b, err
}

// TestReview17aDeleteRacingTheEndKeepsItems: what is WRONG — DeleteResponse reads the
// record outside its transaction and deletes with what it read. When a background run
// writes its answer between that read (in_progress, no output) and the delete, the delete
// (a) leaves the answer's store.ResponseItems index entries behind, and (b) forget() drops
// none of the output items the run just put in this process's item_reference cache
// (KeepResponseItems): the deleted answer's items still resolve as item_reference input —
// a deleted response's content reappears in later requests. Fix: in DeleteResponse re-read
// the record inside the Update and delete/forget with that one (and have runBackground not
// KeepResponseItems, or re-check, once the record is gone).
func TestReview17aDeleteRacingTheEndKeepsItems(t *testing.T) {
	drv := &pausingDriver{Driver: memstore.NewDriver(), read: make(chan struct{}), go_: make(chan struct{})}
	st := store.New(drv)
	h := newHarness(t, func(o *Options) { o.Store = st })
	h.a.on("m", step{text: "Secret answer", delay: 200 * time.Millisecond, usage: providers.Usage{PromptTokens: 1, CompletionTokens: 1}})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"x","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h.g, "alice", o.ID, "in_progress")
	drv.mu.Lock()
	drv.armed = true
	drv.mu.Unlock()
	delErr := make(chan error, 1)
	go func() { delErr <- h.g.DeleteResponse(context.Background(), "alice", o.ID) }()
	<-drv.read // DeleteResponse has read the record in progress
	var rec storedResponse
	waitFor(t, "the run's answer", func() bool {
		b, err := drv.Driver.Get(context.Background(), store.Responses, o.ID)
		return err == nil && json.Unmarshal(b, &rec) == nil && rec.Response.Status == "completed"
	})
	time.Sleep(50 * time.Millisecond) // the run keeps its items (KeepResponseItems) after the write
	close(drv.go_)
	if err := <-delErr; err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.StoredResponse(context.Background(), "alice", o.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("deleted response still reads: %v", err)
	}
	itemID := rec.Response.Output[0].ID
	if _, err := drv.Driver.Get(context.Background(), store.ResponseItems, itemID); err == nil {
		t.Errorf("the deleted response's item %s is still indexed in store.ResponseItems", itemID)
	}
	var r ResponsesRequest
	json.Unmarshal([]byte(`{"model":"a/m","input":[{"type":"item_reference","id":"`+itemID+`"}]}`), &r)
	if err := h.g.ResolveItemReferences(context.Background(), "alice", &r); err == nil {
		t.Errorf("an item of the deleted background response %s still resolves as item_reference: %+v", o.ID, r.Input.Items[0])
	}
}

// TestReview17aContinueFailedBackground: what is WRONG (inconsistent with this gateway's own
// rule; OpenAI's exact answer not verified here) — a failed synchronous answer is never kept
// (StoreResponse skips status failed), so previous_response_id naming it is "not found";
// a failed background response is kept with its input and no output, and responseChain
// refuses only queued/in_progress ones, so continuing it is accepted and sends the upstream
// two user turns in a row (the failed turn's input, then the new one) as if it had been
// answered. Fix: in responseChain refuse (400 on previous_response_id) a response whose
// status is failed (and decide the same for cancelled).
func TestReview17aContinueFailedBackground(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: errors.New("boom")})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"first","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	if f := waitEnded(t, h.g, "alice", o.ID); f.Status != "failed" {
		t.Fatalf("status %s, want failed", f.Status)
	}
	h.a.on("m", step{text: "ok"})
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","previous_response_id":"`+o.ID+`","input":"second"}`); err == nil {
		t.Errorf("continued the failed background response %s; upstream got %+v", o.ID, h.a.lastRequest().Messages)
	}
}
