package completions

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestRequestFallbacksBeforeContentPolicyFallbacks: a request naming fallbacks of its own
// (a list of models: LiteLLM's client-side format) goes to those when a content filter
// refuses the model asked, in place of the group's content_policy_fallbacks, as LiteLLM's
// router (async_function_with_fallbacks_common_utils) runs a request's list before it
// looks at the error's kind; the group's other members are still left out, and a refusal
// by one of the request's fallbacks goes on to the next (run_async_fallback), the last
// one's standing. Without fallbacks of its own the group's content policy fallbacks
// answer, as before.
func TestRequestFallbacksBeforeContentPolicyFallbacks(t *testing.T) {
	g, up, _ := faultGatewayWith(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, ContentPolicyFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}}
	})
	ask := func(extra string) ([]string, error) {
		t.Helper()
		req := chatRequest(t, `{"model":"G","max_retries":0,`+extra+`"messages":[{"role":"user","content":"hi"}]}`)
		resp, err := g.Complete(context.Background(), Scope{Owner: "k"}, req)
		var cf *ContentFilterError
		var af *AllFailedError
		switch {
		case err == nil:
			return attemptModels(resp, nil), nil
		case errors.As(err, &cf):
			return attemptModels(&Response{Attempts: cf.Attempts}, nil), err
		case errors.As(err, &af):
			return attemptModels(&Response{Attempts: af.Attempts}, nil), err
		}
		return nil, err
	}
	up.on("a", filtered)
	up.on("e", filtered)
	for _, c := range []struct {
		extra   string
		want    []string
		refused bool
	}{
		{`"fallbacks":["up/e","up/f"],`, []string{"up/a", "up/e", "up/f"}, false},
		{`"fallback_models":["up/f"],`, []string{"up/a", "up/f"}, false},
		{`"fallbacks":["up/e"],`, []string{"up/a", "up/e"}, true},
		{``, []string{"up/a", "up/b"}, false},
	} {
		got, err := ask(c.extra)
		if !slices.Equal(got, c.want) || (err != nil) != c.refused {
			t.Errorf("%s: attempts %v, err %v; want %v (refused %v)", c.extra, got, err, c.want, c.refused)
		}
	}
	if n := up.callCount("a2") + up.callCount("c"); n != 0 {
		t.Errorf("the group's other member or plain fallback called %d times after a refusal", n)
	}
}
