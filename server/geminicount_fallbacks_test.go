package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestGeminiCountTokensTakesFallbacks: countTokens takes LiteLLM's fallbacks and
// context_window_fallbacks (either spelling, at the top or in a generateContentRequest) as
// generateContent does, and ignores them: the count is the prompt's alone, no model is
// called, and fallbacks the server does not know are not checked. A name neither knows is still refused.
func TestGeminiCountTokensTakesFallbacks(t *testing.T) {
	hs, up := geminiServer(t)
	const contents = `"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}]`
	count := func(body string) int {
		t.Helper()
		resp, b := geminiPost(t, hs.URL+"/v1beta/models/tl/chat:countTokens", body)
		var got struct{ TotalTokens int }
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		return got.TotalTokens
	}
	plain := count(`{` + contents + `}`)
	for _, body := range []string{
		`{` + contents + `,"fallbacks":["tl/other"]}`,
		`{` + contents + `,"context_window_fallbacks":[{"tl/chat":["tl/big"]}]}`,
		`{` + contents + `,"fallbacks":["tl/other"],"contextWindowFallbacks":[{"tl/chat":["tl/big"]}]}`,
		`{"generateContentRequest":{` + contents + `,"fallbacks":["nope/zzz"],"context_window_fallbacks":[{"tl/chat":["nope/big"]}]}}`,
	} {
		if n := count(body); n != plain {
			t.Errorf("%s: %d tokens, want %d as without fallbacks", body, n, plain)
		}
	}
	if up.count() != 0 {
		t.Error("countTokens called the upstream")
	}
	resp, b := geminiPost(t, hs.URL+"/v1beta/models/tl/chat:countTokens", `{`+contents+`,"fallback_models":["tl/other"]}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "fallback_models") {
		t.Errorf("an unknown name: %d %s, want a 400 naming it", resp.StatusCode, b)
	}
}
