package completions

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestAudioWithoutUsageEstimated: an upstream that reports no usage for a recording answered
// aloud is billed an estimate, marked so: the recording's tokens (guessed from its size, a
// token per 1,600 bytes) at the catalogue's audio input rate, not the text rate, and the
// spoken answer's transcript as its text.
func TestAudioWithoutUsageEstimated(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"gpt-4o-audio-preview","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":null,"audio":{"id":"audio_1","data":"`+wavData+`","expires_at":1767225600,"transcript":"Hello there, how are you today?"}}}]}`)
	}))
	t.Cleanup(up.Close)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()})
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"openai": oai}
		o.Prices = providers.DefaultCatalog()
	})
	recording := strings.Repeat("A", 32000) // 24,000 bytes: 15 tokens at 1,600 bytes a token
	resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"openai/gpt-4o-audio-preview","modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},
		"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"`+recording+`","format":"wav"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Usage
	if !resp.UsageEstimated || u.PromptAudioTokens != 15 || u.PromptTokens <= 15 {
		t.Fatalf("usage %+v (estimated %v), want 15 of the prompt's tokens audio, estimated", u, resp.UsageEstimated)
	}
	// gpt-4o-audio-preview: text in at 2.5e-6, audio in at 4e-5.
	if want := float64(u.PromptTokens-15)*2.5e-6 + 15*4e-5; math.Abs(u.Costs.InputTokensCost-want) > 1e-12 {
		t.Errorf("input cost = %g, want %g (the guessed audio at the audio rate)", u.Costs.InputTokensCost, want)
	}
	if n := providers.CountTokens("openai/gpt-4o-audio-preview", "Hello there, how are you today?"); u.CompletionTokens != n || n == 0 {
		t.Errorf("completion tokens = %d, want the transcript's %d", u.CompletionTokens, n)
	}
	if o := openAIUsage(resp); o.PromptTokensDetails == nil || o.PromptTokensDetails.AudioTokens != 15 {
		t.Errorf("usage.prompt_tokens_details = %+v, want audio_tokens 15", o.PromptTokensDetails)
	}
}

// TestAudioOutputChoices: n above 1 with a spoken answer is n spoken answers (it was a 400):
// each choice its own call and its own message.audio, the usage the sum of their audio
// tokens.
func TestAudioOutputChoices(t *testing.T) {
	oai, calls := spokenUpstream(t, "Hello there.")
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"openai": oai}
		o.Prices = providers.DefaultCatalog()
	})
	var o OpenAIChatRequest
	if err := json.Unmarshal([]byte(`{"model":"openai/gpt-4o-audio-preview","n":2,"modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},
		"messages":[{"role":"user","content":"Say hello."}]}`), &o); err != nil {
		t.Fatal(err)
	}
	req, err := o.ToRequest()
	if err != nil {
		t.Fatalf("n 2 with audio: %v", err)
	}
	answers, failed, err := h.g.CompleteN(context.Background(), Scope{}, req, o.Choices())
	if err != nil || len(failed) != 0 || len(answers) != 2 {
		t.Fatalf("CompleteN: %d answers, failed %v, %v", len(answers), failed, err)
	}
	c := NewOpenAIChatCompletionN(answers, time.Unix(0, 0))
	for i, ch := range c.Choices {
		if ch.Index != i || ch.Message.Content != nil || ch.Message.Audio == nil || ch.Message.Audio.Transcript != "Hello there." {
			t.Errorf("choice %d: %s", i, jsonText(ch))
		}
	}
	if calls.Load() != 2 || c.Usage.CompletionTokensDetails == nil || c.Usage.CompletionTokensDetails.AudioTokens != 100 {
		t.Fatalf("%d calls, usage %s; want 2 calls and 100 audio tokens", calls.Load(), jsonText(c.Usage))
	}
}
