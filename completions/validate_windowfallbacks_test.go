package completions

import (
	"context"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestWindowMarksLeaveSeveralModels: the marks that make a prompt too long end a request
// without fallbacks to switch to — the gateway's (Options.ContextWindowFallbacksSet) and a
// scope's context window fallbacks without an entry for the model asked — are LiteLLM's,
// whose request names one model: a native request naming several goes on to its next
// model (then its fallbacks) as on any failure, while one naming one model still ends;
// a scope's entry for the first model asked still switches to it.
func TestWindowMarksLeaveSeveralModels(t *testing.T) {
	long := step{err: upstreamErr(providers.KindContextLength, 400, 0)}
	h := newHarness(t, func(o *Options) { o.ContextWindowFallbacksSet = true })
	h.a.on("m", long)
	h.a.on("m2", step{text: "from m2"})
	several := func() *Request { r := userReq("hi", "a/m", "a/m2"); r.MaxRetries = intp(0); return r }
	resp, err := h.g.Complete(context.Background(), Scope{}, several())
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/m2"}) {
		t.Fatalf("several models under the gateway's mark: %v %v; want a/m then a/m2", attemptModels(resp, err), err)
	}
	one := userReq("hi", "a/m")
	one.MaxRetries = intp(0)
	if resp, err = h.g.Complete(context.Background(), Scope{Fallbacks: map[string][]string{"*": {"a/m2"}}}, one); err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) {
		t.Fatalf("one model under the gateway's mark: %v %v; want the prompt too long to stand", attemptModels(resp, err), err)
	}
	noEntry := Scope{ContextWindowFallbacks: map[string][]string{"other": {"b/big"}}}
	if resp, err = h.g.Complete(context.Background(), noEntry, several()); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/m2"}) {
		t.Fatalf("several models, a scope without an entry: %v %v; want a/m then a/m2", attemptModels(resp, err), err)
	}
	entry := Scope{ContextWindowFallbacks: map[string][]string{"a/m": {"b/big"}}}
	before := h.a.callCount("m2")
	if resp, err = h.g.Complete(context.Background(), entry, several()); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "b/big"}) || h.a.callCount("m2") != before {
		t.Fatalf("several models, a scope's entry for the first: %v %v; want a/m then b/big", attemptModels(resp, err), err)
	}
}

// TestRequestFallbacksReplaceWindowFallbacks: a request naming fallbacks of its own (a
// list of models, LiteLLM's client-side fallbacks) sends a prompt too long to them in
// place of any context window fallbacks — the scope's, the group's, its own — as
// LiteLLM's router runs such a list before it looks at the error's kind
// (async_function_with_fallbacks_common_utils); the models asked still end. An empty list
// of its own asks for no fallbacks, and the context window fallbacks apply.
func TestRequestFallbacksReplaceWindowFallbacks(t *testing.T) {
	long := step{err: upstreamErr(providers.KindContextLength, 400, 0)}
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"a/m1", "a/m2"}, ContextWindowFallbacks: []string{"b/g"}}}
	})
	h.a.on("m", long)
	h.a.on("m1", long)
	scope := Scope{ContextWindowFallbacks: map[string][]string{"a/m": {"b/big"}}}
	ask := func(model string, own []string, ownWindow map[string][]string) *Request {
		r := userReq("hi", model)
		r.MaxRetries = intp(0)
		r.FallbackModels, r.ContextWindowFallbacks = own, ownWindow
		if model == "G" {
			r.ephemeral = true
		}
		return r
	}
	for _, c := range []struct {
		name      string
		scope     Scope
		req       *Request
		want      []string
		wantError bool
	}{
		{"the scope's, without fallbacks of its own", scope, ask("a/m", nil, nil), []string{"a/m", "b/big"}, false},
		{"its own over the scope's", scope, ask("a/m", []string{"b/own"}, nil), []string{"a/m", "b/own"}, false},
		{"its own over its own context window fallbacks", Scope{}, ask("a/m", []string{"b/own"}, map[string][]string{"a/m": {"b/big"}}), []string{"a/m", "b/own"}, false},
		{"its own over the group's, members ended", Scope{}, ask("G", []string{"b/own"}, nil), []string{"a/m1", "b/own"}, false},
		{"the group's without fallbacks of its own", Scope{}, ask("G", nil, nil), []string{"a/m1", "b/g"}, false},
		{"an empty list of its own: the scope's", scope, ask("a/m", []string{}, nil), []string{"a/m", "b/big"}, false},
	} {
		resp, err := h.g.Complete(context.Background(), c.scope, c.req)
		if (err != nil) != c.wantError || !slices.Equal(attemptModels(resp, err), c.want) {
			t.Errorf("%s: %v %v; want %v", c.name, attemptModels(resp, err), err, c.want)
		}
	}
	if n := h.a.callCount("m2"); n != 0 {
		t.Errorf("the group's member after the one too short was called %d times", n)
	}
	// LiteLLM's request-body fallbacks, read by the OpenAI-compatible surface, do the same.
	before := h.b.callCount("big")
	req := chatRequest(t, `{"model":"a/m","max_retries":0,"fallbacks":["b/own"],"context_window_fallbacks":[{"a/m":["b/big"]}],"messages":[{"role":"user","content":"hi"}]}`)
	resp, err := h.g.Complete(context.Background(), Scope{}, req)
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "b/own"}) || h.b.callCount("big") != before {
		t.Fatalf("fallbacks in the body: %v %v; want a/m then b/own, b/big not called", attemptModels(resp, err), err)
	}
}

// TestWindowFallbacksEntryLookup: a scope's and a request's own context window fallbacks
// are found by the name asked, else that name without its provider, else "*". LiteLLM's
// router finds context_window_fallbacks by the exact name only, so the exact entry must
// win over the others: where LiteLLM finds one the same fallbacks are tried, and the
// others apply only where LiteLLM would find none (and answer the prompt too long).
func TestWindowFallbacksEntryLookup(t *testing.T) {
	long := step{err: upstreamErr(providers.KindContextLength, 400, 0)}
	h := newHarness(t, nil)
	h.a.on("m", long)
	for _, c := range []struct {
		name string
		fbs  map[string][]string
		want string
	}{
		{"exact", map[string][]string{"a/m": {"b/exact"}, "m": {"b/bare"}, "*": {"b/star"}}, "b/exact"},
		{"without its provider", map[string][]string{"m": {"b/bare"}, "*": {"b/star"}}, "b/bare"},
		{"star", map[string][]string{"*": {"b/star"}, "other": {"b/x"}}, "b/star"},
	} {
		for _, own := range []bool{false, true} {
			r := userReq("hi", "a/m")
			r.MaxRetries = intp(0)
			scope := Scope{ContextWindowFallbacks: c.fbs}
			if own {
				scope, r.ContextWindowFallbacks = Scope{}, c.fbs
			}
			resp, err := h.g.Complete(context.Background(), scope, r)
			if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", c.want}) {
				t.Errorf("%s (request's own %v): %v %v; want a/m then %s", c.name, own, attemptModels(resp, err), err, c.want)
			}
		}
	}
}

// TestScopeSettingsOverTheServersOneByOne: a scope's router settings replace the server's
// setting by setting, as LiteLLM's proxy fills a key's (or team's) router_settings into
// the request's router kwargs it leaves unset and its router keeps its own for the rest
// (route_llm_request.py, router_settings_override): a scope with plain fallbacks only
// still gets the group's context window fallbacks, and the group's mark without an entry.
func TestScopeSettingsOverTheServersOneByOne(t *testing.T) {
	long := step{err: upstreamErr(providers.KindContextLength, 400, 0)}
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{
			"G": {Models: []string{"a/m1"}, Fallbacks: []string{"b/gf"}, ContextWindowFallbacks: []string{"b/g"}},
			"H": {Models: []string{"a/m1"}, Fallbacks: []string{"b/gf"}, ContextWindowFallbacksSet: true},
		}
	})
	h.a.on("m1", long)
	scope := Scope{Fallbacks: map[string][]string{"*": {"b/x"}}}
	if resp, err := h.g.Complete(context.Background(), scope, groupReq("G")); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "b/g"}) {
		t.Fatalf("the group's context window fallbacks under a scope with plain ones only: %v %v", attemptModels(resp, err), err)
	}
	if resp, err := h.g.Complete(context.Background(), scope, groupReq("H")); err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1"}) {
		t.Fatalf("the group's mark under a scope with plain ones only: %v %v; want the prompt too long to stand", attemptModels(resp, err), err)
	}
	if n := h.b.callCount("x") + h.b.callCount("gf"); n != 0 {
		t.Fatalf("plain fallbacks called %d times after a prompt too long", n)
	}
}
