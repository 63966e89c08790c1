package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/telemetry"
)

// scriptedToolUpstream is a fake OpenAI-format upstream: a streamed request for model
// "tools" is answered with text in two fragments and a tool call whose arguments come in
// two fragments; any other request with one text answer.
type scriptedToolUpstream struct{}

func (scriptedToolUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"`+body.Model+`","choices":[{"index":0,"message":{"role":"assistant","content":"Brief answer."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, d := range []string{
		`{"role":"assistant","content":"Hel"}`,
		`{"content":"lo"}`,
		`{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"weather","arguments":"{\"city\":"}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`,
	} {
		io.WriteString(w, `data: {"id":"c2","object":"chat.completion.chunk","model":"`+body.Model+`","choices":[{"index":0,"delta":`+d+`,"finish_reason":null}]}`+"\n\n")
	}
	io.WriteString(w, `data: {"id":"c2","object":"chat.completion.chunk","model":"`+body.Model+`","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}`+"\n\n")
	io.WriteString(w, "data: [DONE]\n\n")
}

// TestTraceContentAcrossSurfaces runs chat requests of a virtual key of a team through the
// OpenAI chat (streamed, with an image and a tool call), Anthropic Messages and Responses
// surfaces with content capture on, and checks each chat span's prompt and answer, the key,
// team and user attributes, and that no key's secret is on any span; then the same with
// capture off carries no content.
func TestTraceContentAcrossSurfaces(t *testing.T) {
	run := func(t *testing.T, capture bool) (spans tracetest.SpanStubs, secrets []string) {
		exp := tracetest.NewInMemoryExporter()
		tr := telemetry.NewTracing(exp, "test", true, telemetry.TracingOptions{CaptureContent: capture})
		up := httptest.NewServer(scriptedToolUpstream{})
		t.Cleanup(up.Close)
		st := newTestStore(t)
		reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "sk-upstream-secret"}))
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: tr})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Store: st, APIKeys: []string{testKey},
			Middleware: []func(http.Handler) http.Handler{tr.Middleware(RoutePattern, RequestID, LogPath)}}, Completions(g))
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s)
		t.Cleanup(hs.Close)
		litellmTeamNew(t, s, `{"team_id":"eng","team_alias":"Engineering"}`)
		vk := litellmGenerate(t, s, `{"team_id":"eng"}`)

		img := "data:image/png;base64," + strings.Repeat("iVBORw0KGgoAAAANSUhEUg", 50)
		resp, body := post(t, hs.URL+"/v1/chat/completions", vk.Key, `{"model":"up/tools","stream":true,"temperature":0.2,"max_tokens":50,"user":"alice",
			"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object"}}}],
			"messages":[{"role":"system","content":"You forecast."},{"role":"user","content":[{"type":"text","text":"Weather where this was taken?"},{"type":"image_url","image_url":{"url":"`+img+`"}}]}]}`)
		if resp.StatusCode != 200 || !strings.Contains(string(body), "[DONE]") {
			t.Fatalf("streamed chat: %d %s", resp.StatusCode, body)
		}
		if resp, body := post(t, hs.URL+"/v1/messages", vk.Key, `{"model":"up/ok","max_tokens":30,"system":"Be brief.","messages":[{"role":"user","content":"Why is the sky blue?"}]}`); resp.StatusCode != 200 {
			t.Fatalf("messages: %d %s", resp.StatusCode, body)
		}
		if resp, body := post(t, hs.URL+"/v1/responses", vk.Key, `{"model":"up/ok","instructions":"Answer in French.","input":"Say hello","store":false}`); resp.StatusCode != 200 {
			t.Fatalf("responses: %d %s", resp.StatusCode, body)
		}
		return exp.GetSpans(), []string{vk.Key, testKey, "sk-upstream-secret"}
	}

	t.Run("on", func(t *testing.T) {
		spans, secrets := run(t, true)
		var chats []tracetest.SpanStub
		for _, sp := range spans {
			if strings.HasPrefix(sp.Name, "chat ") {
				chats = append(chats, sp)
			}
			for _, a := range sp.Attributes {
				for _, sec := range secrets {
					if strings.Contains(a.Value.Emit(), sec) {
						t.Errorf("span %s attribute %s holds a key secret", sp.Name, a.Key)
					}
				}
			}
		}
		if len(chats) != 3 {
			t.Fatalf("%d chat spans", len(chats))
		}
		streamed, messages, responses := chats[0].Attributes, chats[1].Attributes, chats[2].Attributes
		for key, want := range map[string]string{
			"gen_ai.request.temperature":     "0.2",
			"gen_ai.request.max_tokens":      "50",
			"gen_ai.response.finish_reasons": `["tool_calls"]`,
			"user.id":                        "alice",
			"switchyard.team_id":             "eng",
			"switchyard.stream":              "true",
		} {
			if got := attr(streamed, key); got != want {
				t.Errorf("streamed chat span %s = %q, want %q", key, got, want)
			}
		}
		if attr(streamed, "switchyard.key_id") == "" || attr(streamed, "gen_ai.response.id") == "" {
			t.Errorf("streamed chat span lacks the key id or response id: %v", streamed)
		}
		var out []struct {
			Parts []struct {
				Type      string          `json:"type"`
				Content   string          `json:"content"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"parts"`
		}
		if err := json.Unmarshal([]byte(attr(streamed, "gen_ai.output.messages")), &out); err != nil || len(out) != 1 || len(out[0].Parts) != 2 {
			t.Fatalf("streamed answer %q (%v)", attr(streamed, "gen_ai.output.messages"), err)
		}
		if p := out[0].Parts; p[0].Type != "text" || p[0].Content != "Hello" || p[1].Type != "tool_call" || p[1].ID != "call_9" ||
			p[1].Name != "weather" || string(p[1].Arguments) != `{"city":"Paris"}` {
			t.Errorf("streamed answer assembled as %+v", p)
		}
		in := attr(streamed, "gen_ai.input.messages")
		if !strings.Contains(in, "Weather where this was taken?") || !strings.Contains(in, `"type":"image"`) || strings.Contains(in, "iVBORw0KGgo") {
			t.Errorf("streamed prompt %s", in)
		}
		if !strings.Contains(attr(streamed, "gen_ai.system_instructions"), "You forecast.") || !strings.Contains(attr(streamed, "gen_ai.tool.definitions"), `"weather"`) {
			t.Errorf("streamed system %q, tools %q", attr(streamed, "gen_ai.system_instructions"), attr(streamed, "gen_ai.tool.definitions"))
		}
		if !strings.Contains(attr(messages, "gen_ai.system_instructions"), "Be brief.") || !strings.Contains(attr(messages, "gen_ai.input.messages"), "Why is the sky blue?") ||
			!strings.Contains(attr(messages, "gen_ai.output.messages"), "Brief answer.") || attr(messages, "gen_ai.request.max_tokens") != "30" {
			t.Errorf("Messages span %v", messages)
		}
		if !strings.Contains(attr(responses, "gen_ai.system_instructions"), "Answer in French.") || !strings.Contains(attr(responses, "gen_ai.input.messages"), "Say hello") ||
			!strings.Contains(attr(responses, "gen_ai.output.messages"), "Brief answer.") {
			t.Errorf("Responses span %v", responses)
		}
	})
	t.Run("off", func(t *testing.T) {
		spans, _ := run(t, false)
		n := 0
		for _, sp := range spans {
			if !strings.HasPrefix(sp.Name, "chat ") {
				continue
			}
			n++
			for _, a := range sp.Attributes {
				if k := string(a.Key); strings.HasSuffix(k, ".messages") || k == "gen_ai.system_instructions" || k == "gen_ai.tool.definitions" {
					t.Errorf("capture off, span %s has %s", sp.Name, k)
				}
			}
			if attr(sp.Attributes, "gen_ai.response.finish_reasons") == "" {
				t.Errorf("span %s lacks gen_ai.response.finish_reasons with capture off", sp.Name)
			}
		}
		if n != 3 {
			t.Errorf("%d chat spans", n)
		}
	})
}
