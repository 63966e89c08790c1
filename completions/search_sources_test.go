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

// claudeSearchEvents is Claude answering after its own web search: text, the search's
// server_tool_use and web_search_tool_result, then the cited text.
var claudeSearchEvents = []string{
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll search for that."}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"swallow airspeed\"}"}}`,
	`{"type":"content_block_stop","index":1}`,
	`{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.com/swallow","title":"Swallows","encrypted_content":"Eq"}]}}`,
	`{"type":"content_block_stop","index":2}`,
	`{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"About 11 m/s."}}`,
	`{"type":"content_block_stop","index":3}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":20,"server_tool_use":{"web_search_requests":1}}}`,
	`{"type":"message_stop"}`,
}

// TestMessagesReturnSearchSources: on /v1/messages, the pages a provider's own search found
// come back as Claude's web search shows them — a server_tool_use of web_search and its
// web_search_tool_result, between the text before the search and the text after — whole
// and streamed (Claude Code lists them as the search's links); chat completions and
// /v1/responses show them as url_citation annotations on whole answers, and their streams
// carry no sources event.
func TestMessagesReturnSearchSources(t *testing.T) {
	claude := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range claudeSearchEvents {
				io.WriteString(w, "data: "+ev+"\n\n")
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"end_turn","content":[`+
			`{"type":"text","text":"I'll search for that."},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},`+
			`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.com/swallow","title":"Swallows","encrypted_content":"Eq"}]},`+
			`{"type":"text","text":"About 11 m/s."}],"usage":{"input_tokens":10,"output_tokens":20,"server_tool_use":{"web_search_requests":1}}}`)
	}))
	t.Cleanup(claude.Close)
	g, err := New(Options{Providers: fakeRegistry{"anthropic": providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: claude.URL, APIKey: "k"})},
		Prices: fakePrices{}, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"model":"anthropic/claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Perform a web search for the query: swallow"}],` +
		`"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":8}],"tool_choice":{"type":"tool","name":"web_search"}}`
	_, c, err := messagesRequest(t, body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Complete(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, b := range NewAnthropicResponse(resp, "anthropic/claude-sonnet-4-5").Content {
		types = append(types, b.Type)
		if b.Type == "web_search_tool_result" && (len(b.Content) != 1 || b.Content[0].URL != "https://example.com/swallow" || b.Content[0].Title != "Swallows") {
			t.Errorf("results %+v", b.Content)
		}
	}
	if got := strings.Join(types, ","); got != "server_tool_use,web_search_tool_result,text" {
		t.Errorf("whole: blocks %s", got)
	}

	req.Stream = true
	st, err := g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteAnthropicStream(rec, st, "anthropic/claude-sonnet-4-5"); err != nil {
		t.Fatal(err)
	}
	var started []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string                  `json:"type"`
			Index        int                     `json:"index"`
			ContentBlock *AnthropicResponseBlock `json:"content_block"`
		}
		json.Unmarshal([]byte(data), &ev)
		if ev.Type == "content_block_start" {
			started = append(started, ev.ContentBlock.Type)
			if ev.ContentBlock.Type == "web_search_tool_result" && (len(ev.ContentBlock.Content) != 1 || ev.ContentBlock.Content[0].URL != "https://example.com/swallow") {
				t.Errorf("streamed results %+v", ev.ContentBlock.Content)
			}
		}
	}
	if got := strings.Join(started, ","); got != "text,server_tool_use,web_search_tool_result,text" {
		t.Errorf("streamed: blocks %s\n%s", got, rec.Body.String())
	}

	// Chat completions and /v1/responses, whole: the pages as url_citation annotations.
	whole, err := chatBody(t, `{"model":"anthropic/claude-sonnet-4-5","messages":[{"role":"user","content":"Swallow speed?"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	wresp, err := g.Complete(context.Background(), Scope{}, whole)
	if err != nil {
		t.Fatal(err)
	}
	ann := NewOpenAIChatCompletion(wresp, time.Now()).Choices[0].Message.Annotations
	if len(ann) != 1 || ann[0].Type != "url_citation" || ann[0].URLCitation.URL != "https://example.com/swallow" ||
		ann[0].URLCitation.EndIndex != len([]rune(wresp.Text())) {
		t.Errorf("chat annotations %+v", ann)
	}
	var rreq ResponsesRequest
	json.Unmarshal([]byte(`{"model":"anthropic/claude-sonnet-4-5","input":"Swallow speed?"}`), &rreq)
	o := NewResponseObject(&rreq, "resp_1", time.Now())
	o.Complete(wresp)
	if got := jsonOf(o.Output[len(o.Output)-1].Content[0].Annotations); !strings.Contains(got, `"type":"url_citation"`) || !strings.Contains(got, `"url":"https://example.com/swallow"`) {
		t.Errorf("responses annotations %s", got)
	}

	// Chat completions: the same answer, no sources event in its stream.
	creq, err := chatBody(t, `{"model":"anthropic/claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"Swallow speed?"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := g.Stream(context.Background(), Scope{}, creq)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for {
		ck, err := cs.Recv()
		if err != nil {
			break
		}
		if ck.Type == EventSources {
			t.Errorf("a chat stream got a sources event")
		}
	}
}

// TestMessagesReturnGeminiGroundingSources: Claude Code's WebSearch on a Gemini model gets
// the pages Google Search grounded the answer on as a web_search_tool_result, streamed.
func TestMessagesReturnGeminiGroundingSources(t *testing.T) {
	gemini := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"About 11 m/s."}],"role":"model"},"finishReason":"STOP",`+
			`"groundingMetadata":{"webSearchQueries":["swallow airspeed"],"groundingChunks":[{"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA","title":"birds.example"}}]}}],`+
			`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7}}`+"\n\n")
	}))
	t.Cleanup(gemini.Close)
	g, err := New(Options{Providers: fakeRegistry{"gemini": providers.NewGemini(providers.Config{BaseURL: gemini.URL, APIKey: "k"})},
		Prices: fakePrices{}, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"model":"gemini/gemini-2.5-flash","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Perform a web search for the query: swallow"}],` +
		`"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":8}],"tool_choice":{"type":"tool","name":"web_search"}}`
	_, c, err := messagesRequest(t, body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteAnthropicStream(rec, st, "gemini/gemini-2.5-flash"); err != nil {
		t.Fatal(err)
	}
	if out := rec.Body.String(); !strings.Contains(out, `"type":"web_search_tool_result"`) || !strings.Contains(out, `grounding-api-redirect/AAA`) || !strings.Contains(out, `"title":"birds.example"`) {
		t.Errorf("stream:\n%s", out)
	}
}

// TestStreamsCiteSearchSources: streamed chat completions and /v1/responses cite the pages
// the provider's search found as their whole answers do — a chunk with url_citation
// annotations before the finish chunk; response.output_text.annotation.added events
// before output_text.done, and the annotations on the finished text part — which is how
// the Vercel AI SDK and OpenAI's SDKs read a search model's sources.
func TestStreamsCiteSearchSources(t *testing.T) {
	gemini := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(raw), "google_search") && !strings.Contains(string(raw), "googleSearch") {
			w.WriteHeader(400) // as a model not asked to search would not ground: fail loudly
			io.WriteString(w, `{"error":{"code":400,"message":"the test expects a search request","status":"INVALID_ARGUMENT"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"About 11 m/s."}],"role":"model"},"finishReason":"STOP",`+
			`"groundingMetadata":{"webSearchQueries":["swallow airspeed"],"groundingChunks":[{"web":{"uri":"https://example.com/a","title":"a.example"}},{"web":{"uri":"https://example.com/b","title":"b.example"}}]}}],`+
			`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7}}`+"\n\n")
	}))
	t.Cleanup(gemini.Close)
	g, err := New(Options{Providers: fakeRegistry{"gemini": providers.NewGemini(providers.Config{BaseURL: gemini.URL, APIKey: "k"})},
		Prices: fakePrices{}, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	creq, err := chatBody(t, `{"model":"gemini/gemini-2.5-flash","stream":true,"web_search_options":{},"messages":[{"role":"user","content":"Swallow speed?"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.Stream(context.Background(), Scope{}, creq)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStream(rec, st, false); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ck OpenAIChunk
		json.Unmarshal([]byte(data), &ck)
		switch d := ck.Choices[0]; {
		case len(d.Delta.Annotations) > 0:
			a := d.Delta.Annotations
			if len(a) != 2 || a[1].URLCitation.URL != "https://example.com/b" || a[1].URLCitation.EndIndex != len("About 11 m/s.") {
				t.Errorf("annotations %+v", a)
			}
			kinds = append(kinds, "annotations")
		case d.FinishReason != nil:
			kinds = append(kinds, "finish")
		case d.Delta.Content != "":
			kinds = append(kinds, "text")
		}
	}
	if got := strings.Join(kinds, ","); got != "text,annotations,finish" {
		t.Errorf("chat stream: %s\n%s", got, rec.Body.String())
	}

	var rreq ResponsesRequest
	json.Unmarshal([]byte(`{"model":"gemini/gemini-2.5-flash","input":"Swallow speed?","stream":true,"tools":[{"type":"web_search"}]}`), &rreq)
	req := responsesToRequest(t, `{"model":"gemini/gemini-2.5-flash","input":"Swallow speed?","stream":true,"tools":[{"type":"web_search"}]}`)
	st, err = g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	if err := WriteResponsesStream(rec, st, NewResponseObject(&rreq, "resp_1", time.Now())); err != nil {
		t.Fatal(err)
	}
	var events []string
	var final map[string]any
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		json.Unmarshal([]byte(data), &ev)
		typ, _ := ev["type"].(string)
		if strings.HasPrefix(typ, "response.output_text.") {
			events = append(events, strings.TrimPrefix(typ, "response.output_text."))
		}
		if typ == "response.completed" {
			final = ev
		}
	}
	if got := strings.Join(events, ","); got != "delta,annotation.added,annotation.added,done" {
		t.Errorf("responses stream: %s", got)
	}
	if got := jsonOf(final); !strings.Contains(got, `"annotations":[{"end_index":13,"start_index":0,"title":"a.example","type":"url_citation","url":"https://example.com/a"}`) {
		t.Errorf("completed response %s", got)
	}
}

// TestChatWebSearchOptions: web_search_options on chat completions asks for the
// provider's own search; a model without one is a 400 naming the field.
func TestChatWebSearchOptions(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "ok"})
	req, err := chatBody(t, `{"model":"a/m","web_search_options":{},"messages":[{"role":"user","content":"x"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	if _, err := h.g.Complete(context.Background(), Scope{}, req); !errors.As(err, &ve) || ve.Field != "web_search_options" {
		t.Errorf("a model without search: %v", err)
	}
	if req.Search != true {
		t.Error("web_search_options did not ask for search")
	}
}
