package completions

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// startBackground starts the Responses request body for owner in the background, as the
// server does.
func startBackground(t *testing.T, g *Gateway, owner, body string) (*ResponseObject, error) {
	t.Helper()
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := g.ContinueResponse(ctx, owner, &r); err != nil {
		return nil, err
	}
	c, err := r.ToChatRequest()
	if err != nil {
		return nil, err
	}
	req, err := c.ToRequest()
	if err != nil {
		return nil, err
	}
	return g.StartBackgroundResponse(ctx, Scope{Owner: owner}, owner, &r, req)
}

// waitStatus polls the stored response id of owner until its status is want (or fails the
// test after 5 s).
func waitStatus(t *testing.T, g *Gateway, owner, id, want string) *ResponseObject {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		o, err := g.StoredResponse(context.Background(), owner, id)
		if err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
		if o.Status == want {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("response %s is %s, want %s", id, o.Status, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFor waits until cond holds (or fails the test after 5 s).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *fakeProvider) cancelled() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.canceled
}

// TestBackgroundResponseCompletes: background: true answers at once with a queued
// response (background true, stored), which reads in progress while the upstream works and
// then completed with the answer and its usage; the ledger saw the call as for a
// synchronous request; another owner cannot read it.
func TestBackgroundResponseCompletes(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "A deep answer", delay: 300 * time.Millisecond, usage: providers.Usage{PromptTokens: 5, CompletionTokens: 7}})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Think hard.","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "queued" && o.Status != "in_progress" || !o.Background || !o.Store || len(o.Output) != 0 {
		t.Fatalf("start: %+v, want queued, background, stored, no output", o)
	}
	got, err := h.g.StoredResponse(context.Background(), "alice", o.ID)
	if err != nil || got.Status != "queued" && got.Status != "in_progress" {
		t.Fatalf("read while running: %+v %v", got, err)
	}
	if _, err := h.g.StoredResponse(context.Background(), "bob", o.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("another owner read it: %v", err)
	}
	done := waitStatus(t, h.g, "alice", o.ID, "completed")
	if done.ID != o.ID || !done.Background || len(done.Output) != 1 || done.Output[0].Content[0].Text != "A deep answer" ||
		done.Usage == nil || done.Usage.TotalTokens != 12 {
		t.Fatalf("completed: %+v", done)
	}
	if n := len(h.ledger.all()); n != 1 {
		t.Fatalf("ledger has %d entries, want 1", n)
	}
	// Cancelling a finished background response answers it as it is.
	c, err := h.g.CancelResponse(context.Background(), "alice", o.ID)
	if err != nil || c.Status != "completed" {
		t.Fatalf("cancel after the end: %+v %v", c, err)
	}
	// It continues a conversation like any stored answer.
	h.a.on("m", step{text: "Next."})
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","previous_response_id":"`+o.ID+`","input":"More?"}`); err != nil {
		t.Fatal(err)
	}
	if msgs := h.a.lastRequest().Messages; len(msgs) != 3 || msgs[1].Content != "A deep answer" {
		t.Fatalf("continued with %+v", msgs)
	}
}

// TestBackgroundResponseRefusals: background needs a stored response (store: false is a
// validation error naming background) and cannot be cancelled when it is synchronous
// (background with stream is TestBackgroundStreamRecordsAndResumes').
func TestBackgroundResponseRefusals(t *testing.T) {
	h := newHarness(t, nil)
	for body, field := range map[string]string{
		`{"model":"a/m","input":"hi","background":true,"store":false}`: "background",
	} {
		_, err := startBackground(t, h.g, "alice", body)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Fatalf("%s: %v, want a validation error on %s", body, err, field)
		}
	}
	sync, err := respond(t, h.g, "alice", `{"model":"a/m","input":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.CancelResponse(context.Background(), "alice", sync.ID); !errors.Is(err, ErrSynchronousResponse) {
		t.Fatalf("cancel of a synchronous response: %v", err)
	}
	if _, err := h.g.CancelResponse(context.Background(), "bob", sync.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("cancel of another owner's response: %v", err)
	}
}

// TestBackgroundResponseCancel: a cancel while the upstream works ends the run (the
// upstream call's context is cancelled) and the response reads cancelled, again on a
// second cancel; a delete of a running one cancels it too.
func TestBackgroundResponseCancel(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{hang: true})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Think forever.","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upstream call", func() bool { return h.a.callCount("m") == 1 })
	c, err := h.g.CancelResponse(context.Background(), "alice", o.ID)
	if err != nil || c.Status != "cancelled" || !c.Background {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	waitFor(t, "the upstream call's cancellation", func() bool { return h.a.cancelled() == 1 })
	time.Sleep(50 * time.Millisecond) // the run's end must not overwrite the cancel
	if got := waitStatus(t, h.g, "alice", o.ID, "cancelled"); len(got.Output) != 0 {
		t.Fatalf("cancelled: %+v", got)
	}
	if c, err := h.g.CancelResponse(context.Background(), "alice", o.ID); err != nil || c.Status != "cancelled" {
		t.Fatalf("second cancel: %+v %v", c, err)
	}

	o2, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Again.","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second upstream call", func() bool { return h.a.callCount("m") == 2 })
	if err := h.g.DeleteResponse(context.Background(), "alice", o2.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted run's cancellation", func() bool { return h.a.cancelled() == 2 })
	time.Sleep(50 * time.Millisecond)
	if _, err := h.g.StoredResponse(context.Background(), "alice", o2.ID); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("deleted running response reads %v", err)
	}
}

// TestBackgroundResponseFails: an upstream failure ends the response failed with an error
// object (code and message).
func TestBackgroundResponseFails(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.DefaultMaxRetries = -1 })
	h.a.on("m", step{err: upstreamErr(providers.KindBadRequest, 400, 0)})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"hi","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	got := waitStatus(t, h.g, "alice", o.ID, "failed")
	if got.Error == nil || got.Error.Code == "" || got.Error.Message == "" {
		t.Fatalf("failed without an error: %+v", got)
	}
}

// TestBackgroundResponseReplicas: a second gateway on the same store sees the run's
// status, and its cancel stops the run on the first (whose upstream call is cancelled
// within a few heartbeats).
func TestBackgroundResponseReplicas(t *testing.T) {
	fast := func(o *Options) { o.StoredResponses.BackgroundStaleAfter = 400 * time.Millisecond }
	h := newHarness(t, fast)
	h.a.on("m", step{hang: true})
	other, err := New(Options{Providers: fakeRegistry{"a": newFake("a")}, Store: h.store, StoredResponses: StoredResponsesOptions{BackgroundStaleAfter: 400 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Think.","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upstream call", func() bool { return h.a.callCount("m") == 1 })
	time.Sleep(600 * time.Millisecond) // past StaleAfter: the heartbeat keeps it alive
	waitStatus(t, other, "alice", o.ID, "in_progress")
	c, err := other.CancelResponse(context.Background(), "alice", o.ID)
	if err != nil || c.Status != "cancelled" {
		t.Fatalf("cancel on the other replica: %+v %v", c, err)
	}
	waitFor(t, "the first replica's upstream call's cancellation", func() bool { return h.a.cancelled() == 1 })
	waitStatus(t, h.g, "alice", o.ID, "cancelled")
}

// TestBackgroundResponseStale: a run whose process died (its record in progress, its
// heartbeat older than BackgroundStaleAfter) reads failed with an error saying so, and
// stays failed.
func TestBackgroundResponseStale(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResponses.BackgroundStaleAfter = time.Second })
	ctx := context.Background()
	o := &ResponseObject{ID: "resp_dead", Object: "response", Status: "in_progress", Background: true, Store: true, Output: []ResponseOutputItem{}}
	rec := storedResponse{Owner: "alice", Response: o, Expires: time.Now().Add(time.Hour),
		Run: &backgroundRun{ID: "run_gone", Heartbeat: time.Now().Add(-time.Minute)}}
	b, _ := json.Marshal(rec)
	if err := h.store.Put(ctx, store.Responses, o.ID, b); err != nil {
		t.Fatal(err)
	}
	got, err := h.g.StoredResponse(ctx, "alice", o.ID)
	if err != nil || got.Status != "failed" || got.Error == nil || got.Error.Code != "server_error" {
		t.Fatalf("stale run reads %+v %v, want failed with a server_error", got, err)
	}
	again, err := h.g.CancelResponse(ctx, "alice", o.ID)
	if err != nil || again.Status != "failed" {
		t.Fatalf("cancel of the dead run: %+v %v", again, err)
	}
}

// TestBackgroundResponseClose: Gateway.Close cuts the runs under way: the upstream call
// is cancelled and the response ends failed rather than in progress.
func TestBackgroundResponseClose(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{hang: true})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Think.","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upstream call", func() bool { return h.a.callCount("m") == 1 })
	if err := h.g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h.a.cancelled() != 1 {
		t.Fatalf("the upstream call was not cancelled by Close")
	}
	got := waitStatus(t, h.g, "alice", o.ID, "failed")
	if got.Error == nil {
		t.Fatalf("failed without an error: %+v", got)
	}
	if _, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Late.","background":true}`); err == nil {
		t.Fatal("a background response started after Close")
	}
}

// TestBackgroundResponseTakesItsTime: a background run may last
// StoredResponsesOptions.BackgroundTimeout — one call as long — where a synchronous request
// is cut at RequestTimeout (background mode is for the long runs of reasoning models);
// a request's own timeout still holds.
func TestBackgroundResponseTakesItsTime(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.RequestTimeout, o.AttemptTimeout, o.DefaultMaxRetries = 100*time.Millisecond, 100*time.Millisecond, -1
		o.StoredResponses.BackgroundTimeout = 5 * time.Second
	})
	h.a.on("m", step{text: "Slow but sure", delay: 400 * time.Millisecond})
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","input":"Think."}`); err == nil {
		t.Fatal("the synchronous request outlived RequestTimeout")
	}
	h.a.on("m", step{text: "Slow but sure", delay: 400 * time.Millisecond})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Think.","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := waitStatus(t, h.g, "alice", o.ID, "completed"); got.Output[0].Content[0].Text != "Slow but sure" {
		t.Fatalf("completed: %+v", got)
	}
	h.a.on("m", step{text: "Slow but sure", delay: 400 * time.Millisecond})
	o, err = startBackground(t, h.g, "alice", `{"model":"a/m","input":"Think.","background":true,"timeout":0.1}`)
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h.g, "alice", o.ID, "failed")
}
