package completions

import (
	"context"
	"errors"
	"testing"
)

// hangingGuardrail never answers until its context ends.
type hangingGuardrail struct{ cut chan struct{} }

func (h *hangingGuardrail) Check(ctx context.Context, _ GuardrailInput) (GuardrailVerdict, error) {
	<-ctx.Done()
	close(h.cut)
	return GuardrailVerdict{}, ctx.Err()
}

// TestGuardrailTimeout: a guardrail that does not answer within its timeout fails to run —
// on_error decides (allow: the request goes on; block: a *GuardrailError) — instead of
// holding the request for as long as its check hangs; a negative timeout is refused.
func TestGuardrailTimeout(t *testing.T) {
	f := newFake("fake")
	open, closed := &hangingGuardrail{cut: make(chan struct{})}, &hangingGuardrail{cut: make(chan struct{})}
	g, _, _ := guardedGateway(t, f, nil,
		GuardrailConfig{Name: "open", Kind: GuardrailCustom, Mode: GuardrailPreCall, OnError: GuardrailAllow, Timeout: 0.05, Custom: open},
		GuardrailConfig{Name: "closed", Kind: GuardrailCustom, Mode: GuardrailPreCall, Timeout: 0.05, Custom: closed})
	if _, err := g.Complete(context.Background(), Scope{}, userRequest("hello", "open")); err != nil || f.callCount("m") != 1 {
		t.Fatalf("on_error allow: %v (%d calls)", err, f.callCount("m"))
	}
	<-open.cut
	_, err := g.Complete(context.Background(), Scope{}, userRequest("hello", "closed"))
	var ge *GuardrailError
	if !errors.As(err, &ge) || ge.Guardrail != "closed" || !errors.Is(err, context.DeadlineExceeded) || f.callCount("m") != 1 {
		t.Fatalf("on_error block: %v (%d calls)", err, f.callCount("m"))
	}
	_, err = New(Options{Providers: fakeRegistry{"fake": f}, Guardrails: []GuardrailConfig{
		{Name: "x", Kind: GuardrailCustom, Mode: GuardrailPreCall, Timeout: -1, Custom: open}}})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "guardrails[0].timeout" {
		t.Fatalf("negative timeout: %v", err)
	}
}
