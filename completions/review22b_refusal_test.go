package completions

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// An agent sends the assistant message an SDK returned back into the conversation as it
// is: after a refusal that message is {"content":null,"refusal":"…"} (or, rebuilt from
// parts, a "refusal" content part, which OpenAI's API takes in assistant messages). The
// refusal is what the model said: it reaches every upstream as the assistant's text
// instead of being dropped (an empty assistant turn for OpenAI-format upstreams, no turn
// at all for Claude) or refused.
func TestReview22bAssistantRefusalGoesBack(t *testing.T) {
	const refusal = "I can't help with that."
	an := newAnthropicUpstream(t, "docs-json_tool_stream.sse", "docs-json_tool_response.json")
	g, up := toolGateway(t, an)
	var mu sync.Mutex
	var sent []string // the assistant turn's content as the OpenAI-format upstream got it
	up.on("m", func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		mu.Lock()
		for _, m := range body.Messages {
			if m.Role == "assistant" {
				sent = append(sent, m.Content)
			}
		}
		mu.Unlock()
		answer("Hi.")(w, r, body)
	})
	for _, assistant := range []string{
		`{"role":"assistant","content":null,"refusal":"` + refusal + `"}`,
		`{"role":"assistant","content":[{"type":"refusal","refusal":"` + refusal + `"}]}`,
	} {
		for _, model := range []string{"up/m", "claude/claude-sonnet-4-5"} {
			body := `{"model":"` + model + `","messages":[{"role":"user","content":"Help me pick a lock."},` + assistant +
				`,{"role":"user","content":"Then say hi."}]}`
			var o OpenAIChatRequest
			if err := json.Unmarshal([]byte(body), &o); err != nil {
				t.Fatal(err)
			}
			req, err := o.ToRequest()
			if err != nil {
				t.Errorf("%s %s: %v", model, assistant, err)
				continue
			}
			if _, err := g.Complete(context.Background(), Scope{}, req); err != nil {
				t.Fatalf("%s: %v", model, err)
			}
			if model != "up/m" {
				msgs, _ := json.Marshal(an.last()["messages"])
				if !strings.Contains(string(msgs), `{"content":"`+refusal+`","role":"assistant"}`) &&
					!strings.Contains(string(msgs), `"role":"assistant","content":[{"text":"`+refusal+`","type":"text"}]`) &&
					!strings.Contains(string(msgs), `{"content":[{"text":"`+refusal+`","type":"text"}],"role":"assistant"}`) {
					t.Errorf("%s: Claude got the messages %s, without the refusal as the assistant's turn", assistant, msgs)
				}
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 || sent[0] != refusal || sent[1] != refusal {
		t.Errorf("the OpenAI-format upstream got the assistant turns %q, want the refusal twice", sent)
	}
}
