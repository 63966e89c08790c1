package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestBackgroundRefusedByKeyModelTPM: a background response for a model whose entry of the
// key's Models has used its tokens per minute (model_tpm_limit) is refused when it is
// created with the error Complete refuses the same request with (a *ModelRateError, 429),
// rather than queued to fail when it runs; another model of the key is still queued.
// (server's TestBackgroundRefusedByKeyModelLimits covers model_rpm_limit and
// model_max_budget.)
func TestBackgroundRefusedByKeyModelTPM(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m1", step{text: "hi", usage: providers.Usage{PromptTokens: 30, CompletionTokens: 30}})
	tpm := int64(50)
	b := NewBudget(BudgetLimits{Models: map[string]ModelLimits{"m1": {TokensPerMinute: &tpm}}})
	scope := Scope{Owner: "alice", Budget: b, KeyID: "k"}
	if _, err := h.g.Complete(context.Background(), scope, userReq("hi", "a/m1")); err != nil {
		t.Fatal(err) // 60 tokens: m1's minute is used up
	}
	_, fgErr := h.g.Complete(context.Background(), scope, userReq("hi", "a/m1"))
	var fg *ModelRateError
	if !errors.As(fgErr, &fg) {
		t.Fatalf("the foreground request past m1's tokens per minute: %v, want a *ModelRateError", fgErr)
	}
	o, err := startBackgroundScoped(t, h.g, scope, "alice", `{"model":"a/m1","input":"x","background":true}`)
	var bg *ModelRateError
	if !errors.As(err, &bg) || err.Error() != fgErr.Error() {
		if err == nil {
			later := waitEnded(t, h.g, "alice", o.ID)
			t.Fatalf("created %s (status %s), later read %s %+v; want the foreground's refusal at create time", o.ID, o.Status, later.Status, later.Error)
		}
		t.Fatalf("background: %v; want the foreground's %v", err, fgErr)
	}
	if o, err := startBackgroundScoped(t, h.g, scope, "alice", `{"model":"a/m2","input":"x","background":true}`); err != nil || o.Status != "queued" {
		t.Fatalf("a model without limits of its own: %v %+v; want queued", err, o)
	} else {
		waitEnded(t, h.g, "alice", o.ID)
	}
}
