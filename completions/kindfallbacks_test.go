package completions

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// tooLong is the upstream's answer to a prompt longer than the model's context window.
var tooLong = status(400, "context_length_exceeded", "This model's maximum context length is 8192 tokens")

// filtered is the upstream's answer to a request its content filter blocked.
var filtered = status(400, "content_filter", "The response was filtered due to the prompt triggering Azure OpenAI's content management policy")

// askGroup sends one request naming model (a group) through g, streamed or not, and
// returns the answering model ("provider/model"), the attempts' models and kinds, and the
// error.
func askGroup(t *testing.T, g *Gateway, model string, stream bool) (answered string, attempts []string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := chatRequest(t, `{"model":"`+model+`","max_retries":0,"messages":[{"role":"user","content":"a long prompt"}]}`)
	describe := func(as []Attempt) []string {
		out := make([]string, len(as))
		for i, a := range as {
			out[i] = a.Model + ":" + kindsOf(as)[i]
		}
		return out
	}
	fromErr := func(err error) []string {
		var af *AllFailedError
		var cf *ContentFilterError
		switch {
		case errors.As(err, &af):
			return describe(af.Attempts)
		case errors.As(err, &cf):
			return describe(cf.Attempts)
		}
		return nil
	}
	if !stream {
		resp, err := g.Complete(ctx, Scope{Owner: "k"}, req)
		if err != nil {
			return "", fromErr(err), err
		}
		return resp.Provider + "/" + resp.Model, describe(resp.Attempts), nil
	}
	st, err := g.Stream(ctx, Scope{Owner: "k"}, req)
	if err != nil {
		return "", fromErr(err), err
	}
	defer st.Close()
	if _, err := drain(t, st); err != nil {
		return "", describe(st.p.attempts), err
	}
	r := st.Response()
	return r.Provider + "/" + r.Model, describe(r.Attempts), nil
}

// TestKindFallbacks: a group's ContextWindowFallbacks answer a prompt too long, and its
// ContentPolicyFallbacks a request a content filter refused, in place of its plain
// Fallbacks; as in LiteLLM's router, the first member to fail so switches to that list
// and the group's other members are not tried, while members failing otherwise hand over
// to the next member as before. Without them the gateway does what it did before (a
// prompt too long goes on to the next member, then the plain fallbacks; a refusal stands).
func TestKindFallbacks(t *testing.T) {
	cases := []struct {
		name   string
		groups map[string]ModelGroup
		script map[string]behaviour
		// want is the model that answers ("" : the request fails), attempts what was tried.
		want     string
		attempts []string
		filtered bool // the request ends with a *ContentFilterError
	}{
		{name: "too long: context window fallback answers, not the plain one",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a"}, ContextWindowFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": tooLong},
			want:     "up/b",
			attempts: []string{"up/a:context_length", "up/b:ok"}},
		{name: "too long without context window fallbacks: the plain fallback, as before",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": tooLong},
			want:     "up/c",
			attempts: []string{"up/a:context_length", "up/c:ok"}},
		{name: "too long without context window fallbacks: the next member, as before",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": tooLong},
			want:     "up/a2",
			attempts: []string{"up/a:context_length", "up/a2:ok"}},
		{name: "too long: the list answers before the group's other members",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2", "up/a3"}, ContextWindowFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": tooLong},
			want:     "up/b",
			attempts: []string{"up/a:context_length", "up/b:ok"}},
		{name: "a larger-window member at the head of the list answers first",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, ContextWindowFallbacks: []string{"up/a2", "up/b"}}},
			script:   map[string]behaviour{"a": tooLong},
			want:     "up/a2",
			attempts: []string{"up/a:context_length", "up/a2:ok"}},
		{name: "a member unavailable first: the next member, the switch at its too long",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a2", "up/a", "up/a3"}, ContextWindowFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a2": status(503, "", "overloaded"), "a": tooLong},
			want:     "up/b",
			attempts: []string{"up/a2:overloaded", "up/a:context_length", "up/b:ok"}},
		{name: "a member failing otherwise first: the next member, the switch at its too long",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a2", "up/a", "up/a3"}, ContextWindowFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a2": status(400, "invalid_value", "bad temperature"), "a": tooLong},
			want:     "up/b",
			attempts: []string{"up/a2:bad_request", "up/a:context_length", "up/b:ok"}},
		{name: "members failing otherwise only: the plain fallbacks",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, ContextWindowFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": status(503, "", "overloaded"), "a2": status(400, "invalid_value", "bad temperature")},
			want:     "up/c",
			attempts: []string{"up/a:overloaded", "up/a2:bad_request", "up/c:ok"}},
		{name: "a context window fallback naming a group, a member not tried twice",
			groups: map[string]ModelGroup{
				"G":   {Models: []string{"up/a"}, ContextWindowFallbacks: []string{"up/a", "big"}},
				"big": {Models: []string{"up/b", "up/d"}},
			},
			script:   map[string]behaviour{"a": tooLong, "b": tooLong},
			want:     "up/d",
			attempts: []string{"up/a:context_length", "up/b:context_length", "up/d:ok"}},
		{name: "refused: content policy fallback answers, not the plain one",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a"}, ContentPolicyFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": filtered},
			want:     "up/b",
			attempts: []string{"up/a:content_filter", "up/b:ok"}},
		{name: "refused: the list answers before the group's other members",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, ContentPolicyFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": filtered},
			want:     "up/b",
			attempts: []string{"up/a:content_filter", "up/b:ok"}},
		{name: "refused after a member's 429: the switch at the refusal",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a2", "up/a", "up/a3"}, ContentPolicyFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a2": status(429, "", "slow down"), "a": filtered},
			want:     "up/b",
			attempts: []string{"up/a2:rate_limited", "up/a:content_filter", "up/b:ok"}},
		{name: "refused without content policy fallbacks: the refusal stands, as before",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": filtered},
			attempts: []string{"up/a:content_filter"}, filtered: true},
		{name: "refused by a content policy fallback: the next one",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a"}, ContentPolicyFallbacks: []string{"up/b", "up/d"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": filtered, "b": filtered},
			want:     "up/d",
			attempts: []string{"up/a:content_filter", "up/b:content_filter", "up/d:ok"}},
		{name: "refused by the last content policy fallback: its refusal stands, the other members untried",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, ContentPolicyFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": filtered, "b": filtered},
			attempts: []string{"up/a:content_filter", "up/b:content_filter"}, filtered: true},
		{name: "too long with only content policy fallbacks: the plain fallback",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a"}, ContentPolicyFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": tooLong},
			want:     "up/c",
			attempts: []string{"up/a:context_length", "up/c:ok"}},
		{name: "too long with only content policy fallbacks: the next member",
			groups:   map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, ContentPolicyFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}},
			script:   map[string]behaviour{"a": tooLong},
			want:     "up/a2",
			attempts: []string{"up/a:context_length", "up/a2:ok"}},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			name := c.name
			if stream {
				name += " (streamed)"
			}
			t.Run(name, func(t *testing.T) {
				g, up, _ := faultGatewayWith(t, func(o *Options) {
					o.ModelGroups = c.groups
					// No case waits on a silent model: bounds far above a loaded machine's
					// answer time (the fault gateway's 150 ms cut a 429 once in CI, ci-38a).
					o.AttemptTimeout, o.FirstTokenTimeout, o.StreamIdleTimeout = 5*time.Second, 5*time.Second, 5*time.Second
				})
				for m, b := range c.script {
					up.on(m, b)
				}
				got, attempts, err := askGroup(t, g, "G", stream)
				var cf *ContentFilterError
				switch {
				case c.filtered && !errors.As(err, &cf):
					t.Fatalf("err %v: want the content filter's refusal", err)
				case !c.filtered && err != nil:
					t.Fatalf("err %v (attempts %v): want an answer from %s", err, attempts, c.want)
				case got != c.want:
					t.Errorf("answered by %q, want %q", got, c.want)
				}
				if !slices.Equal(attempts, c.attempts) {
					t.Errorf("attempts %v, want %v", attempts, c.attempts)
				}
				if n := up.callCount("c"); c.want != "up/c" && n != 0 {
					t.Errorf("the plain fallback was called %d times", n)
				}
			})
		}
	}
}

// TestKindFallbacksKeepRequestFallbacks: the request's own fallback_models stay after a
// group's context window fallbacks, which replace the group's plain ones only.
func TestKindFallbacksKeepRequestFallbacks(t *testing.T) {
	g, up, _ := faultGatewayWith(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"up/a"}, ContextWindowFallbacks: []string{"up/b"}, Fallbacks: []string{"up/c"}}}
	})
	up.on("a", tooLong)
	up.on("b", tooLong)
	req := chatRequest(t, `{"model":"G","max_retries":0,"fallback_models":["up/e"],"messages":[{"role":"user","content":"a long prompt"}]}`)
	resp, err := g.Complete(context.Background(), Scope{Owner: "k"}, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "e" || up.callCount("c") != 0 {
		t.Errorf("answered by %s/%s, plain fallback called %d times: want up/e, the request's fallback, after up/b", resp.Provider, resp.Model, up.callCount("c"))
	}
}

// TestMemberTimeouts: a member that runs out of its own timeout (a whole call) or stream
// timeout (its first chunk) is abandoned as timed out and the next model answers, though
// the gateway's own limits are far longer.
func TestMemberTimeouts(t *testing.T) {
	for _, c := range []struct {
		name     string
		stream   bool
		timeouts MemberTimeouts
		slow     behaviour
	}{
		{name: "timeout, whole call", timeouts: MemberTimeouts{Timeout: 0.05}, slow: hang()},
		{name: "stream_timeout, first chunk", stream: true, timeouts: MemberTimeouts{StreamTimeout: 0.05}, slow: slowFirstToken()},
		{name: "timeout bounds a stream's first chunk without stream_timeout", stream: true, timeouts: MemberTimeouts{Timeout: 0.05}, slow: slowFirstToken()},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, up, _ := faultGatewayWith(t, func(o *Options) {
				o.AttemptTimeout, o.FirstTokenTimeout, o.StreamIdleTimeout, o.RequestTimeout = time.Minute, time.Minute, time.Minute, 2*time.Minute
				o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"up/a", "up/b"}, Timeouts: []MemberTimeouts{c.timeouts, {}}}}
			})
			up.on("a", c.slow)
			got, attempts, err := askGroup(t, g, "G", c.stream)
			if err != nil {
				t.Fatalf("%v (attempts %v): the member's timeout did not hand over to the next", err, attempts)
			}
			if got != "up/b" || !slices.Equal(attempts, []string{"up/a:timeout", "up/b:ok"}) {
				t.Errorf("answered by %s after %v: want up/b after up/a timed out", got, attempts)
			}
		})
	}
}

// TestKindFallbacksAndTimeoutsValidation: the new fields are checked as Fallbacks and
// Limits are, errors naming the group and the field.
func TestKindFallbacksAndTimeoutsValidation(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"g":{"models":["a/m1"],"context_window_fallbacks":["g"]}}`, `model group "g": context_window_fallbacks[0]: names the group itself`},
		{`{"g":{"models":["a/m1"],"content_policy_fallbacks":["nope"]}}`, `model group "g": content_policy_fallbacks[0]: "nope" is neither provider/model nor a model group`},
		{`{"g":{"models":["a/m1"],"context_window_fallbacks":["a/1","a/2","a/3","a/4","a/5","a/6","a/7","a/8","a/9","a/10","a/11"]}}`, `context_window_fallbacks: at most`},
		{`{"g":{"models":["a/m1","a/m2"],"timeouts":[{"timeout":5}]}}`, `model group "g": timeouts: one per model, got 1 for 2 models`},
		{`{"g":{"models":["a/m1"],"timeouts":[{"stream_timeout":-1}]}}`, `timeouts[0].stream_timeout (a/m1): must be seconds`},
		{`{"g":{"models":["a/m1"],"timeouts":[{"timeout":5}]},"h":{"models":["a/m1"],"timeouts":[{"timeout":6}]}}`, `model group "h": timeouts[0] of a/m1 differ from those model group "g" gives it`},
	} {
		_, err := ParseModelGroups([]byte(c.doc))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want ErrInvalid saying %q", c.doc, err, c.want)
		}
	}
	groups, err := ParseModelGroups([]byte(`{"g":{"models":["a/m1"],"context_window_fallbacks":["h"],"content_policy_fallbacks":["a/m3"],"timeouts":[{"timeout":30,"stream_timeout":2.5}]},"h":{"models":["a/m2"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if g := groups["g"]; !slices.Equal(g.ContextWindowFallbacks, []string{"h"}) || !slices.Equal(g.ContentPolicyFallbacks, []string{"a/m3"}) ||
		len(g.Timeouts) != 1 || g.Timeouts[0] != (MemberTimeouts{Timeout: 30, StreamTimeout: 2.5}) {
		t.Errorf("parsed %+v", g)
	}
}
