package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// review17d: background responses and guardrails. (1) StartBackgroundResponse promises to
// refuse at once what Complete refuses before calling a model (a *ValidationError), but
// admissible does not check the request's guardrail names: an unknown name is queued,
// stored, and fails later in the background. (2) A guardrail's block in the background run
// is stored with backgroundErrorCode's "server_error" (a *GuardrailError is not ErrInvalid),
// where the synchronous surfaces answer 400 guardrail_violation: a client retries a
// refusal as a server fault. Fix: check the guardrail names (guardrailsFor) in
// admissible, and map ErrGuardrailBlocked to "guardrail_violation" in backgroundErrorCode.
func TestReview17dBackgroundResponseGuardrails(t *testing.T) {
	f := newFake("a")
	f.on("m", step{text: "ok"})
	g, err := New(Options{Providers: fakeRegistry{"a": f}, Prices: fakePrices{}, Store: memstore.New(),
		Guardrails: []GuardrailConfig{{Name: "words", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, Words: []string{"project x"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	_, err = startBackground(t, g, "alice", `{"model":"a/m","input":"hi","background":true,"guardrails":["nope"]}`)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("an unknown guardrail name was queued: %v", err)
	}
	o, err := startBackground(t, g, "alice", `{"model":"a/m","input":"about project x","background":true,"guardrails":["words"]}`)
	if err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, g, "alice", o.ID, "failed")
	if done.Error == nil || done.Error.Code == "server_error" {
		t.Errorf("a guardrail block is stored as %+v", done.Error)
	}
}
