package completions

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestMockFailure: Request.MockFailure fails the group's members without calling them
// and takes the fallbacks its kind takes (the group's by kind, else its plain ones, then
// the request's), whole and streamed; a content filter's made-up refusal without content
// policy fallbacks goes on to the plain fallbacks rather than ending the request; with no
// fallback the request fails with the mock attempts only; a kind LiteLLM's switches do
// not make up is refused naming mock_failure.
func TestMockFailure(t *testing.T) {
	for _, c := range []struct {
		name   string
		groups map[string]ModelGroup
		kind   providers.ErrorKind
		want   string // "": every attempt fails
		tried  []string
	}{
		{"general: the plain fallback after every member", map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, Fallbacks: []string{"up/c"}, ContextWindowFallbacks: []string{"up/b"}}},
			providers.KindOverloaded, "up/c", []string{"up/a:overloaded", "up/a2:overloaded", "up/c:ok"}},
		{"context: the context window fallback, the other members left out", map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, Fallbacks: []string{"up/c"}, ContextWindowFallbacks: []string{"up/b"}}},
			providers.KindContextLength, "up/b", []string{"up/a:context_length", "up/b:ok"}},
		{"content policy: its fallback", map[string]ModelGroup{"G": {Models: []string{"up/a"}, Fallbacks: []string{"up/c"}, ContentPolicyFallbacks: []string{"up/b"}}},
			providers.KindContentFilter, "up/b", []string{"up/a:content_filter", "up/b:ok"}},
		{"content policy without its fallbacks: the plain one", map[string]ModelGroup{"G": {Models: []string{"up/a"}, Fallbacks: []string{"up/c"}}},
			providers.KindContentFilter, "up/c", []string{"up/a:content_filter", "up/c:ok"}},
		{"no fallback: it fails", map[string]ModelGroup{"G": {Models: []string{"up/a"}}},
			providers.KindOverloaded, "", []string{"up/a:overloaded"}},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(c.name, func(t *testing.T) {
				g, up, _ := faultGatewayWith(t, func(o *Options) { o.ModelGroups = c.groups })
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				req := chatRequest(t, `{"model":"G","messages":[{"role":"user","content":"hi"}]}`)
				req.MockFailure = c.kind
				var (
					got   string
					atts  []Attempt
					err   error
					resp  *Response
					allEr *AllFailedError
				)
				if stream {
					var st *ResponseStream
					if st, err = g.Stream(ctx, Scope{Owner: "k"}, req); err == nil {
						_, err = drain(t, st)
						resp = st.Response()
						st.Close()
					}
				} else {
					resp, err = g.Complete(ctx, Scope{Owner: "k"}, req)
				}
				switch {
				case err == nil:
					got, atts = resp.Provider+"/"+resp.Model, resp.Attempts
				case errors.As(err, &allEr):
					atts = allEr.Attempts
				default:
					t.Fatal(err)
				}
				if got != c.want {
					t.Errorf("answered by %q, want %q (err %v)", got, c.want, err)
				}
				tried := make([]string, len(atts))
				for i, a := range atts {
					tried[i] = a.Model + ":" + kindsOf(atts)[i]
					if a.Mock != (a.Outcome == OutcomeError) {
						t.Errorf("attempt %+v: mock %v", a, a.Mock)
					}
				}
				if !slices.Equal(tried, c.tried) {
					t.Errorf("attempts %v, want %v", tried, c.tried)
				}
				if n := up.callCount("a") + up.callCount("a2"); n != 0 {
					t.Errorf("the members were called %d times", n)
				}
			})
		}
	}
	g, _, _ := faultGatewayWith(t, nil)
	req := chatRequest(t, `{"model":"up/a","messages":[{"role":"user","content":"hi"}]}`)
	req.MockFailure = providers.KindRateLimited
	var ve *ValidationError
	if _, err := g.Complete(context.Background(), Scope{Owner: "k"}, req); !errors.As(err, &ve) || ve.Field != "mock_failure" {
		t.Errorf("MockFailure rate_limited: %v, want a validation error naming mock_failure", err)
	}
}

// TestMockTimeout: a MockFailure of KindTimeout waits, for each member asked, what a
// model that never answers would cost — the attempt timeout (shortened by the member's
// own Timeout) whole, the first-token timeout streamed — then fails it as a timeout
// without calling it, and the fallback answers.
func TestMockTimeout(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var (
			mu     sync.Mutex
			waited []time.Duration
		)
		g, up, _ := faultGatewayWith(t, func(o *Options) {
			o.AttemptTimeout, o.FirstTokenTimeout = 40*time.Second, 7*time.Second
			o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"up/a", "up/a2"}, Fallbacks: []string{"up/c"},
				Timeouts: []MemberTimeouts{{}, {Timeout: 3}}}}
			o.Sleep = func(ctx context.Context, d time.Duration) error {
				mu.Lock()
				waited = append(waited, d)
				mu.Unlock()
				return ctx.Err()
			}
		})
		req := chatRequest(t, `{"model":"G","messages":[{"role":"user","content":"hi"}]}`)
		req.MockFailure = providers.KindTimeout
		var resp *Response
		var err error
		if stream {
			var st *ResponseStream
			if st, err = g.Stream(context.Background(), Scope{Owner: "k"}, req); err == nil {
				_, err = drain(t, st)
				resp = st.Response()
				st.Close()
			}
		} else {
			resp, err = g.Complete(context.Background(), Scope{Owner: "k"}, req)
		}
		if err != nil || resp.Provider+"/"+resp.Model != "up/c" {
			t.Fatalf("stream %t: %v %+v, want up/c's answer", stream, err, resp)
		}
		want := []time.Duration{40 * time.Second, 3 * time.Second}
		if stream {
			want = []time.Duration{7 * time.Second, 3 * time.Second}
		}
		if !slices.Equal(waited, want) {
			t.Errorf("stream %t: waited %v, want %v", stream, waited, want)
		}
		if kinds := kindsOf(resp.Attempts); !slices.Equal(kinds, []string{"timeout", "timeout", "ok"}) || !resp.Attempts[0].Mock || !resp.Attempts[1].Mock {
			t.Errorf("stream %t: attempts %+v", stream, resp.Attempts)
		}
		if n := up.callCount("a") + up.callCount("a2"); n != 0 {
			t.Errorf("stream %t: the members were called %d times", stream, n)
		}
	}
}

// TestRefuseMocks: with Options.RefuseMocks, mock_response and the mock_testing_* switches
// are refused naming their field and nothing is called; without it they are taken.
func TestRefuseMocks(t *testing.T) {
	g, up, _ := faultGatewayWith(t, func(o *Options) {
		o.RefuseMocks = true
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"up/a"}, Fallbacks: []string{"up/c"}}}
	})
	text := "canned"
	for _, c := range []struct {
		set   func(*Request)
		field string
	}{
		{func(r *Request) { r.MockResponse = &text }, "mock_response"},
		{func(r *Request) { r.MockFailure = providers.KindOverloaded }, "mock_testing_fallbacks"},
		{func(r *Request) { r.MockFailure = providers.KindContextLength }, "mock_testing_context_fallbacks"},
		{func(r *Request) { r.MockFailure = providers.KindTimeout }, "mock_timeout"},
	} {
		req := chatRequest(t, `{"model":"G","messages":[{"role":"user","content":"hi"}]}`)
		c.set(req)
		_, err := g.Complete(context.Background(), Scope{Owner: "k"}, req)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: %v, want a ValidationError naming it", c.field, err)
		}
	}
	up.mu.Lock()
	if len(up.calls) != 0 {
		t.Errorf("upstream called: %v", up.calls)
	}
	up.mu.Unlock()
	open, _, _ := faultGatewayWith(t, nil)
	req := chatRequest(t, `{"model":"up/a","messages":[{"role":"user","content":"hi"}]}`)
	req.MockResponse = &text
	if resp, err := open.Complete(context.Background(), Scope{Owner: "k"}, req); err != nil || resp.Text() != "canned" {
		t.Errorf("without RefuseMocks: %v %v, want the mock answer", resp, err)
	}
}
