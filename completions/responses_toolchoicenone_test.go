package completions

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestResponsesToolChoiceNoneLeavesSearchOut: a /v1/responses request declaring a
// web_search tool with tool_choice "none" may call no tool, so the provider is not offered
// its own search (which it bills per search), as OpenAI does not search then; with "auto"
// the same request is.
func TestResponsesToolChoiceNoneLeavesSearchOut(t *testing.T) {
	for _, c := range []struct {
		choice string
		search bool
	}{{`"none"`, false}, {`"auto"`, true}} {
		g, gm := reviewS9GeminiGateway(t)
		if _, err := reviewS9ResponsesErr(g, `{"model":"gemini/gemini-2.5-flash","input":"News today?",
			"tools":[{"type":"web_search"}],"tool_choice":`+c.choice+`}`); err != nil {
			t.Fatalf("tool_choice %s: %v", c.choice, err)
		}
		gm.mu.Lock()
		if len(gm.bodies) != 1 {
			t.Fatalf("tool_choice %s: %d upstream calls, want 1", c.choice, len(gm.bodies))
		}
		b, _ := json.Marshal(gm.bodies[0])
		gm.mu.Unlock()
		if got := strings.Contains(string(b), "google_search"); got != c.search {
			t.Errorf("tool_choice %s: Google Search sent %v, want %v (body %s)", c.choice, got, c.search, b)
		}
	}
}
