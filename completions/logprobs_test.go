package completions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// A stream that asked for log probabilities is not continued by a later model when it
// breaks mid-answer (the continuation's tokens would be another model's): it fails as it
// broke, and the fallback that could continue it is not called. Without them it is
// continued (TestContinuationReport).
func TestLogprobsStreamIsNotContinued(t *testing.T) {
	g, up, _ := faultGateway(t)
	up.on("primary", cutAfter(primaryAnswer, 2))
	up.on("backup", continueFrom(primaryAnswer))
	req := userReq("What is the capital of France?", "up/primary")
	req.FallbackModels = []string{"pf/backup"}
	req.Logprobs = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := g.Stream(ctx, Scope{Owner: "k"}, req)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := drain(t, st)
	if !errors.Is(err, ErrStreamFailed) {
		t.Fatalf("err = %v after %q, want the stream's failure", err, join(frags))
	}
	if join(frags) != "Paris is" || up.callCount("backup") != 0 {
		t.Fatalf("client saw %q; the fallback was called %d times", join(frags), up.callCount("backup"))
	}
}

// A library caller's top_logprobs is checked as the OpenAI surface checks it.
func TestLogprobsRequestBounds(t *testing.T) {
	g, _, _ := faultGateway(t)
	for _, tc := range []struct {
		on  bool
		top int
	}{{true, providers.MaxTopLogprobs + 1}, {true, -1}, {false, 3}} {
		req := userReq("x", "up/primary")
		req.Logprobs, req.TopLogprobs = tc.on, tc.top
		_, err := g.Complete(context.Background(), Scope{Owner: "k"}, req)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "top_logprobs" {
			t.Errorf("logprobs %v top_logprobs %d: %v, want a validation error naming top_logprobs", tc.on, tc.top, err)
		}
	}
}
