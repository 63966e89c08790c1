package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/usagelog"
)

// audioChatUpstream answers every chat completion aloud, reporting the prompt's and the
// answer's audio tokens as OpenAI does.
var audioChatUpstream = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"chatcmpl-a","object":"chat.completion","created":1,"model":"ok","choices":[{"index":0,"message":{"role":"assistant","content":null,`+
		`"audio":{"id":"audio_1","data":"UklGRg==","expires_at":2000000000,"transcript":"hello there"}},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":30,"completion_tokens":20,"total_tokens":50,"prompt_tokens_details":{"audio_tokens":25,"cached_tokens":0},"completion_tokens_details":{"audio_tokens":15}}}`)
})

// TestSpendLogsAudioTokens: a chat request with a recording answered aloud lists its audio
// tokens where its token counts are: /spend/logs' metadata.usage_object (LiteLLM's
// prompt_tokens_details.audio_tokens and completion_tokens_details.audio_tokens) and
// GET /api/v1/usage/requests (prompt_audio_tokens, completion_audio_tokens); a request
// without audio has null details and no audio fields.
func TestSpendLogsAudioTokens(t *testing.T) {
	hs, s := keysServerWith(t, nil, audioChatUpstream, Config{APIKeys: []string{testKey}})
	resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"openai/ok","modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},`+
		`"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("audio chat: %d %s", resp.StatusCode, b)
	}
	rows := spendLogs(t, s, testKey, "")
	if len(rows) != 1 {
		t.Fatalf("rows: %+v", rows)
	}
	uo, _ := json.Marshal(rows[0].Metadata["usage_object"])
	if want := `{"completion_tokens":20,"completion_tokens_details":{"audio_tokens":15},"prompt_tokens":30,"prompt_tokens_details":{"audio_tokens":25},"total_tokens":50}`; string(uo) != want {
		t.Fatalf("metadata.usage_object %s, want %s", uo, want)
	}
	r := do(t, s, "GET", "/api/v1/usage/requests", testKey, "")
	var native struct{ Data []usagelog.Request }
	if err := json.Unmarshal([]byte(r.raw), &native); err != nil || len(native.Data) != 1 {
		t.Fatalf("usage requests: %d %s (%v)", r.status, r.raw, err)
	}
	if d := native.Data[0]; d.PromptAudioTokens != 25 || d.CompletionAudioTokens != 15 || d.PromptTokens != 30 {
		t.Fatalf("usage request's audio tokens: %+v", d)
	}

	// Without audio: null details, as LiteLLM logs them.
	hs2, plain := keysServer(t, nil, 0)
	chatOK(t, hs2.URL, testKey, "openai/ok", "")
	rows = spendLogs(t, plain, testKey, "")
	uo, _ = json.Marshal(rows[0].Metadata["usage_object"])
	var got map[string]any
	json.Unmarshal(uo, &got)
	if len(rows) != 1 || got["prompt_tokens_details"] != nil || got["completion_tokens_details"] != nil || got["prompt_tokens"] != float64(rows[0].PromptTokens) {
		t.Fatalf("usage_object without audio: %s", uo)
	}
	if sw, _ := json.Marshal(rows[0].Metadata["switchyard"]); strings.Contains(string(sw), "audio_tokens") {
		t.Fatalf("a request without audio has audio fields: %s", sw)
	}
}
