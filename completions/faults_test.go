package completions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
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
	name       string
	stream     bool
	primary    []behaviour
	backup     bool // add up/backup (answering properly) as the fallback model
	maxRetries *int
	// Expectations.
	wantFrom  string   // model that answered; "" when an error is expected
	wantErr   error    // ErrAllFailed or ErrStreamFailed
	wantKinds []string // attempt kinds in order; "ok" for the answering one
	wantWaits []time.Duration
	// wantSeen is what a streaming client saw before the error.
	wantSeen string
}

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
		{name: "no response (timeout)", primary: []behaviour{hang()}, backup: true, maxRetries: intp(0),
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
		{name: "stream: no response (timeout)", stream: true, primary: []behaviour{hang()}, backup: true, maxRetries: intp(0),
			wantFrom: "up/backup", wantKinds: []string{"timeout", "ok"}},
		{name: "stream: slow first token", stream: true, primary: []behaviour{slowFirstToken()}, backup: true, maxRetries: intp(0),
			wantFrom: "up/backup", wantKinds: []string{"timeout", "ok"}},
		{name: "stream: cut before the first token", stream: true, primary: []behaviour{cutAfter(p, 0), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"stream_broken", "ok"}},
		{name: "stream: malformed first chunk", stream: true, primary: []behaviour{malformedAfter(p, 0), answer(p)},
			wantFrom: "up/primary", wantKinds: []string{"stream_broken", "ok"}},
		{name: "stream: cut mid-answer", stream: true, primary: []behaviour{cutAfter(p, 2)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"stream_broken"}, wantSeen: "Paris is"},
		{name: "stream: stall mid-answer", stream: true, primary: []behaviour{stallAfter(p, 2)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"timeout"}, wantSeen: "Paris is"},
		{name: "stream: malformed chunk mid-answer", stream: true, primary: []behaviour{malformedAfter(p, 3)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"stream_broken"}, wantSeen: "Paris is the"},
		{name: "stream: missing [DONE]", stream: true, primary: []behaviour{noDone(p)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"stream_broken"}, wantSeen: p},
		{name: "stream: content filter mid-answer", stream: true, primary: []behaviour{filteredStream(p, 2)}, backup: true,
			wantErr: ErrStreamFailed, wantKinds: []string{"content_filter"}, wantSeen: "Paris is"},
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
	up := newScriptedUpstream(t)
	adapter := providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test", IdleTimeout: 5 * time.Second})
	sleeps := &sleepRecorder{}
	g, err := New(Options{
		Providers:         fakeRegistry{"up": adapter},
		Store:             memstore.New(),
		Sleep:             sleeps.sleep,
		Backoff:           Backoff{Initial: time.Millisecond, Max: 8 * time.Millisecond, Jitter: -1},
		AttemptTimeout:    150 * time.Millisecond,
		FirstTokenTimeout: 150 * time.Millisecond,
		StreamIdleTimeout: 150 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g, up, sleeps
}

// runFault sends one request through g and returns what the client got.
func runFault(t *testing.T, g *Gateway, c faultCase) (resp *Response, seen string, attempts []Attempt, err error) {
	t.Helper()
	req := userReq("What is the capital of France?", "up/primary")
	req.MaxRetries = c.maxRetries
	if c.backup {
		req.FallbackModels = []string{"up/backup"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
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
			g, up, sleeps := faultGateway(t)
			up.on("primary", c.primary...)
			up.on("backup", answer(backupAnswer))
			resp, seen, attempts, err := runFault(t, g, c)

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
		g, up, _ := faultGateway(t)
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
