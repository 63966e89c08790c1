package completions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// wavData is base64 audio data as a client sends it in input_audio (not a data URL).
const wavData = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="

// audioChat is the chat request of body, as the /v1/chat/completions surface reads it.
func audioChat(t *testing.T, body string) *Request {
	t.Helper()
	var o OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	return req
}

const audioMessages = `"messages":[{"role":"user","content":[{"type":"text","text":"What is said?"},
	{"type":"input_audio","input_audio":{"data":"` + wavData + `","format":"wav"}}]}]`

// fakeOpenAIAudioUpstream is a scripted OpenAI chat completions server that records the
// bodies and answers with usage whose prompt has 80 audio tokens.
func fakeOpenAIAudioUpstream(t *testing.T) (*httptest.Server, *[]string) {
	var bodies []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"gpt-4o-audio-preview","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":"hello"}}],
			"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":80}}}`)
	}))
	t.Cleanup(up.Close)
	return up, &bodies
}

// TestInputAudioOpenAIFormat: an input_audio part reaches an OpenAI-format upstream as
// input_audio, in order with the text, and the prompt's audio tokens are billed at the
// catalogue's audio input rate and shown in the usage.
func TestInputAudioOpenAIFormat(t *testing.T) {
	up, bodies := fakeOpenAIAudioUpstream(t)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()})
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"openai": oai}
		o.Prices = providers.DefaultCatalog()
	})
	resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"openai/gpt-4o-audio-preview",`+audioMessages+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(*bodies) != 1 {
		t.Fatalf("upstream called %d times", len(*bodies))
	}
	var sent struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte((*bodies)[0]), &sent); err != nil {
		t.Fatal(err)
	}
	got := jsonText(sent.Messages[0].Content)
	want := `[{"text":"What is said?","type":"text"},{"input_audio":{"data":"` + wavData + `","format":"wav"},"type":"input_audio"}]`
	if got != want {
		t.Errorf("upstream content = %s, want %s", got, want)
	}
	if resp.Usage.PromptAudioTokens != 80 {
		t.Errorf("prompt audio tokens = %d, want 80", resp.Usage.PromptAudioTokens)
	}
	// gpt-4o-audio-preview: text in at 2.5e-6, audio in at 4e-5.
	if want := 20*2.5e-6 + 80*4e-5; math.Abs(resp.Usage.Costs.InputTokensCost-want) > 1e-12 {
		t.Errorf("input cost = %g, want %g (audio tokens at the audio rate)", resp.Usage.Costs.InputTokensCost, want)
	}
	if u := openAIUsage(resp); u.PromptTokensDetails.AudioTokens != 80 {
		t.Errorf("usage.prompt_tokens_details = %+v, want audio_tokens 80", u.PromptTokensDetails)
	}
}

// TestInputAudioGemini: Gemini gets the recording as inlineData of its audio type, and its
// AUDIO prompt token count is billed at the audio input rate.
func TestInputAudioGemini(t *testing.T) {
	var bodies []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"hello"}],"role":"model"},"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":60,"candidatesTokenCount":2,"totalTokenCount":62,
			"promptTokensDetails":[{"modality":"TEXT","tokenCount":10},{"modality":"AUDIO","tokenCount":50}]}}`)
	}))
	t.Cleanup(up.Close)
	gem, err := providers.New(providers.FormatGemini, providers.Config{Name: "gemini", BaseURL: up.URL, APIKey: "k", HTTPClient: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"gemini": gem}
		o.Prices = providers.DefaultCatalog()
	})
	mp3 := strings.Replace(audioMessages, `"format":"wav"`, `"format":"mp3"`, 1)
	resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"gemini/gemini-2.0-flash",`+mp3+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 1 || !strings.Contains(bodies[0], `{"text":"What is said?"},{"inlineData":{"mimeType":"audio/mp3","data":"`+wavData+`"}}`) {
		t.Errorf("Gemini got %q, want the text then the audio as inlineData audio/mp3", bodies)
	}
	if resp.Usage.PromptAudioTokens != 50 {
		t.Errorf("prompt audio tokens = %d, want 50", resp.Usage.PromptAudioTokens)
	}
	// gemini-2.0-flash: text in at 1e-7, audio in at 7e-7.
	if want := 10*1e-7 + 50*7e-7; math.Abs(resp.Usage.Costs.InputTokensCost-want) > 1e-12 {
		t.Errorf("input cost = %g, want %g", resp.Usage.Costs.InputTokensCost, want)
	}
}

// TestInputAudioUnfit: a model whose adapter takes no audio (Anthropic) is skipped, recorded
// in the attempts, for one that does; alone it makes the request a 400 naming the part,
// before any call.
func TestInputAudioUnfit(t *testing.T) {
	claudeUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the Anthropic upstream was called")
	}))
	t.Cleanup(claudeUp.Close)
	claude := providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: claudeUp.URL, APIKey: "k", HTTPClient: claudeUp.Client()})
	up, bodies := fakeOpenAIAudioUpstream(t)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()})
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"anthropic": claude, "openai": oai} })

	_, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"anthropic/claude-sonnet-4-5",`+audioMessages+`}`))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "messages[0].content[1].input_audio" || !strings.Contains(ve.Message, "anthropic/claude-sonnet-4-5") {
		t.Fatalf("Claude alone: err = %v, want a validation error naming messages[0].content[1].input_audio and the model", err)
	}

	resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t,
		`{"model":"anthropic/claude-sonnet-4-5","fallback_models":["openai/gpt-4o-audio-preview"],`+audioMessages+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "openai" || len(resp.Attempts) != 2 || resp.Attempts[0].Outcome != OutcomeSkipped || !strings.Contains(resp.Attempts[0].Error, "no audio input") {
		t.Errorf("answered by %s, attempts %+v: want Claude skipped, then OpenAI", resp.Provider, resp.Attempts)
	}
	if len(*bodies) != 1 {
		t.Errorf("OpenAI called %d times, want 1", len(*bodies))
	}
}

// TestInputAudioValidation: malformed input_audio parts are refused before any call,
// naming the field.
func TestInputAudioValidation(t *testing.T) {
	h := newHarness(t, nil)
	for _, c := range []struct{ content, role, field string }{
		{`{"type":"input_audio","input_audio":{"data":"` + wavData + `","format":"flac"}}`, "user", "messages[0].content[0].input_audio.format"},
		{`{"type":"input_audio","input_audio":{"data":"data:audio/wav;base64,` + wavData + `","format":"wav"}}`, "user", "messages[0].content[0].input_audio.data"},
		{`{"type":"input_audio","input_audio":{"data":"","format":"wav"}}`, "user", "messages[0].content[0].input_audio.data"},
		{`{"type":"input_audio"}`, "user", "messages[0].content[0].input_audio"},
		{`{"type":"input_audio","input_audio":{"data":"` + wavData + `","format":"wav"}}`, "system", "messages[0].content[0].type"},
	} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"`+c.role+`","content":[`+c.content+`]}]}`), &o); err != nil {
			t.Fatal(err)
		}
		req, err := o.ToRequest()
		if err == nil {
			_, err = h.g.Complete(context.Background(), Scope{}, req)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s in a %s message: err = %v, want a validation error naming %s", c.content, c.role, err, c.field)
		}
	}
	if n := h.a.callCount("m"); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
}

// TestAudioOutputOpenAIFormat: modalities ["text", "audio"] and audio reach an
// OpenAI-format upstream; its message.audio is the answer's (content null), its audio
// tokens are billed at the audio output rate; the answer is not cached.
func TestAudioOutputOpenAIFormat(t *testing.T) {
	var bodies []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"gpt-4o-audio-preview","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":null,"refusal":null,"audio":{"id":"audio_1","data":"`+wavData+`","expires_at":1767225600,"transcript":"Hello there."}}}],
			"usage":{"prompt_tokens":10,"completion_tokens":60,"total_tokens":70,"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":50}}}`)
	}))
	t.Cleanup(up.Close)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()})
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"openai": oai}
		o.Prices = providers.DefaultCatalog()
	})
	body := `{"model":"openai/gpt-4o-audio-preview","modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"messages":[{"role":"user","content":"Say hello."}]}`
	for range 2 {
		resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, body))
		if err != nil {
			t.Fatal(err)
		}
		c := NewOpenAIChatCompletion(resp, time.Unix(0, 0))
		msg := c.Choices[0].Message
		if msg.Content != nil || msg.Audio == nil || *msg.Audio != (providers.AudioAnswer{ID: "audio_1", Data: wavData, ExpiresAt: 1767225600, Transcript: "Hello there."}) {
			t.Errorf("message = %s, want content null and the upstream's audio", jsonText(msg))
		}
		if c.Usage.CompletionTokensDetails.AudioTokens != 50 {
			t.Errorf("usage = %s, want 50 completion audio tokens", jsonText(c.Usage))
		}
		// gpt-4o-audio-preview: text out at 1e-5, audio out at 8e-5.
		if want := 10*1e-5 + 50*8e-5; math.Abs(resp.Usage.Costs.OutputTokensCost-want) > 1e-12 {
			t.Errorf("output cost = %g, want %g", resp.Usage.Costs.OutputTokensCost, want)
		}
	}
	if len(bodies) != 2 {
		t.Fatalf("upstream called %d times, want 2 (a spoken answer is not cached)", len(bodies))
	}
	if !strings.Contains(bodies[0], `"modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"}`) {
		t.Errorf("upstream got %s, want modalities and audio", bodies[0])
	}
}

// TestAudioOutputUnfit: a model that cannot answer aloud is skipped for one that can, and
// alone makes the request a 400 naming audio.
func TestAudioOutputUnfit(t *testing.T) {
	up, _ := fakeOpenAIAudioUpstream(t)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()})
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"a": o.Providers.(fakeRegistry)["a"], "openai": oai} })
	ask := `"modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"messages":[{"role":"user","content":"Say hello."}]}`
	_, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"a/m",`+ask))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "audio" || !strings.Contains(ve.Message, "a/m") {
		t.Fatalf("a/m alone: err = %v, want a validation error naming audio and the model", err)
	}
	resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"a/m","fallback_models":["openai/gpt-4o-audio-preview"],`+ask))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "openai" || resp.Attempts[0].Outcome != OutcomeSkipped {
		t.Errorf("answered by %s, attempts %+v: want a/m skipped", resp.Provider, resp.Attempts)
	}
	if n := h.a.callCount("m"); n != 0 {
		t.Errorf("a/m called %d times", n)
	}
}

// TestAudioAnswerSentBack: an assistant message's audio id (an earlier spoken answer, content
// null) reaches an OpenAI-format upstream as OpenAI takes it; a model that cannot hear it is
// passed over, and alone makes the request a 400 naming the message's audio.
func TestAudioAnswerSentBack(t *testing.T) {
	claudeUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the Anthropic upstream was called")
	}))
	t.Cleanup(claudeUp.Close)
	claude := providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: claudeUp.URL, APIKey: "k", HTTPClient: claudeUp.Client()})
	up, bodies := fakeOpenAIAudioUpstream(t)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()})
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"anthropic": claude, "openai": oai} })
	history := `"messages":[{"role":"user","content":"Say hello."},{"role":"assistant","content":null,"audio":{"id":"audio_1"}},{"role":"user","content":"Again, slower."}]}`

	_, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"anthropic/claude-sonnet-4-5",`+history))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "messages[1].audio" {
		t.Fatalf("Claude alone: err = %v, want a validation error naming messages[1].audio", err)
	}
	resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"anthropic/claude-sonnet-4-5","fallback_models":["openai/gpt-4o-audio-preview"],`+history))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "openai" || len(*bodies) != 1 || !strings.Contains((*bodies)[0], `{"role":"assistant","content":null,"audio":{"id":"audio_1"}}`) {
		t.Errorf("answered by %s; OpenAI got %q, want the assistant turn as content null with its audio id", resp.Provider, *bodies)
	}

	var o OpenAIChatRequest
	json.Unmarshal([]byte(`{"model":"openai/gpt-4o-audio-preview","messages":[{"role":"user","content":"x","audio":{"id":"audio_1"}}]}`), &o)
	if _, err := o.ToRequest(); !errors.As(err, &ve) || ve.Field != "messages[0].audio" {
		t.Errorf("audio on a user message: err = %v, want a validation error naming messages[0].audio", err)
	}
}
