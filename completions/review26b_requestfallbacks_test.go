package completions

import (
	"context"
	"testing"
)

// TestReview26bKindFallbacksKeepRequestFallbackAlsoPlain: a model the request names in its
// own fallback_models stays after the group's context window fallbacks even when the
// group's plain Fallbacks name it too (the two were merged into one target, marked plain,
// and switching to the kind's list dropped it with the plain ones).
func TestReview26bKindFallbacksKeepRequestFallbackAlsoPlain(t *testing.T) {
	g, up, _ := faultGatewayWith(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"up/a"}, ContextWindowFallbacks: []string{"up/b"}, Fallbacks: []string{"up/e"}}}
	})
	up.on("a", tooLong)
	up.on("b", tooLong)
	req := chatRequest(t, `{"model":"G","max_retries":0,"fallback_models":["up/e"],"messages":[{"role":"user","content":"a long prompt"}]}`)
	resp, err := g.Complete(context.Background(), Scope{Owner: "k"}, req)
	if err != nil {
		t.Fatalf("%v: want up/e, the request's own fallback, after up/b", err)
	}
	if resp.Model != "e" {
		t.Errorf("answered by %s/%s, want up/e", resp.Provider, resp.Model)
	}
}
