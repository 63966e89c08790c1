package providers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestAnthropicWebSearchParagraphs: the text Claude writes after its own web search starts
// a paragraph of its own instead of running on from the text before (its cited pieces
// still join as written), whole and streamed; the searches it made are counted (billed
// apart from tokens).
func TestAnthropicWebSearchParagraphs(t *testing.T) {
	const want = "I'll search for that.\n\nSwallows fly at 11 m/s, says the source."
	whole := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"end_turn","content":[` +
		`{"type":"text","text":"I'll search for that."},` +
		`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"swallow airspeed"}},` +
		`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.com","title":"Swallows","encrypted_content":"Eq"}]},` +
		`{"type":"text","text":"Swallows fly at 11 m/s","citations":[{"type":"web_search_result_location","url":"https://example.com","title":"Swallows","cited_text":"11 m/s","encrypted_index":"Eo"}]},` +
		`{"type":"text","text":", says the source."}],"usage":{"input_tokens":10,"output_tokens":20,"server_tool_use":{"web_search_requests":1}}}`
	up := newFakeUpstream(t, "application/json", whole)
	req := &providers.Request{Model: "claude-sonnet-4-5", Search: true, Messages: []providers.Message{{Role: "user", Content: "Swallow speed?"}}}
	resp, err := up.provider(t, providers.FormatAnthropic).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != want || resp.Usage.WebSearches != 1 || len(resp.Sources) != 1 || resp.Sources[0] != (providers.Source{URL: "https://example.com", Title: "Swallows"}) {
		t.Errorf("text %q (want %q), web searches %d (want 1), sources %+v", resp.Text, want, resp.Usage.WebSearches, resp.Sources)
	}

	events := []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll search for that."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"swallow airspeed\"}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.com","title":"Swallows","encrypted_content":"Eq"}]}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://example.com","title":"Swallows","cited_text":"11 m/s","encrypted_index":"Eo"}}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Swallows fly at 11 m/s"}}`,
		`{"type":"content_block_stop","index":3}`,
		`{"type":"content_block_start","index":4,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":", says the source."}}`,
		`{"type":"content_block_stop","index":4}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":20,"server_tool_use":{"web_search_requests":1}}}`,
		`{"type":"message_stop"}`,
	}
	var sse strings.Builder
	for _, ev := range events {
		sse.WriteString("data: " + ev + "\n\n")
	}
	up = newFakeUpstream(t, "text/event-stream", sse.String())
	s, err := up.provider(t, providers.FormatAnthropic).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	searches := 0
	var sources []providers.Source
	for _, c := range collect(t, s) {
		text.WriteString(c.Text)
		sources = append(sources, c.Sources...)
		if c.Usage != nil {
			searches = c.Usage.WebSearches
		}
	}
	if text.String() != want || searches != 1 || len(sources) != 1 || sources[0].URL != "https://example.com" {
		t.Errorf("streamed text %q (want %q), web searches %d (want 1), sources %+v", text.String(), want, searches, sources)
	}
}

// TestGeminiGroundedSearchesCounted: an answer Gemini grounded on Google Search counts its
// billed searches — one per grounded answer on Gemini 2.x, one per query on Gemini 3 —
// whole and streamed.
func TestGeminiGroundedSearchesCounted(t *testing.T) {
	const grounded = `{"candidates":[{"content":{"parts":[{"text":"Swallows fly at 11 m/s."}],"role":"model"},"finishReason":"STOP",` +
		`"groundingMetadata":{"webSearchQueries":["swallow airspeed","unladen swallow"]}}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7}}`
	for model, want := range map[string]int{"gemini-2.5-flash": 1, "gemini-3-pro-preview": 2} {
		up := newFakeUpstream(t, "application/json", grounded)
		req := &providers.Request{Model: model, Search: true, Messages: []providers.Message{{Role: "user", Content: "Swallow speed?"}}}
		resp, err := up.provider(t, providers.FormatGemini).Complete(context.Background(), req)
		if err != nil || resp.Usage.WebSearches != want {
			t.Errorf("%s: %+v %v, want %d web searches", model, resp, err, want)
		}
		up = newFakeUpstream(t, "text/event-stream", "data: "+grounded+"\n\n")
		s, err := up.provider(t, providers.FormatGemini).Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got := collect(t, s)
		if last := got[len(got)-1]; last.Usage == nil || last.Usage.WebSearches != want {
			t.Errorf("%s streamed: %s, want %d web searches", model, jsonOf(last), want)
		}
	}
}

// TestGeminiGroundingSources: the pages Gemini grounded an answer on (groundingChunks)
// come back as the answer's sources, each once — whole, and streamed as their own chunk
// after the text of the chunk that carried them, a page repeated by a later chunk not
// sent twice.
func TestGeminiGroundingSources(t *testing.T) {
	chunk := func(text, uris string) string {
		return `{"candidates":[{"content":{"parts":[{"text":"` + text + `"}],"role":"model"},` +
			`"groundingMetadata":{"webSearchQueries":["swallow airspeed"],"groundingChunks":[` + uris + `]}}]}`
	}
	a := `{"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA","title":"birds.example"}}`
	b := `{"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/BBB","title":"wiki.example"}}`
	last := `{"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"finishReason":"STOP","groundingMetadata":{"groundingChunks":[` + a + `,` + b + `]}}],` +
		`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7}}`
	req := &providers.Request{Model: "gemini-2.5-flash", Search: true, Messages: []providers.Message{{Role: "user", Content: "Swallow speed?"}}}

	whole := strings.Replace(last, `{"text":"."}`, `{"text":"11 m/s."}`, 1)
	resp, err := newFakeUpstream(t, "application/json", whole).provider(t, providers.FormatGemini).Complete(context.Background(), req)
	if err != nil || len(resp.Sources) != 2 || resp.Sources[0].URL != "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA" || resp.Sources[1].Title != "wiki.example" {
		t.Fatalf("whole: %+v %v", resp, err)
	}

	sse := "data: " + chunk("11 m/s", a) + "\n\ndata: " + last + "\n\n"
	s, err := newFakeUpstream(t, "text/event-stream", sse).provider(t, providers.FormatGemini).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range collect(t, s) {
		switch {
		case c.Text != "":
			order = append(order, "text:"+c.Text)
		case len(c.Sources) > 0:
			for _, src := range c.Sources {
				order = append(order, "source:"+src.Title)
			}
		}
	}
	if got := strings.Join(order, ","); got != "text:11 m/s,source:birds.example,text:.,source:wiki.example" {
		t.Errorf("streamed %s", got)
	}
}

// TestOpenAIChatAnnotationsAreSources: a search model's url_citation annotations on chat
// completions (message.annotations whole; delta.annotations streamed) are the answer's
// sources, each once.
func TestOpenAIChatAnnotationsAreSources(t *testing.T) {
	ann := `[{"type":"url_citation","url_citation":{"start_index":0,"end_index":9,"url":"https://a.example/x","title":"A"}},` +
		`{"type":"url_citation","url_citation":{"start_index":10,"end_index":20,"url":"https://b.example/y","title":"B"}},` +
		`{"type":"url_citation","url_citation":{"start_index":21,"end_index":25,"url":"https://a.example/x","title":"A"}}]`
	whole := `{"id":"c","object":"chat.completion","model":"gpt-4o-search-preview","choices":[{"index":0,"message":{"role":"assistant","content":"Swallows cruise at 11 m/s.","annotations":` + ann + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`
	req := &providers.Request{Model: "gpt-4o-search-preview", Search: true, Messages: []providers.Message{{Role: "user", Content: "Swallow speed?"}}}
	resp, err := newFakeUpstream(t, "application/json", whole).provider(t, providers.FormatOpenAI).Complete(context.Background(), req)
	if err != nil || len(resp.Sources) != 2 || resp.Sources[0].URL != "https://a.example/x" || resp.Sources[1].Title != "B" {
		t.Fatalf("whole: %+v %v", resp, err)
	}
	sse := `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Swallows cruise at 11 m/s."},"finish_reason":null}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"annotations":` + ann + `},"finish_reason":null}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n"
	s, err := newFakeUpstream(t, "text/event-stream", sse).provider(t, providers.FormatOpenAI).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var sources []providers.Source
	var text strings.Builder
	for _, c := range collect(t, s) {
		sources = append(sources, c.Sources...)
		text.WriteString(c.Text)
	}
	if len(sources) != 2 || sources[1].URL != "https://b.example/y" || text.String() != "Swallows cruise at 11 m/s." {
		t.Errorf("streamed: %q, sources %+v", text.String(), sources)
	}
}
