package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// fakeAudioStreamPieces are the pieces of the spoken answer fakeAudioStreamUpstream
// streams, in OpenAI's order: id and transcript, audio (each piece base64 on its own),
// expires_at.
var fakeAudioStreamPieces = []providers.AudioDelta{
	{ID: "audio_s1", Transcript: "Hi"},
	{Transcript: " there!"},
	{ID: "audio_s1", Data: base64.StdEncoding.EncodeToString([]byte("pcm-one"))},
	{Data: base64.StdEncoding.EncodeToString([]byte("pcm-two"))},
	{ID: "audio_s1", ExpiresAt: 1767225600},
}

// fakeAudioStreamUpstream is a scripted OpenAI-format upstream that streams a spoken
// answer (the pieces above, then the finish reason and a usage chunk with audio tokens)
// and keeps the request bodies.
type fakeAudioStreamUpstream struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (u *fakeAudioStreamUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(rest string) {
		fmt.Fprintf(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-audio-preview",%s}`+"\n\n", rest)
	}
	ev(`"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"finish_reason":null}],"usage":null`)
	for _, p := range fakeAudioStreamPieces {
		a, _ := json.Marshal(p)
		ev(fmt.Sprintf(`"choices":[{"index":0,"delta":{"content":null,"audio":%s},"finish_reason":null}],"usage":null`, a))
	}
	ev(`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null`)
	ev(`"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":50,"total_tokens":70,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":10},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":40}}`)
	io.WriteString(w, "data: [DONE]\n\n")
}

func (u *fakeAudioStreamUpstream) calls() []map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]map[string]any(nil), u.bodies...)
}

// audioStreamServer serves a gateway with "openai" (the fake above) and "anthropic" (a
// fake that only counts calls), and the group "mixed" (Claude, then gpt-4o-audio-preview).
func audioStreamServer(t *testing.T) (*httptest.Server, *fakeAudioStreamUpstream, *atomic.Int64) {
	t.Helper()
	up := &fakeAudioStreamUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	var claudeCalls atomic.Int64
	ans := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claudeCalls.Add(1)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"not expected"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(ans.Close)
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-openai"}),
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: ans.URL, APIKey: "sk-an"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff:     completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		Cache:       completions.CacheOptions{Driver: &completions.MemoryCache{}},
		ModelGroups: map[string]completions.ModelGroup{"mixed": {Models: []string{"anthropic/claude-sonnet-4-5", "openai/gpt-4o-audio-preview"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, up, &claudeCalls
}

const chatAudioStreamAsk = `"stream":true,"stream_options":{"include_usage":true},"modalities":["text","audio"],"audio":{"voice":"alloy","format":"pcm16"},"messages":[{"role":"user","content":"Greet me."}]}`

// TestChatCompletionsAudioStream: /v1/chat/completions streams a spoken answer as OpenAI
// does — delta.audio pieces in the upstream's order, the usage chunk's audio tokens —
// billed at the catalogue's audio rates; a group's model that cannot answer aloud (Claude)
// is passed over; nothing is cached.
func TestChatCompletionsAudioStream(t *testing.T) {
	hs, up, claudeCalls := audioStreamServer(t)
	for _, model := range []string{"openai/gpt-4o-audio-preview", "mixed", "openai/gpt-4o-audio-preview"} {
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"`+model+`",`+chatAudioStreamAsk)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", model, resp.StatusCode, b)
		}
		if !strings.HasSuffix(strings.TrimSpace(string(b)), "data: [DONE]") {
			t.Fatalf("%s: stream %s, want it to end with [DONE]", model, b)
		}
		var pieces []providers.AudioDelta
		var usage map[string]any
		for i, ev := range sseData(t, b) {
			if u, ok := ev["usage"].(map[string]any); ok {
				usage = u
				costs := ev["switchyard"].(map[string]any)["costs"].(map[string]any)
				// gpt-4o-audio-preview: text in 2.5e-6, audio in 4e-5, text out 1e-5, audio out 8e-5.
				wantIn, wantOut := 10*2.5e-6+10*4e-5, 10*1e-5+40*8e-5
				if in, out := costs["input_tokens_cost"].(float64), costs["output_tokens_cost"].(float64); math.Abs(in-wantIn) > 1e-12 || math.Abs(out-wantOut) > 1e-12 {
					t.Errorf("%s: costs %v, want input %g and output %g", model, costs, wantIn, wantOut)
				}
			}
			choices, _ := ev["choices"].([]any)
			if len(choices) == 0 {
				continue
			}
			delta := choices[0].(map[string]any)["delta"].(map[string]any)
			if i == 0 && delta["role"] != "assistant" {
				t.Errorf("%s: first chunk's delta %v, want the role", model, delta)
			}
			if a, ok := delta["audio"]; ok {
				raw, _ := json.Marshal(a)
				var d providers.AudioDelta
				json.Unmarshal(raw, &d)
				pieces = append(pieces, d)
			}
		}
		if fmt.Sprint(pieces) != fmt.Sprint(fakeAudioStreamPieces) {
			t.Errorf("%s: audio pieces %+v, want %+v", model, pieces, fakeAudioStreamPieces)
		}
		ctd, _ := usage["completion_tokens_details"].(map[string]any)
		ptd, _ := usage["prompt_tokens_details"].(map[string]any)
		if ctd["audio_tokens"] != float64(40) || ptd["audio_tokens"] != float64(10) {
			t.Errorf("%s: usage %v, want 40 completion and 10 prompt audio tokens", model, usage)
		}
	}
	bodies := up.calls()
	if len(bodies) != 3 {
		t.Fatalf("upstream called %d times, want 3 (a spoken answer is never cached)", len(bodies))
	}
	if a, _ := bodies[0]["audio"].(map[string]any); a["format"] != "pcm16" || bodies[0]["stream"] != true {
		t.Errorf("upstream got %v, want a pcm16 stream", bodies[0])
	}
	if n := claudeCalls.Load(); n != 0 {
		t.Errorf("Claude called %d times, want it passed over", n)
	}
}

// TestChatCompletionsAudioStreamRefused: a streamed spoken answer in another format than
// pcm16 is a 400 naming audio.format (OpenAI streams audio in pcm16 only), and one asked
// of Claude alone a 400 naming audio; no upstream is called.
func TestChatCompletionsAudioStreamRefused(t *testing.T) {
	hs, up, claudeCalls := audioStreamServer(t)
	for _, c := range []struct{ body, param string }{
		{`{"model":"openai/gpt-4o-audio-preview","stream":true,"modalities":["text","audio"],"audio":{"voice":"alloy","format":"mp3"},"messages":[{"role":"user","content":"x"}]}`, "audio.format"},
		{`{"model":"anthropic/claude-sonnet-4-5",` + chatAudioStreamAsk, "audio"},
	} {
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, c.body)
		var e completions.OpenAIErrorBody
		json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Param == nil || *e.Error.Param != c.param {
			t.Errorf("%s: %d %s, want a 400 naming %s", c.body, resp.StatusCode, b, c.param)
		}
	}
	if n, m := len(up.calls()), claudeCalls.Load(); n != 0 || m != 0 {
		t.Errorf("upstreams called %d and %d times, want none", n, m)
	}
}

// TestChatAudioStreamOpenAIGoSDK: openai-go's streaming client asks for a spoken answer
// and reads it from the chunks (delta.audio, which its types keep as an extra field) in
// order, with the usage chunk's audio tokens.
func TestChatAudioStreamOpenAIGoSDK(t *testing.T) {
	hs, _, _ := audioStreamServer(t)
	client := openai.NewClient(option.WithBaseURL(hs.URL+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:         "openai/gpt-4o-audio-preview",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Greet me.")},
		Modalities:    []string{"text", "audio"},
		Audio:         openai.ChatCompletionAudioParam{Voice: openai.ChatCompletionAudioParamVoiceAlloy, Format: openai.ChatCompletionAudioParamFormatPcm16},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var transcript strings.Builder
	var audio []byte
	var id string
	var expires int64
	var audioTokens int64
	for stream.Next() {
		ck := stream.Current()
		if ck.Usage.CompletionTokensDetails.AudioTokens != 0 {
			audioTokens = ck.Usage.CompletionTokensDetails.AudioTokens
		}
		if len(ck.Choices) == 0 {
			continue
		}
		f, ok := ck.Choices[0].Delta.JSON.ExtraFields["audio"]
		if !ok {
			continue
		}
		var d providers.AudioDelta
		if err := json.Unmarshal([]byte(f.Raw()), &d); err != nil {
			t.Fatalf("delta.audio %s: %v", f.Raw(), err)
		}
		transcript.WriteString(d.Transcript)
		if d.Data != "" {
			b, err := base64.StdEncoding.DecodeString(d.Data)
			if err != nil {
				t.Fatalf("delta.audio.data %q: %v", d.Data, err)
			}
			audio = append(audio, b...)
		}
		if d.ID != "" {
			id = d.ID
		}
		if d.ExpiresAt != 0 {
			expires = d.ExpiresAt
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if transcript.String() != "Hi there!" || string(audio) != "pcm-onepcm-two" || id != "audio_s1" || expires != 1767225600 || audioTokens != 40 {
		t.Errorf("transcript %q, audio %q, id %q, expires_at %d, audio tokens %d", transcript.String(), audio, id, expires, audioTokens)
	}
}
