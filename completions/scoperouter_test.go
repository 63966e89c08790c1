package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestScopeNumRetriesReplacesTheDefault: a scope's NumRetries (a key's router_settings
// num_retries) bounds the retries of a request without its own max_retries; the request's
// own still wins.
func TestScopeNumRetriesReplacesTheDefault(t *testing.T) {
	zero, one := 0, 1
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{text: "ok"})
	_, err := h.g.Complete(context.Background(), Scope{NumRetries: &zero}, userReq("hi", "a/m"))
	if err == nil || h.a.callCount("m") != 1 {
		t.Fatalf("num_retries 0: err %v, calls %d, want a failure after 1 call", err, h.a.callCount("m"))
	}
	h2 := newHarness(t, nil)
	h2.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{text: "ok"})
	r := userReq("hi", "a/m")
	r.MaxRetries = &[]int{2}[0]
	if _, err := h2.g.Complete(context.Background(), Scope{NumRetries: &one}, r); err != nil || h2.a.callCount("m") != 3 {
		t.Fatalf("request max_retries 2 over scope's 1: err %v, calls %d", err, h2.a.callCount("m"))
	}
}

// attemptModels are the models of resp's attempts, or of err's, in order.
func attemptModels(resp *Response, err error) []string {
	var as []Attempt
	var af *AllFailedError
	switch {
	case resp != nil:
		as = resp.Attempts
	case errors.As(err, &af):
		as = af.Attempts
	}
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Model
	}
	return out
}

// TestScopeFallbacksGiveWayToTheRequests: a scope's Fallbacks for the model asked (the
// name, else without its provider, else "*") are tried when it fails, each once — unless
// the request names fallbacks of its own, which replace them (LiteLLM's request > key),
// an empty list included.
func TestScopeFallbacksGiveWayToTheRequests(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindAuth, 401, 0)})
	h.a.on("x", step{err: upstreamErr(providers.KindAuth, 401, 0)})
	scope := Scope{Fallbacks: map[string][]string{"a/m": {"a/x", "b/m"}, "*": {"a/nope"}}}
	r := userReq("hi", "a/m")
	resp, err := h.g.Complete(context.Background(), scope, r)
	if err != nil || resp.Provider != "b" || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/x", "b/m"}) {
		t.Fatalf("the scope's fallbacks: %v %v", attemptModels(resp, err), err)
	}
	if r.FallbackModels != nil {
		t.Fatalf("the request's FallbackModels were written: %v", r.FallbackModels)
	}
	// The request's own replace them: b/m, the scope's, is not tried.
	r = userReq("hi", "a/m")
	r.FallbackModels = []string{"a/x"}
	resp, err = h.g.Complete(context.Background(), scope, r)
	if err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/x"}) || h.b.callCount("m") != 1 {
		t.Fatalf("the request's own fallbacks: %v %v", attemptModels(resp, err), err)
	}
	// An empty list of its own asks for none.
	r = userReq("hi", "a/m")
	r.FallbackModels = []string{}
	if resp, err = h.g.Complete(context.Background(), scope, r); err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) {
		t.Fatalf("fallbacks []: %v %v", attemptModels(resp, err), err)
	}
	// So does LiteLLM's fallbacks: [] of the OpenAI-compatible request.
	resp, err = h.g.Complete(context.Background(), scope, chatRequest(t, `{"model":"a/m","fallbacks":[],"messages":[{"role":"user","content":"hi"}]}`))
	if err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) {
		t.Fatalf("LiteLLM's fallbacks []: %v %v", attemptModels(resp, err), err)
	}

	h2 := newHarness(t, nil)
	h2.a.on("m", step{err: upstreamErr(providers.KindAuth, 401, 0)})
	resp, err = h2.g.Complete(context.Background(), Scope{Fallbacks: map[string][]string{"*": {"b/m"}}}, userReq("hi", "a/m"))
	if err != nil || resp.Provider != "b" {
		t.Fatalf("\"*\" fallbacks: %v %+v", err, resp)
	}
	// a/m asked, an entry for m: found without the provider (LiteLLM's lookup), before "*".
	resp, err = h2.g.Complete(context.Background(), Scope{Fallbacks: map[string][]string{"m": {"b/m"}, "*": {"a/nope"}}}, userReq("hi", "a/m"))
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "b/m"}) {
		t.Fatalf("an entry of the bare name: %v %v", err, attemptModels(resp, err))
	}
}

// TestScopeFallbacksReplaceTheGroups: a scope with Fallbacks leaves out the plain
// fallbacks of the model group asked (the server's), even when it has none for that group,
// as LiteLLM's key fallbacks replace its router's list; its members are all tried still.
func TestScopeFallbacksReplaceTheGroups(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"a/m1", "a/m2"}, Fallbacks: []string{"b/g"}}}
	})
	busy := step{err: upstreamErr(providers.KindAuth, 401, 0)}
	h.a.on("m1", busy)
	h.a.on("m2", busy)
	resp, err := h.g.Complete(context.Background(), Scope{Fallbacks: map[string][]string{"G": {"b/k"}}}, groupReq("G"))
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "a/m2", "b/k"}) {
		t.Fatalf("the scope's for the group: %v %v", attemptModels(resp, err), err)
	}
	resp, err = h.g.Complete(context.Background(), Scope{Fallbacks: map[string][]string{"other": {"b/k"}}}, groupReq("G"))
	if err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "a/m2"}) {
		t.Fatalf("a scope without an entry for the group: %v %v", attemptModels(resp, err), err)
	}
	if resp, err = h.g.Complete(context.Background(), Scope{}, groupReq("G")); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "a/m2", "b/g"}) {
		t.Fatalf("without the scope's: %v %v", attemptModels(resp, err), err)
	}
	if h.b.callCount("g") != 1 {
		t.Fatalf("the group's fallback called %d times, want 1 (without the scope's only)", h.b.callCount("g"))
	}
}

// TestScopeContextWindowFallbacks: a scope's ContextWindowFallbacks (a key's
// router_settings.context_window_fallbacks) take over when the model asked fails with a
// prompt too long — for a model as for a group, in place of the group's, its members
// left and the plain fallbacks left out, the request's own fallbacks in their place when
// it names some — and only then; one the scope's budget does not allow is passed over.
func TestScopeContextWindowFallbacks(t *testing.T) {
	long := step{err: upstreamErr(providers.KindContextLength, 400, 0)}
	busy := step{err: upstreamErr(providers.KindAuth, 401, 0)}
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"a/m1", "a/m2"}, ContextWindowFallbacks: []string{"a/g"}}}
	})
	scope := Scope{Fallbacks: map[string][]string{"*": {"a/x"}}, ContextWindowFallbacks: map[string][]string{"m": {"b/big"}, "G": {"b/big"}}}
	h.a.on("m", long)
	resp, err := h.g.Complete(context.Background(), scope, userReq("hi", "a/m"))
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "b/big"}) || h.a.callCount("x") != 0 {
		t.Fatalf("a prompt too long for a model: %v %v (x called %d times)", attemptModels(resp, err), err, h.a.callCount("x"))
	}
	// Any other failure goes on to the plain fallbacks.
	h.a.on("m", busy)
	resp, err = h.g.Complete(context.Background(), scope, userReq("hi", "a/m"))
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/x"}) {
		t.Fatalf("another failure: %v %v", attemptModels(resp, err), err)
	}
	// A group: its members after the one too short are left out, and the scope's replace
	// the group's.
	h.a.on("m1", long)
	resp, err = h.g.Complete(context.Background(), scope, groupReq("G"))
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "b/big"}) || h.a.callCount("m2") != 0 || h.a.callCount("g") != 0 {
		t.Fatalf("a group: %v %v", attemptModels(resp, err), err)
	}
	// The request's own fallbacks go in their place (LiteLLM's router runs a request's
	// list of models before it looks at the error's kind); the members still end.
	r := groupReq("G")
	r.FallbackModels = []string{"b/own"}
	h.b.on("big", long)
	bigBefore := h.b.callCount("big")
	resp, err = h.g.Complete(context.Background(), scope, r)
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "b/own"}) || h.a.callCount("m2") != 0 || h.a.callCount("g") != 0 || h.b.callCount("big") != bigBefore {
		t.Fatalf("a group with fallbacks of its own: %v %v", attemptModels(resp, err), err)
	}
	// Without the scope's, the group's own.
	if resp, err = h.g.Complete(context.Background(), Scope{}, groupReq("G")); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "a/g"}) {
		t.Fatalf("the group's own: %v %v", attemptModels(resp, err), err)
	}
	// A fallback the budget does not allow is passed over: the request fails as without
	// an entry, with the prompt too long (the plain fallbacks are not tried).
	narrow := scope
	narrow.Budget = NewBudget(BudgetLimits{AllowedModels: []string{"a/m", "a/x"}})
	h.a.on("m", long)
	h.a.on("x", busy)
	resp, err = h.g.Complete(context.Background(), narrow, userReq("hi", "a/m"))
	if errors.Is(err, ErrModelNotAllowed) || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) {
		t.Fatalf("a fallback outside the budget: %v %v", attemptModels(resp, err), err)
	}
}

// TestScopeContextWindowFallbacksWithoutEntry: a scope with context window fallbacks but
// none for the model asked (LiteLLM's router re-raises the ContextWindowExceededError when
// context_window_fallbacks are set without an entry for the model group): a prompt too
// long for it ends the request with that error — the group's members after it, the
// scope's plain fallbacks and the group's are not tried — unless the request named
// fallbacks of its own, which are; an empty entry ({"m": []}) says the same for its model
// over "*"; any other failure still goes on to the plain fallbacks, and without the
// scope's context window fallbacks a prompt too long does too.
func TestScopeContextWindowFallbacksWithoutEntry(t *testing.T) {
	long := step{err: upstreamErr(providers.KindContextLength, 400, 0)}
	busy := step{err: upstreamErr(providers.KindAuth, 401, 0)}
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"a/m1", "a/m2"}, Fallbacks: []string{"a/gf"}, ContextWindowFallbacks: []string{"a/g"}}}
	})
	scope := Scope{Fallbacks: map[string][]string{"*": {"a/x"}}, ContextWindowFallbacks: map[string][]string{"other": {"b/big"}}}
	h.a.on("m", long)
	resp, err := h.g.Complete(context.Background(), scope, userReq("hi", "a/m"))
	var af *AllFailedError
	if !errors.As(err, &af) || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) || af.Attempts[0].Kind != providers.KindContextLength.String() || h.a.callCount("x") != 0 {
		t.Fatalf("a model without an entry: %v %v (x called %d times)", attemptModels(resp, err), err, h.a.callCount("x"))
	}
	// A group: its other members, its own fallbacks of both kinds and the scope's plain
	// ones are left out; the request's own fallbacks are still tried.
	h.a.on("m1", long)
	if resp, err = h.g.Complete(context.Background(), scope, groupReq("G")); err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1"}) {
		t.Fatalf("a group without an entry: %v %v", attemptModels(resp, err), err)
	}
	r := groupReq("G")
	r.FallbackModels = []string{"b/own"}
	if resp, err = h.g.Complete(context.Background(), scope, r); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "b/own"}) {
		t.Fatalf("the request's own fallbacks: %v %v", attemptModels(resp, err), err)
	}
	if h.a.callCount("m2")+h.a.callCount("g")+h.a.callCount("gf")+h.a.callCount("x") != 0 {
		t.Fatalf("left out models were called: m2 %d, g %d, gf %d, x %d", h.a.callCount("m2"), h.a.callCount("g"), h.a.callCount("gf"), h.a.callCount("x"))
	}
	// An empty entry for the model asked wins over "*".
	empty := scope
	empty.ContextWindowFallbacks = map[string][]string{"a/m": {}, "*": {"b/big"}}
	if resp, err = h.g.Complete(context.Background(), empty, userReq("hi", "a/m")); err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) {
		t.Fatalf("an empty entry: %v %v", attemptModels(resp, err), err)
	}
	// Another failure goes on to the plain fallbacks.
	h.a.on("m", busy)
	if resp, err = h.g.Complete(context.Background(), scope, userReq("hi", "a/m")); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/x"}) {
		t.Fatalf("another failure: %v %v", attemptModels(resp, err), err)
	}
	// Without the scope's context window fallbacks, a prompt too long goes on as before.
	h.a.on("m", long)
	plain := Scope{Fallbacks: scope.Fallbacks}
	if resp, err = h.g.Complete(context.Background(), plain, userReq("hi", "a/m")); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/x"}) {
		t.Fatalf("without context window fallbacks: %v %v", attemptModels(resp, err), err)
	}
}

// TestRequestContextWindowFallbacks: a request's own context_window_fallbacks (LiteLLM's
// request-body list, read over its key's and its router's) replace the scope's and the
// model group's: the entry for the model asked (or the group asked) is tried when it fails
// with a prompt too long, an empty list or no entry leaving that error to stand; another
// failure still goes to the plain fallbacks; an unknown model in the entry is a 400 naming
// it, one the budget does not allow refused as the request's fallback_models are.
func TestRequestContextWindowFallbacks(t *testing.T) {
	long := step{err: upstreamErr(providers.KindContextLength, 400, 0)}
	busy := step{err: upstreamErr(providers.KindAuth, 401, 0)}
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"a/m1", "a/m2"}, ContextWindowFallbacks: []string{"a/g"}}}
	})
	scope := Scope{Fallbacks: map[string][]string{"*": {"a/x"}}, ContextWindowFallbacks: map[string][]string{"*": {"b/big"}}}
	ask := func(model string, own map[string][]string) *Request {
		r := userReq("hi", model)
		r.ContextWindowFallbacks = own
		return r
	}
	h.a.on("m", long)
	resp, err := h.g.Complete(context.Background(), scope, ask("a/m", map[string][]string{"m": {"b/own"}, "*": {"b/star"}}))
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "b/own"}) {
		t.Fatalf("the request's entry: %v %v", attemptModels(resp, err), err)
	}
	for name, own := range map[string]map[string][]string{"empty": {}, "no entry": {"other": {"b/own"}}, "empty entry": {"a/m": {}, "*": {"b/own"}}} {
		resp, err = h.g.Complete(context.Background(), scope, ask("a/m", own))
		if err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) {
			t.Fatalf("%s: %v %v", name, attemptModels(resp, err), err)
		}
	}
	if n := h.b.callCount("big") + h.a.callCount("x") + h.b.callCount("star"); n != 0 {
		t.Fatalf("the scope's fallbacks or the request's \"*\" were called %d times", n)
	}
	// A group asked: its other members and its own list give way to the request's.
	h.a.on("m1", long)
	resp, err = h.g.Complete(context.Background(), Scope{}, func() *Request {
		r := groupReq("G")
		r.ContextWindowFallbacks = map[string][]string{"G": {"b/big2"}}
		return r
	}())
	if err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1", "b/big2"}) || h.a.callCount("m2")+h.a.callCount("g") != 0 {
		t.Fatalf("a group: %v %v", attemptModels(resp, err), err)
	}
	// Another failure: the plain fallbacks, as before.
	h.a.on("m", busy)
	if resp, err = h.g.Complete(context.Background(), scope, ask("a/m", map[string][]string{"m": {"b/own"}})); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/x"}) {
		t.Fatalf("another failure: %v %v", attemptModels(resp, err), err)
	}
	// Checked as the request's own fallbacks are.
	_, err = h.g.Complete(context.Background(), scope, ask("a/m", map[string][]string{"m": {"nosuch/x"}}))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != `context_window_fallbacks["m"]` {
		t.Fatalf("an unknown fallback: %v (want a validation error naming context_window_fallbacks[\"m\"])", err)
	}
	// Read from LiteLLM's list, the entry is named by its index too, as a bad shape is
	// (it was context_window_fallbacks["m"] here, [1]["m"] for a shape error).
	var chat OpenAIChatRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"hi"}],"context_window_fallbacks":[{"other":["b/own"]},{"m":["b/own","nosuch/x"]}]}`), &chat); err != nil {
		t.Fatal(err)
	}
	parsed, err := chat.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.g.Complete(context.Background(), scope, parsed)
	if !errors.As(err, &ve) || ve.Field != `context_window_fallbacks[1]["m"]` {
		t.Fatalf("an unknown fallback in the list sent: %v (want a validation error naming context_window_fallbacks[1][\"m\"])", err)
	}
	narrow := Scope{Budget: NewBudget(BudgetLimits{AllowedModels: []string{"a/m"}})}
	if _, err = h.g.Complete(context.Background(), narrow, ask("a/m", map[string][]string{"m": {"b/own"}})); !errors.Is(err, ErrModelNotAllowed) {
		t.Fatalf("a fallback the budget does not allow: %v", err)
	}
}

// TestRequestContextWindowFallbacksParsed: the OpenAI-compatible surfaces read LiteLLM's
// context_window_fallbacks into Request.ContextWindowFallbacks (absent or null: none;
// [] an empty set; a model listed twice keeps its first list), and refuse a bad shape
// naming the field.
func TestRequestContextWindowFallbacksParsed(t *testing.T) {
	parse := func(cw string) (*Request, error) {
		var r OpenAIChatRequest
		body := `{"model":"a/m","messages":[{"role":"user","content":"hi"}]`
		if cw != "" {
			body += `,"context_window_fallbacks":` + cw
		}
		if err := json.Unmarshal([]byte(body+"}"), &r); err != nil {
			t.Fatal(err)
		}
		return r.ToRequest()
	}
	for cw, want := range map[string]string{
		"":     "map[]",
		"null": "map[]",
		"[]":   "map[]",
		`[{"a/m":["b/x"]},{"a/m":["b/y"],"*":[]}]`: "map[*:[] a/m:[b/x]]",
	} {
		req, err := parse(cw)
		if err != nil || fmt.Sprint(req.ContextWindowFallbacks) != want || (req.ContextWindowFallbacks == nil) != (cw == "" || cw == "null") {
			t.Errorf("%s: %v %v (nil %v), want %s", cw, req.ContextWindowFallbacks, err, req.ContextWindowFallbacks == nil, want)
		}
	}
	for cw, field := range map[string]string{
		`{"a/m":["b/x"]}`:   "context_window_fallbacks",
		`"b/x"`:             "context_window_fallbacks",
		`["b/x"]`:           "context_window_fallbacks[0]",
		`[{"a/m":"b/x"}]`:   `context_window_fallbacks[0]["a/m"]`,
		`[{"a/m":[""]}]`:    `context_window_fallbacks[0]["a/m"][0]`,
		`[{"":["b/x"]}]`:    "context_window_fallbacks[0]",
		`[{}, {"a/m":[1]}]`: `context_window_fallbacks[1]["a/m"]`,
		`[{"a/m":["b/1","b/2","b/3","b/4","b/5","b/6","b/7","b/8","b/9","b/10","b/11"]}]`: `context_window_fallbacks[0]["a/m"]`,
	} {
		_, err := parse(cw)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v, want a validation error naming %s", cw, err, field)
		}
	}
}
