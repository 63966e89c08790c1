package completions

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

func TestOpenAIRequestTranslation(t *testing.T) {
	body := `{
		"model": "a/m",
		"messages": [
			{"role": "developer", "content": "Be brief."},
			{"role": "user", "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": "world"}]},
			{"role": "assistant", "content": "Hi"}
		],
		"temperature": 1.5,
		"max_tokens": 10,
		"max_completion_tokens": 20,
		"stream": true,
		"stream_options": {"include_usage": true},
		"top_p": 0.9, "presence_penalty": 0, "user": "u1", "seed": 7,
		"fallback_models": ["b/m"]
	}`
	var oreq OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &oreq); err != nil {
		t.Fatal(err)
	}
	req, err := oreq.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if req.Models[0] != "a/m" || req.FallbackModels[0] != "b/m" || !req.Stream || req.MaxTokens != 20 || *req.Temperature != 1.5 {
		t.Fatalf("req = %+v", req)
	}
	if req.Messages[0].Role != "system" || req.Messages[1].Text() != "Hello\nworld" || req.Messages[2].Text() != "Hi" {
		t.Fatalf("messages = %+v", req.Messages)
	}

	// The gateway accepts temperature up to 2 on this surface, and keeps no conversation.
	h := newHarness(t, nil)
	req.Stream = false
	resp, err := h.g.Complete(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ConversationID != "" {
		t.Fatalf("conversation %q created for an OpenAI request", resp.ConversationID)
	}
	if es, _ := h.store.List(context.Background(), store.Conversations, store.ListOptions{}); len(es) != 0 {
		t.Fatal("OpenAI request stored a conversation")
	}

	bad := []struct {
		body, field string
	}{
		{`{"model":"a/m","messages":[{"role":"function","content":"x"}]}`, "messages[0].name"},
		{`{"model":"a/m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role"},
		{`{"model":"a/m","messages":[{"role":"user","content":[{"type":"video_url","video_url":{"url":"x"}}]}]}`, "messages[0].content[0].type"},
		{`{"model":"a/m","messages":[{"role":"assistant","content":[{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]}]}`, "messages[0].content[0].type"},
		{`{"model":"a/m","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, "messages[0].content[0].image_url"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"n":17}`, "n"},
		{`{"messages":[{"role":"user","content":"x"}]}`, "model"},
		{`{"model":"a/m","messages":[]}`, "messages"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"max_tokens":-1}`, "max_tokens"},
		// Fields whose meaning the gateway cannot honour are refused, not ignored; tools and
		// response_format of a shape OpenAI does not have are refused by name.
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"retrieval","function":{"name":"f"}}]}`, "tools[0].type"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"tool_choice":"sometimes"}`, "tool_choice"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"function_call":{"name":"f"}}`, "function_call"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}}`, "response_format.type"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}}`, "response_format.json_schema"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"logprobs":1}`, "logprobs"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"top_logprobs":3}`, "top_logprobs"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"modalities":["text","audio"]}`, "audio"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"audio":{"voice":"alloy"}}`, "modalities"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"modalities":["text","audio"],"audio":{"voice":"alloy"}}`, "audio"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"modalities":["audio"],"audio":{"voice":"alloy","format":"wav"}}`, "modalities"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"modalities":["text","video"]}`, "modalities"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"stream":true}`, "audio.format"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"modalities":["text","audio"],"audio":{"voice":"alloy","format":"pcm16"},"stream":true,"n":2}`, "n"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"n":0}`, "n"}, // n 2 unstreamed is two spoken answers (TestAudioOutputChoices)
		{`{"model":"a/m","messages":[{"role":"user","content":"x","tool_calls":[{"id":"c1"}]}]}`, "messages[0].tool_calls"},
		{`{"model":"a/m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"custom"}]},{"role":"user","content":"x"}]}`, "messages[0].tool_calls[0].type"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"top_p":1.5}`, "top_p"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]}`, "stop"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"stop":["a",""]}`, "stop[1]"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"presence_penalty":2.5}`, "presence_penalty"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"frequency_penalty":-3}`, "frequency_penalty"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"logit_bias":{"abc":1}}`, "logit_bias"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}],"logit_bias":{"42":101}}`, "logit_bias"},
	}
	for _, b := range bad {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(b.body), &o); err != nil {
			t.Fatal(err)
		}
		_, err := o.ToRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != b.field {
			t.Errorf("%s: err = %v, want field %s", b.body, err, b.field)
		}
	}
	// Their harmless forms pass, and top_p and stop reach the provider.
	for _, extra := range []string{`"tools":[]`, `"tool_choice":"none"`, `"tool_choice":"auto"`, `"response_format":{"type":"text"}`,
		`"logprobs":false`, `"modalities":["text"]`, `"parallel_tool_calls":false`, `"tools":null`} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"}],`+extra+`}`), &o); err != nil {
			t.Fatal(err)
		}
		if _, err := o.ToRequest(); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
	for _, stop := range []string{`"END"`, `["END","\n\n"]`} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"}],"top_p":0.25,"stop":`+stop+`}`), &o); err != nil {
			t.Fatal(err)
		}
		r, err := o.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		h.a.on("m", step{text: "ok"})
		if _, err := h.g.Complete(context.Background(), Scope{}, r); err != nil {
			t.Fatal(err)
		}
		sent := h.a.lastRequest()
		if sent.TopP == nil || *sent.TopP != 0.25 || len(sent.Stop) == 0 || sent.Stop[0] != "END" {
			t.Fatalf("stop %s: provider got top_p %v stop %q", stop, sent.TopP, sent.Stop)
		}
	}
	// The OpenAI API's other options and message names reach the provider.
	var oo OpenAIChatRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x","name":"alice"}],"seed":7,
		"frequency_penalty":-0.5,"presence_penalty":1,"logit_bias":{"42":-100},"user":"u1","reasoning_effort":"high",
		"service_tier":"flex","verbosity":"low","safety_identifier":"h-1","prompt_cache_key":"pk"}`), &oo); err != nil {
		t.Fatal(err)
	}
	ro, err := oo.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "ok"})
	if _, err := h.g.Complete(context.Background(), Scope{}, ro); err != nil {
		t.Fatal(err)
	}
	sent := h.a.lastRequest()
	if o := sent.OpenAIOptions; o.Seed == nil || *o.Seed != 7 || o.FrequencyPenalty == nil || *o.FrequencyPenalty != -0.5 ||
		o.PresencePenalty == nil || *o.PresencePenalty != 1 || o.LogitBias["42"] != -100 || o.User != "u1" ||
		o.ReasoningEffort != "high" || o.ServiceTier != "flex" || o.Verbosity != "low" || sent.Messages[0].Name != "alice" ||
		o.SafetyIdentifier != "h-1" || o.PromptCacheKey != "pk" {
		t.Fatalf("provider got options %+v, messages %+v", sent.OpenAIOptions, sent.Messages)
	}
	// A model without a provider is reported under the OpenAI field name.
	o0 := OpenAIChatRequest{Model: "gpt-4o", Messages: []OpenAIMessage{{Role: "user", Content: OpenAIContent{Parts: []OpenAIContentPart{{Type: "text", Text: "x"}}}}}}
	r0, _ := o0.ToRequest()
	var ve *ValidationError
	if _, err := h.g.Complete(context.Background(), Scope{}, r0); !errors.As(err, &ve) || ve.Field != "model" {
		t.Fatalf("err = %v, want field model", err)
	}
	// Temperature above 2 fails in the gateway's validation.
	o := OpenAIChatRequest{Model: "a/m", Messages: []OpenAIMessage{{Role: "user", Content: OpenAIContent{Parts: []OpenAIContentPart{{Type: "text", Text: "x"}}}}}}
	tt := 2.5
	o.Temperature = &tt
	r, _ := o.ToRequest()
	if _, err := h.g.Complete(context.Background(), Scope{}, r); !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenAIResponseShapes(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Hello world", usage: providers.Usage{PromptTokens: 5, CompletionTokens: 2, ReasoningTokens: 1, CachedTokens: 3}})
	o := OpenAIChatRequest{Model: "a/m", Messages: []OpenAIMessage{{Role: "user", Content: OpenAIContent{Parts: []OpenAIContentPart{{Type: "text", Text: "x"}}, IsString: true}}}}
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.g.Complete(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	cc := NewOpenAIChatCompletion(resp, time.Unix(1700000000, 0))
	b, _ := json.Marshal(cc)
	var got map[string]any
	_ = json.Unmarshal(b, &got)
	if got["object"] != "chat.completion" || got["model"] != "a/m" || got["created"] != 1700000000.0 || !strings.HasPrefix(got["id"].(string), "chatcmpl-") {
		t.Fatalf("completion = %s", b)
	}
	ch := got["choices"].([]any)[0].(map[string]any)
	if ch["finish_reason"] != "stop" || ch["message"].(map[string]any)["content"] != "Hello world" || ch["message"].(map[string]any)["role"] != "assistant" {
		t.Fatalf("choice = %v", ch)
	}
	u := got["usage"].(map[string]any)
	if u["prompt_tokens"] != 5.0 || u["completion_tokens"] != 2.0 || u["total_tokens"] != 7.0 ||
		u["completion_tokens_details"].(map[string]any)["reasoning_tokens"] != 1.0 || u["prompt_tokens_details"].(map[string]any)["cached_tokens"] != 3.0 {
		t.Fatalf("usage = %v", u)
	}

	// Streaming: role on the first delta, content deltas, a finish chunk, a usage chunk, [DONE].
	st, err := h.g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStream(rec, st, true); err != nil {
		t.Fatal(err)
	}
	evs := parseSSE(t, rec.Body.String())
	if len(evs) != 5 || evs[4].data != "[DONE]" {
		t.Fatalf("events = %+v", evs)
	}
	var chunks []OpenAIChunk
	for _, e := range evs[:4] {
		var c OpenAIChunk
		if err := json.Unmarshal([]byte(e.data), &c); err != nil || c.Object != "chat.completion.chunk" || c.Model != "a/m" {
			t.Fatalf("chunk %s: %v", e.data, err)
		}
		chunks = append(chunks, c)
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" || chunks[0].Choices[0].Delta.Content+chunks[1].Choices[0].Delta.Content != "Hello world" {
		t.Fatalf("deltas = %+v", chunks[:2])
	}
	if chunks[0].Choices[0].FinishReason != nil || *chunks[2].Choices[0].FinishReason != "stop" {
		t.Fatalf("finish reasons wrong")
	}
	if len(chunks[3].Choices) != 0 || chunks[3].Usage == nil || chunks[3].Usage.TotalTokens != 7 {
		t.Fatalf("usage chunk = %+v", chunks[3])
	}

	// Mid-stream failure: an OpenAI error object, no [DONE].
	h.a.on("m", step{text: "one two", breakAt: 1, breakErr: &providers.Error{Kind: providers.KindStreamBroken, Message: "cut"}})
	st, err = h.g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	if err := WriteOpenAIStream(rec, st, false); !errors.Is(err, ErrStreamFailed) {
		t.Fatalf("err = %v", err)
	}
	evs = parseSSE(t, rec.Body.String())
	var eb OpenAIErrorBody
	if err := json.Unmarshal([]byte(evs[len(evs)-1].data), &eb); err != nil || eb.Error.Type != "upstream_error" || strings.Contains(rec.Body.String(), "[DONE]") {
		t.Fatalf("error event %+v %v", evs, err)
	}
}

func TestOpenAIContentRoundTrip(t *testing.T) {
	for _, in := range []string{`"hi"`, `[{"type":"text","text":"hi"}]`, `null`} {
		var c OpenAIContent
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(c)
		if string(out) != in {
			t.Errorf("%s -> %s", in, out)
		}
	}
}

// The Responses API's reasoning effort, user, service tier and text verbosity become the
// chat request's options.
func TestResponsesOptions(t *testing.T) {
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","input":"hi","reasoning":{"effort":"low","summary":"auto"},"user":"u9",
		"service_tier":"priority","text":{"verbosity":"high"}}`), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if o := req.OpenAIOptions; o.ReasoningEffort != "low" || o.User != "u9" || o.ServiceTier != "priority" || o.Verbosity != "high" {
		t.Fatalf("options %+v", o)
	}
}

// Agents send the gateway's own answers back: an assistant turn without content (a
// refusal, an answer cut at max tokens) is accepted on the OpenAI-compatible surface; the
// native API keeps the spec's rule.
func TestEmptyAssistantTurnsFromAgents(t *testing.T) {
	h := newHarness(t, nil)
	for _, asst := range []string{`{"role":"assistant","content":null,"refusal":"I can't help with that."}`, `{"role":"assistant","content":""}`, `{"role":"assistant","content":"  "}`} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"},`+asst+`,{"role":"user","content":"try again"}]}`), &o); err != nil {
			t.Fatal(err)
		}
		r, err := o.ToRequest()
		if err != nil {
			t.Fatalf("%s: %v", asst, err)
		}
		h.a.on("m", step{text: "ok"})
		if _, err := h.g.Complete(context.Background(), Scope{}, r); err != nil {
			t.Errorf("%s: %v", asst, err)
		}
	}
	native := userReq("x", "a/m")
	native.Messages = append(native.Messages, Message{Role: "assistant", Content: []ContentBlock{{Type: "text", Text: ""}}})
	if _, err := h.g.Complete(context.Background(), Scope{}, native); !errors.Is(err, ErrInvalid) {
		t.Errorf("native empty assistant turn: err = %v, want ErrInvalid", err)
	}
}

// A function_call_output given as a list of parts (newer SDKs) reaches the model as its
// text; a malformed image part, or a part of another type, is refused naming it
// (well-formed images: TestResponsesToolOutputImages).
func TestResponsesOutputParts(t *testing.T) {
	for _, c := range []struct{ output, text, field string }{
		{`"sunny"`, "sunny", ""},
		{`[{"type":"input_text","text":"sun"},{"type":"input_text","text":"ny"}]`, "sunny", ""},
		{`{"temp":21}`, `{"temp":21}`, ""},
		{`[{"type":"input_image","image_url":"data:..."}]`, "", "input[1].output[0].image_url"},
		{`[{"type":"input_text","text":"a"},{"type":"output_audio","data":"x"}]`, "", "input[1].output[1].type"},
	} {
		var r ResponsesRequest
		body := `{"model":"a/m","input":[{"type":"function_call","call_id":"c1","name":"w","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":` + c.output + `}]}`
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		chat, err := r.ToChatRequest()
		if c.field != "" {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field {
				t.Errorf("%s: err = %v, want a validation error on %s", c.output, err, c.field)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.output, err)
		}
		tool := chat.Messages[len(chat.Messages)-1]
		if tool.Role != "tool" || len(tool.Content.Parts) != 1 || tool.Content.Parts[0].Text != c.text {
			t.Errorf("%s: tool turn %+v, want text %q", c.output, tool, c.text)
		}
	}
}
