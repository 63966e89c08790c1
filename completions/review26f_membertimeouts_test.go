package completions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// A retry is weighed against each remaining model's own first-token bound (its member
// timeouts), not the gateway's: with a 3 s request deadline and a 2 s first-token timeout
// two models need 4 s, so a failed first model is not retried; members whose timeout is
// 0.1 s (non-streamed) or whose stream_timeout is (streamed) need 0.2 s, and it is.
// Counted at the upstream.
func TestRetryWaitKeepsTheMembersOwnFirstTokenBound(t *testing.T) {
	for _, c := range []struct {
		name     string
		stream   bool
		timeouts []MemberTimeouts
		calls    int
	}{
		{"gateway's bound: no retry", false, nil, 1},
		{"non-streamed, member timeout", false, []MemberTimeouts{{Timeout: 0.1}, {Timeout: 0.1}}, 2},
		{"streamed, member stream_timeout", true, []MemberTimeouts{{StreamTimeout: 0.1}, {StreamTimeout: 0.1}}, 2},
		{"streamed, timeout alone is the first chunk's", true, []MemberTimeouts{{Timeout: 0.1}, {Timeout: 0.1}}, 2},
		// A non-streamed call is not bounded by stream_timeout: the gateway's bound holds.
		{"non-streamed, stream_timeout only", false, []MemberTimeouts{{StreamTimeout: 0.1}, {StreamTimeout: 0.1}}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				o.ModelGroups = map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Timeouts: c.timeouts}}
			})
			h.a.on("m1", step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{text: "retried"})
			req := userReq("hi", "g")
			req.ephemeral, req.MaxRetries = true, intp(1)
			req.FaultPolicy.Timeout = ptr(3.0)
			if c.stream {
				req.Stream = true
				st, err := h.g.Stream(context.Background(), Scope{}, req)
				if err != nil {
					t.Fatal(err)
				}
				for {
					if _, err := st.Recv(); err != nil {
						break
					}
				}
				st.Close()
			} else if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
				t.Fatal(err)
			}
			if n := h.a.callCount("m1"); n != c.calls {
				t.Fatalf("a/m1 had %d calls; want %d", n, c.calls)
			}
		})
	}
}

// A non-streamed request served through a stream (hedged: completeHedged) is held to its
// member's timeout for the whole call, not only for the first chunk: a model that sends a
// fragment and then stalls is cut at its 50 ms timeout (not the 5 s idle timeout between
// fragments), recorded as a timeout saying so.
func TestCollectedStreamHeldToTheMembersWholeCallTimeout(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Timeouts: []MemberTimeouts{{Timeout: 0.05}, {}}}}
		o.StreamIdleTimeout = 5 * time.Second
	})
	h.a.on("m1", step{text: "one two three four", stallAt: 1, stall: true})
	h.b.on("m2", step{text: "from m2"})
	req := userReq("hi", "g")
	req.ephemeral = true
	req.FaultPolicy.HedgeAfter = ptr(60.0) // served through a stream; no second start meanwhile
	resp, err := h.g.Complete(context.Background(), Scope{}, req)
	var attempts []Attempt
	var fe *AllFailedError
	switch {
	case err == nil:
		attempts = resp.Attempts
	case errors.As(err, &fe):
		attempts = fe.Attempts
	default:
		t.Fatal(err)
	}
	if len(attempts) == 0 || attempts[0].Model != "a/m1" || attempts[0].Kind != providers.KindTimeout.String() ||
		!strings.Contains(attempts[0].Error, "no complete response within 50ms") {
		t.Fatalf("attempts %+v; want a/m1 cut at its whole-call timeout (50ms)", attempts)
	}
}

// Speech waits for its first audio as long as the member's own timeout allows when that
// is shorter than the gateway's attempt timeout: a member that sends nothing is cut at
// its 50 ms (not the gateway's 3 s) and the group's next member answers.
func TestSpeechHeldToTheMembersTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model, Input string }
		json.NewDecoder(r.Body).Decode(&req)
		if req.Model == "tts-1" {
			<-r.Context().Done() // never a byte of audio
			return
		}
		w.Header().Set("Content-Type", "audio/mpeg")
		io.WriteString(w, "AUDIO:"+req.Input)
	}))
	defer srv.Close()
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": srv.URL + "/v1"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices:         providers.DefaultCatalog(),
		ModelGroups:    map[string]ModelGroup{"voice": {Models: []string{"openai/tts-1", "openai/tts-1-hd"}, Timeouts: []MemberTimeouts{{Timeout: 0.05}, {}}}},
		AttemptTimeout: 3 * time.Second,
		Sleep:          func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	speakAfterATimeout(t, g, "openai/tts-1", "openai/tts-1-hd")
}

// speakAfterATimeout asks g's group "voice" to say "Hi" and wants the whole audio of its
// second member, answered after first was cut at its own 50ms first-audio timeout.
func speakAfterATimeout(t *testing.T, g *Gateway, first, second string) {
	t.Helper()
	s, err := g.Speak(context.Background(), Scope{}, &SpeechRequest{Model: "voice", Input: "Hi", Voice: "alloy"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b, err := io.ReadAll(s); err != nil || string(b) != "AUDIO:Hi" {
		t.Fatalf("audio %q, %v; want %s's whole audio after %s's timeout", b, err, second, first)
	}
	if len(s.Attempts) != 2 || s.Attempts[0].Model != first || s.Attempts[0].Kind != providers.KindTimeout.String() ||
		!strings.Contains(s.Attempts[0].Error, "no audio within 50ms") || s.Attempts[1].Model != second {
		t.Fatalf("attempts %+v; want %s cut at its own 50ms, then %s", s.Attempts, first, second)
	}
}
