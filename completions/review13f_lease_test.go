package completions

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestReview13fAbandonedRequestLocksConversationForever: a library user follows
// ContinueResponse's documented sequence (as this package's own respond helper does, with
// context.Background) and the request fails after it (ToChatRequest, Complete) — no
// StoreResponse, and nothing documents that ReleaseResponse must be called. The renewal
// goroutine never stops (its ctx never ends) and renews the lease for ever: the
// conversation is locked for good, not "only for the lease".
// (Mended after review: ContinueResponse's doc now says the lease lasts until ctx ends or
// ReleaseResponse — to be deferred once it succeeded, as the server and respond do — so
// that a long request keeps it whatever its timeout; the test now abandons the request as
// a caller does when its request ends: its context ends, and the lease runs out.)
func TestReview13fAbandonedRequestLocksConversationForever(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResponses.ConversationLease = 90 * time.Millisecond })
	c, err := h.g.CreateOpenAIConversation(context.Background(), "alice", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var failed ResponsesRequest
	json.Unmarshal([]byte(`{"model":"a/m","conversation":"`+c.ID+`","input":"hi"}`), &failed)
	ctx, end := context.WithCancel(context.Background())
	if err := h.g.ContinueResponse(ctx, "alice", &failed); err != nil {
		t.Fatal(err)
	}
	// The request fails here (say Complete returns an error); the caller drops failed and
	// its request ends.
	end()
	time.Sleep(10 * 90 * time.Millisecond) // ten leases
	h.a.on("m", step{text: "ok"})
	if _, err := respond(t, h.g, "alice", `{"model":"a/m","conversation":"`+c.ID+`","input":"again"}`); errors.Is(err, ErrConversationLocked) {
		t.Fatalf("ten leases after a request was abandoned its conversation is still locked (the renewal goroutine runs for ever): %v", err)
	}
}
