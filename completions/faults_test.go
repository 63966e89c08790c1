package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

const (
	primaryAnswer = "Paris is the capital of France."
	backupAnswer  = "The capital of France is Paris."
)

// faultCase is one row of the fault table: how the upstream misbehaves and what the
// client must end with — the right answer or a clear error, never a silent truncation.
type faultCase struct {
	name    string
	stream  bool
	primary []behaviour
	backup  bool // add up/backup (answering properly) as the fallback model
	// prefill makes the fallback pf/backup, on a provider that continues a prefill, and
	// scripts it to continue the primary's answer (continueFrom); backupFails makes it
	// refuse instead.
	prefill, backupRefuses bool
	policy                 FaultPolicy
	maxRetries             *int
	// timed says the case needs the fault gateway's 150 ms attempt, first-token and idle
	// timeouts (a silent or stalled upstream is cut by them); the others run untimed, so
	// an upstream slowed by a loaded machine cannot time out and fail them.
	timed bool
	// Expectations.
	wantFrom  string   // model that answered; "" when an error is expected
	wantErr   error    // ErrAllFailed or ErrStreamFailed
	wantKinds []string // attempt kinds in order; "ok" for the answering one
	wantWaits []time.Duration
	// wantSeen is what a streaming client saw before the error.
	wantSeen string
	// wantText is the answer when it is not the answering model's own (a continuation).
	wantText string
	// wantFinish is the answer's finish reason, when checked (a stream cut by the
	// provider's output filter ends as an answer with finish_reason content_filter).
	wantFinish string
	// wantCalls are the upstream calls of the primary and the fallback, when checked.
	wantCalls *[2]int
}

func calls(primary, backup int) *[2]int { return &[2]int{primary, backup} }

// flap alternates between 503 and a proper answer on successive calls.
func flap() behaviour {
	var n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		if n.Add(1)%2 == 1 {
			status(503, "", "The server is overloaded")(w, r, body)
			return
		}
		answer(primaryAnswer)(w, r, body)
	}
}

func faultCases() []faultCase {
	p := primaryAnswer
	return []faultCase{
		{name: "429 with Retry-After: 2", primary: []behaviour{status(429, "rate_limit_exceeded", "Rate limit reached", "Retry-After", "2"), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"rate_limited", "ok"}, wantWaits: []time.Duration{2 * time.Second}},
		{name: "429 without Retry-After", primary: []behaviour{status(429, "rate_limit_exceeded", "Rate limit reached"), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"rate_limited", "ok"}, wantWaits: []time.Duration{time.Millisecond}},
		{name: "429 with Retry-After: 120 (over the bound)", primary: []behaviour{status(429, "rate_limit_exceeded", "Rate limit reached", "Retry-After", "120")}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"rate_limited", "ok"}},
		{name: "500 then answer", primary: []behaviour{status(500, "server_error", "Internal error"), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"overloaded", "ok"}, wantWaits: []time.Duration{time.Millisecond}},
		{name: "503 twice then answer", primary: []behaviour{status(503, "", "Service Unavailable"), status(503, "", "Service Unavailable"), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"overloaded", "overloaded", "ok"}, wantWaits: []time.Duration{time.Millisecond, 2 * time.Millisecond}},
		{name: "503 persistent, fallback answers", primary: []behaviour{status(503, "", "Service Unavailable")}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"overloaded", "overloaded", "overloaded", "ok"}},
		{name: "503 persistent, no fallback", primary: []behaviour{status(503, "", "Service Unavailable")}, maxRetries: intp(1),
			wantErr: ErrAllFailed, wantKinds: []string{"overloaded", "overloaded"}},
		{name: "connection reset", primary: []behaviour{reset(), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"connection", "ok"}},
		{name: "no response (timeout)", timed: true, primary: []behaviour{hang()}, backup: true, maxRetries: intp(0),
			wantFrom: "up/backup", wantKinds: []string{"timeout", "ok"}},
		{name: "context length exceeded", primary: []behaviour{status(400, "context_length_exceeded", "This model's maximum context length is 8192 tokens")}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"context_length", "ok"}},
		{name: "content filter (400), fallback not asked", primary: []behaviour{status(400, "content_filter", "The response was filtered due to the prompt triggering content management policy")}, backup: true,
			wantErr: ErrContentFiltered, wantKinds: []string{"content_filter"}},
		{name: "content policy violation (400), fallback not asked", primary: []behaviour{status(400, "content_policy_violation", "Your request was rejected as a result of our safety system.")}, backup: true,
			wantErr: ErrContentFiltered, wantKinds: []string{"content_filter"}},
		{name: "content filter (finish_reason), fallback not asked", primary: []behaviour{filteredStream(p, 0)}, backup: true,
			wantErr: ErrContentFiltered, wantKinds: []string{"content_filter"}},
		{name: "401 from upstream", primary: []behaviour{status(401, "invalid_api_key", "Incorrect API key provided")}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"auth", "ok"}},
		{name: "401 from upstream, no fallback", primary: []behaviour{status(401, "invalid_api_key", "Incorrect API key provided")},
			wantErr: ErrAllFailed, wantKinds: []string{"auth"}},

		// Streaming.
		{name: "stream: 429 then answer", stream: true, primary: []behaviour{status(429, "rate_limit_exceeded", "Rate limit reached", "Retry-After", "1"), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"rate_limited", "ok"}, wantWaits: []time.Duration{time.Second}},
		{name: "stream: 503 then answer", stream: true, primary: []behaviour{status(503, "", "Service Unavailable"), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"overloaded", "ok"}},
		{name: "stream: connection reset", stream: true, primary: []behaviour{reset(), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"connection", "ok"}},
		{name: "stream: no response (timeout)", timed: true, stream: true, primary: []behaviour{hang()}, backup: true, maxRetries: intp(0),
			wantFrom: "up/backup", wantKinds: []string{"timeout", "ok"}},
		{name: "stream: slow first token", timed: true, stream: true, primary: []behaviour{slowFirstToken()}, backup: true, maxRetries: intp(0),
			wantFrom: "up/backup", wantKinds: []string{"timeout", "ok"}},
		{name: "stream: cut before the first token", stream: true, primary: []behaviour{cutAfter(p, 0), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"stream_broken", "ok"}},
		{name: "stream: malformed first chunk", stream: true, primary: []behaviour{malformedAfter(p, 0), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"stream_broken", "ok"}},
		{name: "stream: cut mid-answer", stream: true, primary: []behaviour{cutAfter(p, 2)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"stream_broken"}, wantSeen: "Paris is"},
		{name: "stream: stall mid-answer", timed: true, stream: true, primary: []behaviour{stallAfter(p, 2)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"timeout"}, wantSeen: "Paris is"},
		{name: "stream: malformed chunk mid-answer", stream: true, primary: []behaviour{malformedAfter(p, 3)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"stream_broken"}, wantSeen: "Paris is the"},
		{name: "stream: clean end after finish reason and usage, no [DONE]", stream: true, primary: []behaviour{noDone(p)}, backup: true,
			wantFrom: "up/primary", wantKinds: []string{"ok"}, wantCalls: calls(1, 0)},
		{name: "stream: one undecodable event without text mid-answer", stream: true, primary: []behaviour{junkAfter(p, 3)}, backup: true,
			wantFrom: "up/primary", wantKinds: []string{"ok"}, wantCalls: calls(1, 0)},
		{name: "stream: body ends mid-answer without a finish reason", stream: true, primary: []behaviour{cutNoFinish(p, 2)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"stream_broken"}, wantSeen: "Paris is"},

		// Mid-stream continuation on a fallback that takes a prefill.
		{name: "stream: cut mid-answer, fallback continues", stream: true, primary: []behaviour{cutAfter(p, 2)}, prefill: true,
			wantFrom: "pf/backup", wantText: p, wantKinds: []string{"stream_broken", "ok"}, wantCalls: calls(1, 1)},
		{name: "stream: stall mid-answer, fallback continues", timed: true, stream: true, primary: []behaviour{stallAfter(p, 2)}, prefill: true,
			wantFrom: "pf/backup", wantText: p, wantKinds: []string{"timeout", "ok"}, wantCalls: calls(1, 1)},
		{name: "stream: malformed chunk mid-answer, fallback continues", stream: true, primary: []behaviour{malformedAfter(p, 3)}, prefill: true,
			wantFrom: "pf/backup", wantText: p, wantKinds: []string{"stream_broken", "ok"}, wantCalls: calls(1, 1)},
		{name: "stream: body ends without a finish reason, fallback continues", stream: true, primary: []behaviour{cutNoFinish(p, 4)}, prefill: true,
			wantFrom: "pf/backup", wantText: p, wantKinds: []string{"stream_broken", "ok"}, wantCalls: calls(1, 1)},
		{name: "stream: cut mid-answer, fallback refuses the prefill", stream: true, primary: []behaviour{cutAfter(p, 2)}, prefill: true, backupRefuses: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"stream_broken", "bad_request"}, wantSeen: "Paris is", wantCalls: calls(1, 1)},
		{name: "stream: content filter mid-answer, never continued", stream: true, primary: []behaviour{filteredStream(p, 2)}, prefill: true,
			wantFrom: "up/primary", wantText: "Paris is", wantFinish: "content_filter", wantKinds: []string{"ok"}, wantCalls: calls(1, 0)},

		// Time budgets, rate limits, content filters by choice, hedging.
		{name: "silent primary: no retry, fallback at once", timed: true, primary: []behaviour{hang()}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"timeout", "ok"}, wantCalls: calls(1, 1)},
		{name: "stream: silent primary: no retry, fallback at once", timed: true, stream: true, primary: []behaviour{hang()}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"timeout", "ok"}, wantCalls: calls(1, 1)},
		// Timed by its own policy: the 30 ms first-token limit holds for the fallback too.
		{name: "stream: first_token_timeout from the request", stream: true, primary: []behaviour{slowFirstToken()}, backup: true,
			policy: FaultPolicy{FirstTokenTimeout: ptr(0.03)}, wantFrom: "up/backup", wantKinds: []string{"timeout", "ok"}, wantCalls: calls(1, 1)},
		{name: "stream: request timeout, silent primary, no fallback", stream: true, primary: []behaviour{hang()},
			policy: FaultPolicy{Timeout: ptr(0.05)}, wantErr: ErrAllFailed, wantKinds: []string{"timeout"}, wantCalls: calls(1, 0)},
		{name: "429 without Retry-After, fallback: no burst on the same key", primary: []behaviour{status(429, "rate_limit_exceeded", "Rate limit reached"), answer(p)}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"rate_limited", "ok"}, wantCalls: calls(1, 1)},
		{name: "content filter, fallback opted in", primary: []behaviour{status(400, "content_policy_violation", "Your request was rejected as a result of our safety system.")}, backup: true,
			policy: FaultPolicy{FallbackOnContentFilter: true}, wantFrom: "up/backup", wantKinds: []string{"content_filter", "ok"}, wantCalls: calls(1, 1)},
		// The hedged cases do not race the clock: a primary silent until cancelled is only
		// ever beaten by the hedge (its first-token limit is far off), and a primary that
		// answers is never hedged (the hedge is far off).
		{name: "stream: slow first token, hedged after 20 ms", stream: true, primary: []behaviour{slowFirstToken()}, backup: true,
			policy:   FaultPolicy{HedgeAfter: ptr(0.02), FirstTokenTimeout: ptr(600.0), StreamIdleTimeout: ptr(600.0)},
			wantFrom: "up/backup", wantKinds: []string{"hedged", "ok"}, wantCalls: calls(1, 1)},
		{name: "stream: hedged, primary answers first", stream: true, primary: []behaviour{answer(p)}, backup: true,
			policy: FaultPolicy{HedgeAfter: ptr(600.0)}, wantFrom: "up/primary", wantKinds: []string{"ok"}, wantCalls: calls(1, 0)},
		{name: "stream: content filter mid-answer", stream: true, primary: []behaviour{filteredStream(p, 2)}, backup: true,
			wantFrom: "up/primary", wantText: "Paris is", wantFinish: "content_filter", wantKinds: []string{"ok"}, wantCalls: calls(1, 0)},
		{name: "stream: 401 from upstream", stream: true, primary: []behaviour{status(401, "invalid_api_key", "Incorrect API key provided")}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"auth", "ok"}},
		{name: "stream: context length exceeded", stream: true, primary: []behaviour{status(400, "context_length_exceeded", "maximum context length is 8192 tokens")}, backup: true,
			wantFrom: "up/backup", wantKinds: []string{"context_length", "ok"}},
	}
}

// faultGateway is a gateway over the real OpenAI adapter pointed at a scripted upstream,
// with millisecond timeouts and recorded (not slept) backoff waits.
func faultGateway(t *testing.T) (*Gateway, *scriptedUpstream, *sleepRecorder) {
	t.Helper()
	return faultGatewayWith(t, nil)
}

// faultGatewayWith is faultGateway with tweak applied to the gateway's options.
func faultGatewayWith(t *testing.T, tweak func(*Options)) (*Gateway, *scriptedUpstream, *sleepRecorder) {
	t.Helper()
	up := newScriptedUpstream(t)
	adapter := providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test", IdleTimeout: 5 * time.Second})
	prefiller := providers.NewOpenAI(providers.Config{Name: "pf", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test", IdleTimeout: 5 * time.Second,
		Prefill: providers.PrefillPrefix})
	sleeps := &sleepRecorder{}
	opts := Options{
		Providers:         fakeRegistry{"up": adapter, "pf": prefiller},
		Store:             memstore.New(),
		Sleep:             sleeps.sleep,
		Backoff:           Backoff{Initial: time.Millisecond, Max: 8 * time.Millisecond, Jitter: -1},
		AttemptTimeout:    150 * time.Millisecond,
		FirstTokenTimeout: 150 * time.Millisecond,
		StreamIdleTimeout: 150 * time.Millisecond,
	}
	if tweak != nil {
		tweak(&opts)
	}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g, up, sleeps
}

// untimed lifts a fault gateway's attempt, first-token and idle timeouts far past a
// loaded machine's pauses, for a test whose upstreams end by its own doing, not a timeout.
func untimed(o *Options) {
	o.AttemptTimeout, o.FirstTokenTimeout, o.StreamIdleTimeout = time.Minute, time.Minute, time.Minute
}

// runFault sends one request through g and returns what the client got.
func runFault(t *testing.T, g *Gateway, c faultCase) (resp *Response, seen string, attempts []Attempt, err error) {
	t.Helper()
	req := userReq("What is the capital of France?", "up/primary")
	req.MaxRetries = c.maxRetries
	req.FaultPolicy = c.policy
	if c.backup {
		req.FallbackModels = []string{"up/backup"}
	}
	if c.prefill {
		req.FallbackModels = []string{"pf/backup"}
	}
	// Far past untimed's minute, so that a retry weighed against the request's deadline
	// still fits one of its calls.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if !c.stream {
		resp, err = g.Complete(ctx, Scope{Owner: "k"}, req)
		if resp != nil {
			attempts = resp.Attempts
		}
		var af *AllFailedError
		var cf *ContentFilterError
		if errors.As(err, &af) {
			attempts = af.Attempts
		} else if errors.As(err, &cf) {
			attempts = cf.Attempts
		}
		return resp, "", attempts, err
	}
	st, err := g.Stream(ctx, Scope{Owner: "k"}, req)
	if err != nil {
		var af *AllFailedError
		var cf *ContentFilterError
		if errors.As(err, &af) {
			attempts = af.Attempts
		} else if errors.As(err, &cf) {
			attempts = cf.Attempts
		}
		return nil, "", attempts, err
	}
	frags, err := drain(t, st)
	return st.Response(), join(frags), st.p.attempts, err
}

func kindsOf(as []Attempt) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Kind
		if a.Outcome == OutcomeOK {
			out[i] = "ok"
		}
	}
	return out
}

func TestFaults(t *testing.T) {
	var table []string
	for _, c := range faultCases() {
		t.Run(c.name, func(t *testing.T) {
			tweak := untimed
			if c.timed {
				tweak = nil
			}
			g, up, sleeps := faultGatewayWith(t, tweak)
			up.on("primary", c.primary...)
			up.on("backup", answer(backupAnswer))
			if c.prefill {
				up.on("backup", continueFrom(primaryAnswer))
			}
			if c.backupRefuses {
				up.on("backup", status(400, "invalid_request_error", "assistant prefill is not supported"))
			}
			resp, seen, attempts, err := runFault(t, g, c)
			if c.wantCalls != nil {
				if got := [2]int{up.callCount("primary"), up.callCount("backup")}; got != *c.wantCalls {
					t.Errorf("upstream calls (primary, fallback) = %v, want %v", got, *c.wantCalls)
				}
			}

			if got := kindsOf(attempts); !slices.Equal(got, c.wantKinds) {
				t.Errorf("attempt kinds = %v, want %v", got, c.wantKinds)
			}
			if c.wantWaits != nil && !slices.Equal(sleeps.all(), c.wantWaits) {
				t.Errorf("backoff waits = %v, want %v", sleeps.all(), c.wantWaits)
			}
			var outcome string
			if c.wantErr == nil {
				if err != nil {
					t.Fatalf("err = %v, want an answer from %s", err, c.wantFrom)
				}
				want := map[string]string{"up/primary": primaryAnswer, "up/backup": backupAnswer}[c.wantFrom]
				if c.wantText != "" {
					want = c.wantText
				}
				if resp.Provider+"/"+resp.Model != c.wantFrom || resp.Text() != want {
					t.Fatalf("answer %q from %s/%s, want %q from %s", resp.Text(), resp.Provider, resp.Model, want, c.wantFrom)
				}
				if c.stream && seen != want {
					t.Fatalf("client saw %q, want exactly %q (no fragments of failed attempts)", seen, want)
				}
				if resp.Usage.CompletionTokens == 0 {
					t.Errorf("usage lost: %+v", resp.Usage)
				}
				outcome = fmt.Sprintf("complete answer from `%s`", c.wantFrom)
				if c.wantFinish != "" {
					if resp.FinishReason != c.wantFinish {
						t.Errorf("finish reason %q, want %q", resp.FinishReason, c.wantFinish)
					}
					outcome = fmt.Sprintf("the %d fragments sent, then finish_reason `%s`, usage and `[DONE]`; fallback not asked", len(words(c.wantText)), c.wantFinish)
				}
			} else {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				if resp != nil {
					t.Fatalf("a failed request produced a final response %+v", resp)
				}
				if seen != c.wantSeen {
					t.Fatalf("client saw %q, want %q", seen, c.wantSeen)
				}
				if errors.Is(err, ErrContentFiltered) {
					outcome = "content filter reported (OpenAI surface: 200, finish_reason content_filter); fallback not asked"
				} else if errors.Is(err, ErrAllFailed) {
					outcome = "clear error: 502 with every attempt"
				} else {
					outcome = fmt.Sprintf("explicit `event: error` after %d fragments, no `[DONE]`", len(words(c.wantSeen)))
				}
				if c.backup && up.callCount("backup") != 0 {
					t.Errorf("fell over to the backup after the first token")
				}
				if c.stream && c.wantSeen != "" && errors.Is(err, ErrStreamFailed) && c.prefill && !c.backupRefuses && up.callCount("backup") != 0 {
					t.Errorf("continued after a failure that must not be continued")
				}
			}
			waits := ""
			if ws := sleeps.all(); len(ws) > 0 {
				waits = fmt.Sprintf(" (waited %v)", ws)
			}
			table = append(table, fmt.Sprintf("| %s | %s | %s%s |", c.name, strings.Join(kindsOf(attempts), " → "), outcome, waits))
		})
	}
	t.Logf("fault table:\n| Scenario | Attempts | Outcome |\n|---|---|---|\n%s", strings.Join(table, "\n"))
}

// TestFlappingPrimary sends a series of requests to a primary that fails every other call:
// every request must end with the right answer, each after at most one retry.
func TestFlappingPrimary(t *testing.T) {
	for _, stream := range []bool{false, true} {
		g, up, _ := faultGatewayWith(t, untimed)
		up.on("primary", flap())
		up.on("backup", answer(backupAnswer))
		retries := 0
		for i := range 8 {
			c := faultCase{stream: stream, backup: true}
			resp, seen, attempts, err := runFault(t, g, c)
			if err != nil {
				t.Fatalf("stream=%v request %d: %v", stream, i, err)
			}
			if resp.Text() != primaryAnswer || (stream && seen != primaryAnswer) {
				t.Fatalf("stream=%v request %d: answer %q seen %q", stream, i, resp.Text(), seen)
			}
			retries += len(attempts) - 1
		}
		if retries != 8 || up.callCount("backup") != 0 {
			t.Fatalf("stream=%v: %d retries (want 8, one per request), backup called %d times", stream, retries, up.callCount("backup"))
		}
	}
}

// TestContinuationReport checks what a continued answer reports: which model continued
// from which character after what, the attempts' usage (the broken one's estimated), and
// a usage that adds both up.
func TestContinuationReport(t *testing.T) {
	g, up, _ := faultGatewayWith(t, untimed)
	up.on("primary", cutAfter(primaryAnswer, 2))
	up.on("backup", continueFrom(primaryAnswer))
	resp, seen, attempts, err := runFault(t, g, faultCase{stream: true, prefill: true})
	if err != nil || seen != primaryAnswer {
		t.Fatalf("err %v, seen %q", err, seen)
	}
	want := Continuation{Model: "pf/backup", FromChar: len("Paris is"), After: "stream_broken"}
	if resp.Continued == nil || *resp.Continued != want {
		t.Fatalf("continued = %+v, want %+v", resp.Continued, want)
	}
	if len(attempts) != 2 || attempts[1].ContinuedFrom == nil || *attempts[1].ContinuedFrom != want.FromChar {
		t.Fatalf("attempts %+v", attempts)
	}
	broken, cont := attempts[0].Usage, attempts[1].Usage
	if broken == nil || !attempts[0].Estimated || broken.CompletionTokens != estimateTokens(len("Paris is")) || cont == nil || attempts[1].Estimated {
		t.Fatalf("attempt usage %+v (estimated %v), %+v", broken, attempts[0].Estimated, cont)
	}
	if cont.PromptTokens != 19 || cont.CompletionTokens != 4 {
		t.Fatalf("continuation usage %+v, want the upstream's 19 / 4", cont)
	}
	if resp.Usage.PromptTokens != broken.PromptTokens+cont.PromptTokens || resp.Usage.CompletionTokens != broken.CompletionTokens+cont.CompletionTokens {
		t.Fatalf("usage %+v is not the sum of %+v and %+v", resp.Usage, broken, cont)
	}
}

// TestContinuationFragmentsNameTheirModel: on the native stream, fragments written by the
// model that continued a broken answer carry its provider and model, not the first one's.
func TestContinuationFragmentsNameTheirModel(t *testing.T) {
	g, up, _ := faultGatewayWith(t, untimed)
	up.on("primary", cutAfter(primaryAnswer, 2))
	up.on("backup", continueFrom(primaryAnswer))
	var labels []string
	text := ""
	for _, data := range continuedStreamEvents(t, g, WriteStream) {
		var c Chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if c.Type == EventText {
			labels = append(labels, c.Provider+"/"+c.Model)
			text += c.Text
		}
	}
	if text != primaryAnswer || len(labels) < 3 || labels[0] != "up/primary" || labels[len(labels)-1] != "pf/backup" {
		t.Fatalf("text %q, fragment labels %v", text, labels)
	}
}

// continuedStreamEvents streams a request whose primary breaks mid-answer and whose
// fallback continues it, writes it with write, and returns the events' data ([DONE] left
// out).
func continuedStreamEvents(t *testing.T, g *Gateway, write func(http.ResponseWriter, *ResponseStream) error) []string {
	t.Helper()
	req := userReq("What is the capital of France?", "up/primary")
	req.FallbackModels = []string{"pf/backup"}
	st, err := g.Stream(context.Background(), Scope{Owner: "k"}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := write(rec, st); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && data != "[DONE]" {
			out = append(out, data)
		}
	}
	return out
}

// TestOpenAIContinuationChunksNameTheirModel: the same on the OpenAI-compatible stream:
// text chunks (encoded from a template after the first) and the finish chunk written after
// the continuation name the model that continued.
func TestOpenAIContinuationChunksNameTheirModel(t *testing.T) {
	g, up, _ := faultGatewayWith(t, untimed)
	up.on("primary", cutAfter(primaryAnswer, 2))
	up.on("backup", continueFrom(primaryAnswer))
	openAI := func(w http.ResponseWriter, st *ResponseStream) error { return WriteOpenAIStream(w, st, true) }
	var labels []string
	text := ""
	for _, data := range continuedStreamEvents(t, g, openAI) {
		var c OpenAIChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		labels = append(labels, c.Model)
		if len(c.Choices) > 0 {
			text += c.Choices[0].Delta.Content
		}
	}
	if text != primaryAnswer || len(labels) < 4 || labels[0] != "up/primary" || labels[len(labels)-1] != "pf/backup" || labels[len(labels)-2] != "pf/backup" {
		t.Fatalf("text %q, chunk models %v", text, labels)
	}
}

// TestHedgeReport: the hedged start that lost is in the attempts, cancelled, with its
// (estimated) prompt usage added to the answer's.
func TestHedgeReport(t *testing.T) {
	// Nothing here waits for a timeout: the silent primary is released by the hedge's
	// win, not by its first-token timeout, so the timeouts are far past any scheduling
	// pause of a loaded machine (the backup's first token late past 150 ms timed the
	// primary out first: a failure, not a lost hedge).
	g, up, _ := faultGatewayWith(t, untimed)
	up.on("primary", slowFirstToken())
	up.on("backup", slowAnswer(backupAnswer, 5*time.Millisecond)) // the winner keeps streaming after the race
	resp, seen, attempts, err := runFault(t, g, faultCase{stream: true, backup: true, policy: FaultPolicy{HedgeAfter: ptr(0.02)}})
	if err != nil || seen != backupAnswer {
		t.Fatalf("err %v, seen %q", err, seen)
	}
	if len(attempts) != 2 || attempts[0].Outcome != OutcomeCancelled || attempts[0].Usage == nil || !attempts[0].Estimated || attempts[0].Usage.PromptTokens != 11 {
		t.Fatalf("attempts %+v", attempts)
	}
	if resp.Usage.PromptTokens != 22 {
		t.Fatalf("usage %+v, want both prompts (11 + 11)", resp.Usage)
	}
}

// TestHedgeNonStreamed: a non-streamed request with hedge_after is hedged too (streamed
// internally): the silent primary is cancelled, the backup's whole answer returned.
func TestHedgeNonStreamed(t *testing.T) {
	g, up, _ := faultGatewayWith(t, untimed) // as TestHedgeReport
	up.on("primary", slowFirstToken())
	up.on("backup", answer(backupAnswer))
	resp, _, attempts, err := runFault(t, g, faultCase{backup: true, policy: FaultPolicy{HedgeAfter: ptr(0.02)}})
	if err != nil || resp.Text() != backupAnswer || resp.Model != "backup" {
		t.Fatalf("err %v, resp %+v", err, resp)
	}
	if len(attempts) != 2 || attempts[0].Outcome != OutcomeCancelled || attempts[0].Kind != "hedged" || attempts[1].Outcome != OutcomeOK {
		t.Fatalf("attempts %+v", attempts)
	}
	if resp.Usage.PromptTokens != 22 {
		t.Fatalf("usage %+v, want both prompts (11 + 11)", resp.Usage)
	}
}

// TestSkippedEventCounted: the undecodable event skipped is counted in the attempt.
func TestSkippedEventCounted(t *testing.T) {
	g, up, _ := faultGatewayWith(t, untimed)
	up.on("primary", junkAfter(primaryAnswer, 2))
	_, seen, attempts, err := runFault(t, g, faultCase{stream: true})
	if err != nil || seen != primaryAnswer || len(attempts) != 1 || attempts[0].SkippedEvents != 1 {
		t.Fatalf("err %v, seen %q, attempts %+v", err, seen, attempts)
	}
}

// TestCircuitBreaker: a model that keeps failing is skipped for the cool-down after
// Failures consecutive failures (its calls stop growing), then probed by one request; the
// probe's success closes the breaker.
func TestCircuitBreaker(t *testing.T) {
	up := newScriptedUpstream(t)
	adapter := providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test"})
	var logs strings.Builder
	g, err := New(Options{Providers: fakeRegistry{"up": adapter}, Sleep: (&sleepRecorder{}).sleep,
		Backoff: Backoff{Initial: time.Millisecond, Jitter: -1}, Breaker: BreakerOptions{Failures: 3, Cooldown: 200 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	up.on("primary", status(503, "", "Service Unavailable"))
	up.on("backup", answer(backupAnswer))
	ask := func() *Response {
		req := userReq("hi", "up/primary")
		req.FallbackModels = []string{"up/backup"}
		req.MaxRetries = intp(0)
		resp, err := g.Complete(context.Background(), Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for range 3 {
		ask()
	}
	if up.callCount("primary") != 3 || g.BreakerStates()["up/primary"] != BreakerOpen {
		t.Fatalf("primary calls %d, breaker %v", up.callCount("primary"), g.BreakerStates())
	}
	for range 5 {
		resp := ask()
		if resp.Attempts[0].Outcome != OutcomeSkipped || resp.Attempts[0].Kind != "circuit_open" {
			t.Fatalf("attempts %+v", resp.Attempts)
		}
	}
	if up.callCount("primary") != 3 {
		t.Fatalf("an open breaker let %d calls through", up.callCount("primary")-3)
	}
	time.Sleep(260 * time.Millisecond) // the cool-down (±20%) is over
	// Cooled down, it reads half-open before any call: the next call is the probe.
	if st := g.BreakerStates()["up/primary"]; st != BreakerHalfOpen {
		t.Fatalf("after the cool-down the breaker reads %q, want half_open", st)
	}
	up.on("primary", answer(primaryAnswer))
	if resp := ask(); resp.Provider+"/"+resp.Model != "up/primary" || up.callCount("primary") != 1 {
		t.Fatalf("the probe went to %s/%s", resp.Provider, resp.Model)
	}
	if len(g.BreakerStates()) != 0 {
		t.Fatalf("breaker not closed after a good probe: %v", g.BreakerStates())
	}
	for _, s := range []string{"circuit breaker open", "circuit breaker half_open", "circuit breaker closed"} {
		if !strings.Contains(logs.String(), s) {
			t.Errorf("no %q log line in:\n%s", s, logs.String())
		}
	}
}

// TestBreakerNeverBlocksTheLastModel: with every model's breaker open, a request still
// tries one (as a probe) instead of failing without a call.
func TestBreakerNeverBlocksTheLastModel(t *testing.T) {
	up := newScriptedUpstream(t)
	adapter := providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test"})
	g, _ := New(Options{Providers: fakeRegistry{"up": adapter}, Sleep: (&sleepRecorder{}).sleep,
		Breaker: BreakerOptions{Failures: 1, Cooldown: time.Hour}})
	up.on("primary", status(503, "", "down"))
	req := userReq("hi", "up/primary")
	req.MaxRetries = intp(0)
	for i := range 3 {
		g.Complete(context.Background(), Scope{}, req)
		if up.callCount("primary") != i+1 {
			t.Fatalf("request %d made no call", i)
		}
	}
}

// TestFanOutBounds: model lists are bounded, and so are the upstream calls of one request.
func TestFanOutBounds(t *testing.T) {
	g, up, _ := faultGatewayWith(t, untimed)
	many := make([]string, MaxModels+1)
	for i := range many {
		many[i] = fmt.Sprintf("up/m%d", i)
	}
	for _, field := range []string{"models", "fallback_models"} {
		req := userReq("hi", "up/primary")
		if field == "models" {
			req.Models = many
		} else {
			req.FallbackModels = many
		}
		var ve *ValidationError
		if _, err := g.Complete(context.Background(), Scope{}, req); !errors.As(err, &ve) || ve.Field != field {
			t.Fatalf("%s: err %v", field, err)
		}
	}
	for i := range MaxModels {
		up.on(fmt.Sprintf("m%d", i), status(503, "", "down"))
	}
	req := userReq("hi", many[:MaxModels]...)
	req.MaxRetries = intp(MaxRetriesLimit)
	_, err := g.Complete(context.Background(), Scope{}, req)
	total := 0
	for i := range MaxModels {
		total += up.callCount(fmt.Sprintf("m%d", i))
	}
	if !errors.Is(err, ErrAllFailed) || total != MaxUpstreamAttempts {
		t.Fatalf("err %v, %d upstream calls (bound %d)", err, total, MaxUpstreamAttempts)
	}
}

// TestRetriesLeaveCallsForFallbacks: retries of failing models never take the calls the
// untried models need, so a healthy fallback after many failing models still answers.
func TestRetriesLeaveCallsForFallbacks(t *testing.T) {
	g, up, _ := faultGatewayWith(t, untimed)
	var models []string
	for i := range 4 {
		up.on(fmt.Sprintf("m%d", i), status(500, "", "down"))
		models = append(models, fmt.Sprintf("up/m%d", i))
	}
	up.on("backup", answer("fine"))
	req := userReq("hi", models...)
	req.FallbackModels = []string{"up/backup"}
	req.MaxRetries = intp(2) // 4 models × 3 calls would use every call before the fallback
	resp, err := g.Complete(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatalf("err %v", err)
	}
	if resp.Model != "backup" || up.callCount("backup") != 1 {
		t.Fatalf("answered by %s/%s, backup called %d times", resp.Provider, resp.Model, up.callCount("backup"))
	}
	total := up.callCount("backup")
	for i := range 4 {
		n := up.callCount(fmt.Sprintf("m%d", i))
		if n < 1 {
			t.Errorf("m%d never called", i)
		}
		total += n
	}
	if total > MaxUpstreamAttempts {
		t.Errorf("%d upstream calls, bound %d", total, MaxUpstreamAttempts)
	}
}

// A stream blocked by the provider's filter after some text ends as an answer with
// finish_reason content_filter (the text so far kept), billed what the provider reported
// for it (carried on its error), not an estimate.
func TestStreamBlockedMidwayIsBilledAsReported(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one two three four", breakAt: 2, breakErr: &providers.Error{Provider: "a", Model: "m",
		Kind: providers.KindContentFilter, Message: "recitation", Usage: &providers.Usage{PromptTokens: 9, CompletionTokens: 261}}})
	st, err := h.g.Stream(context.Background(), Scope{}, userReq("hi", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, st); err != nil {
		t.Fatalf("err = %v", err)
	}
	if r := st.Response(); r == nil || r.FinishReason != "content_filter" || r.Text() == "" {
		t.Fatalf("final response %+v: want the text so far and finish_reason content_filter", r)
	}
	st.Close()
	entries := h.ledger.all()
	if len(entries) != 1 || entries[0].Estimated || entries[0].Usage.PromptTokens != 9 || entries[0].Usage.CompletionTokens != 261 {
		t.Fatalf("ledger %+v: want the reported 9 in / 261 out", entries)
	}
}

// A request's own timeout longer than the gateway's bound on one non-streamed call lifts
// that bound: one slow answer may take it.
func TestRequestTimeoutLiftsTheAttemptBound(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.AttemptTimeout = 100 * time.Millisecond })
	h.a.on("slow", step{text: "late but right", delay: 250 * time.Millisecond})
	r := userReq("hi", "a/slow")
	r.MaxRetries = intp(0)
	if _, err := h.g.Complete(context.Background(), Scope{}, r); providers.KindOf(errors.Unwrap(err)) != providers.KindTimeout && !errors.Is(err, ErrAllFailed) {
		t.Fatalf("without a timeout: err = %v, want the attempt bound to cut it", err)
	}
	r.FaultPolicy.Timeout = ptr(2.0)
	resp, err := h.g.Complete(context.Background(), Scope{}, r)
	if err != nil || resp.Text() != "late but right" {
		t.Fatalf("with timeout 2: %v, %v", resp, err)
	}
}

// One caller's first-token timeout, shorter than the gateway's, does not open the breaker
// every caller shares.
func TestTightTimeoutsDoNotTripTheBreaker(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Breaker = BreakerOptions{Failures: 2, Cooldown: time.Minute} })
	h.a.on("m", step{text: "slow to start", delay: 200 * time.Millisecond})
	for range 3 {
		r := userReq("hi", "a/m")
		r.MaxRetries = intp(0)
		r.FaultPolicy.FirstTokenTimeout = ptr(0.02)
		st, err := h.g.Stream(context.Background(), Scope{}, r)
		if err == nil {
			drain(t, st)
			st.Close()
		}
	}
	if states := h.g.BreakerStates(); len(states) != 0 {
		t.Fatalf("breakers %v after timeouts under the caller's own limit", states)
	}
}

// A model whose breaker is open but that is tried anyway as the only model, failing again,
// keeps its breaker open without an info line per request: only real changes are logged
// at info.
func TestBreakerStaysOpenQuietly(t *testing.T) {
	var logs syncLog
	h := newHarness(t, func(o *Options) {
		o.Breaker = BreakerOptions{Failures: 2, Cooldown: time.Minute}
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	h.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	for range 6 {
		r := userReq("hi", "a/m")
		r.MaxRetries = intp(0)
		h.g.Complete(context.Background(), Scope{}, r)
	}
	if n := strings.Count(logs.String(), "circuit breaker open"); n != 1 {
		t.Errorf("%d info lines about the breaker opening, want 1:\n%s", n, logs.String())
	}
}

// syncLog is a log sink safe for concurrent writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
