package completions

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestBodyFallbacksInRouterFormat: LiteLLM's body fallbacks written in its router's
// format, [{"a/m": ["b/f"]}], are that request's router fallbacks (LiteLLM's
// _check_non_standard_fallback_format calls them standard and get_fallback_model_group
// takes the entry of the model asked: by its name, else without a known provider, else
// "*"): they replace the scope's, none when no entry is for the model asked; unlike a
// list of names they do not go before a group's context window fallbacks, LiteLLM
// looking at the error's kind first for that format. Mixed lists and per-fallback
// objects are refused naming the item.
func TestBodyFallbacksInRouterFormat(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"a/long"}, ContextWindowFallbacks: []string{"b/cw"}}}
	})
	h.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	h.a.on("long", step{err: upstreamErr(providers.KindContextLength, 400, 0)})
	scope := Scope{Fallbacks: map[string][]string{"*": {"b/scope"}}}
	for _, c := range []struct {
		model, fallbacks string
		want             []string
	}{
		{"a/m", `[{"a/m":["b/exact"]},{"m":["b/bare"]},{"*":["b/star"]}]`, []string{"a/m", "b/exact"}},
		{"a/m", `[{"m":["b/bare"]},{"*":["b/star"]}]`, []string{"a/m", "b/bare"}},
		{"a/m", `[{"other":["b/x"]},{"*":["b/star","a/m"]}]`, []string{"a/m", "b/star"}},
		{"a/m", `[{"other":["b/x"]}]`, []string{"a/m"}}, // none: not the scope's either
		{"G", `[{"G":["b/own"]}]`, []string{"a/long", "b/cw"}},
	} {
		r := chatRequest(t, `{"model":"`+c.model+`","max_retries":0,"fallbacks":`+c.fallbacks+`,"messages":[{"role":"user","content":"hi"}]}`)
		resp, err := h.g.Complete(context.Background(), scope, r)
		if got := attemptModels(resp, err); !slices.Equal(got, c.want) || (err == nil) != (len(c.want) > 1) {
			t.Errorf("%s with fallbacks %s: %v %v; want %v", c.model, c.fallbacks, got, err, c.want)
		}
	}
	if n := h.b.callCount("scope") + h.b.callCount("x") + h.b.callCount("own"); n != 0 {
		t.Errorf("the scope's, another model's or the request's (before the group's context window fallbacks) called %d times", n)
	}
	for body, field := range map[string]string{
		`["b/m",{"a/m":["b/f"]}]`:                                      "fallbacks[1]",
		`[{"a/m":["b/f"]},"b/m"]`:                                      "fallbacks[1]",
		`[{"model":"b/m","messages":[{"role":"user","content":"y"}]}]`: "fallbacks[0]",
		`[{"a/m":["b/f",""]}]`:                                         `fallbacks[0]["a/m"]`,
		`[{"":["b/f"]}]`:                                               "fallbacks[0]",
	} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"}],"fallbacks":`+body+`}`), &o); err != nil {
			t.Fatal(err)
		}
		_, err := o.ToRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("fallbacks %s: %v, want a validation error naming %s", body, err, field)
		}
	}
}
