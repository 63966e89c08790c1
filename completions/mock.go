package completions

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// LiteLLM's testing switches, as its router and completion() take them: mock_response
// answers without calling a model (Request.MockResponse), mock_testing_fallbacks (and its
// context-window and content-policy variants) fails the model group asked without calling
// it, so that its fallbacks are taken for real (Request.MockFailure), and mock_timeout
// does so after waiting as long as a silent model would keep it. None calls, bills,
// caches or counts against a model's circuit breaker.

// LiteLLMMocks are LiteLLM's testing switches in a request body (chat completions, text
// completions, Anthropic's Messages, the Responses API): mock_response (a string) answers
// with that text without calling the model (Request.MockResponse);
// mock_testing_fallbacks, mock_testing_context_fallbacks and
// mock_testing_content_policy_fallbacks (true) fail the model asked without calling it,
// so that its fallbacks for that failure are taken (Request.MockFailure); mock_timeout
// (true) fails it with a timeout after the wait a silent model would cost.
type LiteLLMMocks struct {
	MockResponse                      json.RawMessage `json:"mock_response,omitempty" jsonschema:"-"`
	MockTestingFallbacks              json.RawMessage `json:"mock_testing_fallbacks,omitempty" jsonschema:"-"`
	MockTestingContextFallbacks       json.RawMessage `json:"mock_testing_context_fallbacks,omitempty" jsonschema:"-"`
	MockTestingContentPolicyFallbacks json.RawMessage `json:"mock_testing_content_policy_fallbacks,omitempty" jsonschema:"-"`
	MockTimeout                       json.RawMessage `json:"mock_timeout,omitempty" jsonschema:"-"`
}

// mockFailureKinds are the failures Request.MockFailure may make up, with the LiteLLM
// field each stands for.
var mockFailureKinds = map[providers.ErrorKind]string{
	providers.KindOverloaded:    "mock_testing_fallbacks",
	providers.KindContextLength: "mock_testing_context_fallbacks",
	providers.KindContentFilter: "mock_testing_content_policy_fallbacks",
	providers.KindTimeout:       "mock_timeout",
}

// checkMock refuses req's testing switches when Options.RefuseMocks says so, naming the
// field, and a MockFailure of a kind LiteLLM's switches do not make up.
func (g *Gateway) checkMock(req *Request) error {
	if g.opts.RefuseMocks {
		field := mockFailureKinds[req.MockFailure]
		if req.MockResponse != nil {
			field = "mock_response"
		}
		if field != "" {
			return invalid(field, "this server does not take LiteLLM's testing switches (serve --refuse-mock-responses)")
		}
	}
	return req.checkMock()
}

// checkMock refuses a MockFailure of a kind LiteLLM's switches do not make up.
func (r *Request) checkMock() error {
	if r.MockFailure == providers.KindUnknown {
		return nil
	}
	if _, ok := mockFailureKinds[r.MockFailure]; !ok {
		return invalid("mock_failure", "must be overloaded, context_length, content_filter or timeout, got %s", r.MockFailure)
	}
	return nil
}

// mocks reports whether target i is one the request's MockFailure fails: one of the
// models the request named (a model group's members, the first of them only once the
// group's fallbacks by kind took over), not a fallback.
func (p *plan) mocks(i int) bool {
	return p.req.MockFailure != providers.KindUnknown && i < p.mockN
}

// mockFail records target i's made-up failure (no call: no rpm, slot, breaker, latency
// or bill) and lets run go on as after a real failure of that kind: the group's next
// member, or its fallbacks for that kind (switchFallbacks), then the others. A timeout
// first waits what a model that never answers would cost (a stream's first-token
// timeout, a whole call's attempt timeout, each shortened by the model's own), so
// that a request's deadline, a client's timeout and the fallbacks meet what a real silent
// model would bring; it returns ctx's error when ctx ends during that wait (the request's
// deadline, recorded as the attempt's timeout, or the caller gone).
func (g *Gateway) mockFail(ctx context.Context, p *plan, i int) error {
	t, kind := p.targets[i], p.req.MockFailure
	msg := fmt.Sprintf("mock failure for %s (%s): no call was made, to test its fallbacks", t.name, mockFailureKinds[kind])
	var waited time.Duration
	if kind == providers.KindTimeout {
		d := g.attemptTimeout(p, t.name)
		if p.streamed {
			d = g.firstTokenTimeout(p, t.name)
		}
		begin := g.opts.Now()
		err := g.opts.Sleep(ctx, d)
		waited = g.opts.Now().Sub(begin)
		if err != nil && !deadlineHit(ctx) {
			return err // the caller went away
		}
		msg = fmt.Sprintf("mock timeout for %s (mock_timeout): no call was made; waited %s, as a model that never answers would keep the request", t.name, waited.Round(time.Millisecond))
	}
	err := &providers.Error{Provider: t.provider, Model: t.model, Kind: kind, Message: msg}
	p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeError, Kind: kind.String(),
		Error: err.Error(), Err: err, Mock: true, LatencyMS: waited.Milliseconds()})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	g.log.DebugContext(ctx, "completions: mock failure", "model", t.name, "kind", kind.String())
	g.switchFallbacks(ctx, p, i, kind)
	if p.members > 0 {
		p.mockN = min(p.mockN, p.members) // the members left out by switchFallbacks
	}
	return nil
}

// mockAnswer makes p answer with its request's MockResponse, as the first of the models
// asked (primary[0]) would, without calling it: its target replays the text, whole or
// in pieces.
func (p *plan) mockAnswer(primary []target) {
	t := primary[0]
	for _, c := range primary {
		if c.unfit == "" {
			t = c
			break
		}
	}
	t.p = replayProvider{a: &cachedAnswer{Model: t.name, Text: *p.req.MockResponse, FinishReason: "stop"}, name: "mock"}
	p.targets, p.mocked = []target{t}, true
}

// replayed reports whether p's answer comes from no model: a cache hit or a mock_response.
func (p *plan) replayed() bool { return p.cache.hit != nil || p.mocked }
