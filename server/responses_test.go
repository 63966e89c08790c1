package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestResponsesText: a streamed text answer through /v1/responses arrives as
// output_item.added, content_part.added, one output_text.delta per fragment, the .done
// events and response.completed with the whole text and usage; a content filter's refusal
// is an incomplete response (reason content_filter), whole and streamed, and the fallback
// model is not asked.
func TestResponsesText(t *testing.T) {
	hs, _, up := completionsServer(t)
	url := hs.URL + "/v1/responses"
	resp, b := do2(t, "POST", url, testKey, `{"model":"up/ok","input":"hi","stream":true}`, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	var names []string
	var text strings.Builder
	var final map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line[6:]), &ev); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		names = append(names, ev["type"].(string))
		if ev["type"] == "response.output_text.delta" {
			text.WriteString(ev["delta"].(string))
		}
		if ev["type"] == "response.completed" {
			final = ev["response"].(map[string]any)
		}
	}
	want := "response.created,response.in_progress,response.output_item.added,response.content_part.added," +
		"response.output_text.delta,response.output_text.delta,response.output_text.delta," +
		"response.output_text.done,response.content_part.done,response.output_item.done,response.completed"
	if strings.Join(names, ",") != want || text.String() != "Hello from ok" {
		t.Fatalf("events %v text %q", names, text.String())
	}
	out := final["output"].([]any)[0].(map[string]any)
	if final["status"] != "completed" || final["model"] != "up/ok" || out["content"].([]any)[0].(map[string]any)["text"] != "Hello from ok" ||
		final["usage"].(map[string]any)["total_tokens"].(float64) != 10 {
		t.Fatalf("completed response %v", final)
	}

	for _, stream := range []bool{false, true} {
		body := `{"model":"up/unsafe","fallback_models":["up/ok"],"input":"bad","stream":` + map[bool]string{false: "false", true: "true"}[stream] + `}`
		resp, b := do2(t, "POST", url, testKey, body, nil)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"status":"incomplete"`) || !strings.Contains(string(b), `"reason":"content_filter"`) {
			t.Fatalf("content filter (stream %v): %d %s", stream, resp.StatusCode, b)
		}
		if stream && !strings.Contains(string(b), "event: response.incomplete") {
			t.Fatalf("streamed content filter without response.incomplete: %s", b)
		}
	}
	up.mu.Lock()
	n := len(up.messages)
	up.mu.Unlock()
	if n != 3 {
		t.Errorf("upstream called %d times, want 3 (the fallback never)", n)
	}
	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","input":[]}`, nil)
	wantOpenAIError(t, "empty input", resp, b, 400, "invalid_request_error", "")
}
