package completions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// inputSeer is a custom guardrail recording what it was given.
type inputSeer struct{ seen []GuardrailInput }

func (s *inputSeer) Check(_ context.Context, in GuardrailInput) (GuardrailVerdict, error) {
	s.seen = append(s.seen, in)
	return GuardrailVerdict{}, nil
}

// spokenUpstream answers every chat aloud with transcript, content null, and counts calls.
func spokenUpstream(t *testing.T, transcript string) (*providers.OpenAI, *atomic.Int32) {
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","model":"gpt-4o-audio-preview","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":null,"audio":{"id":"audio_1","data":"%s","expires_at":1767225600,"transcript":%q}}}],
			"usage":{"prompt_tokens":10,"completion_tokens":60,"total_tokens":70,"completion_tokens_details":{"audio_tokens":50}}}`, wavData, transcript)
	}))
	t.Cleanup(up.Close)
	return providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()}), &calls
}

const spokenRequest = `{"model":"openai/gpt-4o-audio-preview","modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"messages":[{"role":"user","content":"Say it."}]}`

// TestGuardrailChecksSpokenAnswer: a post_call guardrail checks a spoken answer's
// transcript (its content is null): a banned phrase said aloud blocks the answer as it
// would written; a clean transcript passes.
func TestGuardrailChecksSpokenAnswer(t *testing.T) {
	for _, tc := range []struct {
		transcript string
		blocked    bool
	}{{"The code name is Project X.", true}, {"Hello there.", false}} {
		oai, _ := spokenUpstream(t, tc.transcript)
		h := newHarness(t, func(o *Options) {
			o.Providers = fakeRegistry{"openai": oai}
			o.Guardrails = []GuardrailConfig{{Name: "no-x", Kind: GuardrailBannedWords, Mode: GuardrailPostCall, DefaultOn: true, Words: []string{"Project X"}}}
		})
		resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, spokenRequest))
		var ge *GuardrailError
		if tc.blocked != errors.As(err, &ge) || tc.blocked && (ge.Guardrail != "no-x" || ge.Mode != GuardrailPostCall) {
			t.Fatalf("transcript %q: err %v, want blocked %v by no-x (post_call)", tc.transcript, err, tc.blocked)
		}
		if !tc.blocked && (err != nil || resp.Audio == nil || resp.Audio.Transcript != tc.transcript) {
			t.Fatalf("transcript %q: %v %+v", tc.transcript, err, resp)
		}
	}
}

// TestGuardrailInputAudioUnchecked: pre_call guardrails read the text; a recording passes
// unchecked (on_unchecked allow, the default), the guardrail told which parts it did not
// see (GuardrailInput.Unchecked) and the log saying so; with on_unchecked block the request
// is refused naming the part, before any call. A text-only request logs nothing.
func TestGuardrailInputAudioUnchecked(t *testing.T) {
	oai, calls := spokenUpstream(t, "Hi.")
	var logs bytes.Buffer
	seer := &inputSeer{}
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"openai": oai}
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		o.Guardrails = []GuardrailConfig{{Name: "seer", Kind: GuardrailCustom, Mode: GuardrailPreCall, DefaultOn: true, Custom: seer},
			{Name: "strict", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, Words: []string{"zzz"}, OnUnchecked: GuardrailBlock}}
	})
	withAudio := `{"model":"openai/gpt-4o-audio-preview",` + audioMessages + `}`
	if _, err := h.g.Complete(context.Background(), Scope{RequestID: "req-1"}, audioChat(t, withAudio)); err != nil {
		t.Fatal(err)
	}
	if len(seer.seen) != 1 || fmt.Sprint(seer.seen[0].Texts) != "[What is said?]" || fmt.Sprint(seer.seen[0].Unchecked) != "[messages[0].content[1].input_audio]" {
		t.Fatalf("guardrail input: %+v", seer.seen)
	}
	if l := logs.String(); !strings.Contains(l, "went upstream unchecked") || !strings.Contains(l, "messages[0].content[1].input_audio") ||
		!strings.Contains(l, "seer") || !strings.Contains(l, "req-1") {
		t.Fatalf("log: %s", l)
	}
	if calls.Load() != 1 {
		t.Fatalf("upstream calls %d, want 1", calls.Load())
	}

	// Required to see all the input: refused, naming the part, no call.
	strict := audioChat(t, withAudio)
	strict.Guardrails = []string{"strict"}
	_, err := h.g.Complete(context.Background(), Scope{}, strict)
	var ge *GuardrailError
	if !errors.As(err, &ge) || ge.Guardrail != "strict" || !strings.Contains(err.Error(), "messages[0].content[1].input_audio") {
		t.Fatalf("on_unchecked block: %v", err)
	}
	if calls.Load() != 1 {
		t.Fatalf("a refused request called the upstream (%d calls)", calls.Load())
	}

	// Text only: nothing unchecked, nothing logged.
	logs.Reset()
	text := audioChat(t, `{"model":"openai/gpt-4o-audio-preview","messages":[{"role":"user","content":"hello"}]}`)
	text.Guardrails = []string{"strict"}
	if _, err := h.g.Complete(context.Background(), Scope{}, text); err != nil {
		t.Fatal(err)
	}
	if last := seer.seen[len(seer.seen)-1]; last.Unchecked != nil || strings.Contains(logs.String(), "unchecked") {
		t.Fatalf("text only: unchecked %v, log %s", last.Unchecked, logs.String())
	}
}

// TestGuardrailOnUncheckedValidation: on_unchecked is block or allow, pre_call only.
func TestGuardrailOnUncheckedValidation(t *testing.T) {
	for _, tc := range []struct{ cfg, field string }{
		{`[{"name":"a","kind":"regex","mode":"pre_call","patterns":["x"],"on_unchecked":"maybe"}]`, "guardrails[0].on_unchecked"},
		{`[{"name":"a","kind":"regex","mode":"post_call","patterns":["x"],"on_unchecked":"block"}]`, "guardrails[0].on_unchecked"},
	} {
		_, err := ParseGuardrails([]byte(tc.cfg))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
}

// TestGuardrailChecksStreamedSpokenAnswer: a streamed spoken answer's transcript, joined
// from its delta.audio pieces, is what a post_call guardrail checks at the stream's end: a
// banned word said aloud ends the stream with the guardrail's error event.
func TestGuardrailChecksStreamedSpokenAnswer(t *testing.T) {
	ups := httptest.NewServer(&fakeAudioStreamUpstream{})
	t.Cleanup(ups.Close)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "k", HTTPClient: ups.Client()})
	for _, tc := range []struct {
		word    string
		blocked bool
	}{{"there", true}, {"goodbye", false}} {
		h := newHarness(t, func(o *Options) {
			o.Providers = fakeRegistry{"openai": oai}
			o.Guardrails = []GuardrailConfig{{Name: "words", Kind: GuardrailBannedWords, Mode: GuardrailPostCall, DefaultOn: true, Words: []string{tc.word}}}
		})
		st, err := h.g.Stream(context.Background(), Scope{}, audioChat(t, `{"model":"openai/gpt-4o-audio-preview",`+audioStreamAsk))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		WriteOpenAIStream(rec, st, true)
		body := rec.Body.String()
		if got := strings.Contains(body, "guardrail_violation"); got != tc.blocked || !tc.blocked && !strings.Contains(body, "[DONE]") {
			t.Errorf("banned %q in the transcript \"Hello there.\": blocked %v, want %v: %.400s", tc.word, got, tc.blocked, body)
		}
	}
}
