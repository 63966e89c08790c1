package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// TestVirtualKeyTokenRateHeaders: a key with tokens_per_minute carries OpenAI's and
// LiteLLM's x-ratelimit-limit-tokens and x-ratelimit-remaining-tokens: its bound, and what
// the last minute's answers leave of it; a key without one carries neither.
func TestVirtualKeyTokenRateHeaders(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"tokens_per_minute":1000}`)
	resp, b := chatWith(t, hs, vk.Key, "openai/ok")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first call: %d %s", resp.StatusCode, b)
	}
	if l, r := resp.Header.Get("X-Ratelimit-Limit-Tokens"), resp.Header.Get("X-Ratelimit-Remaining-Tokens"); l != "1000" || r != "1000" {
		t.Fatalf("first call: limit %q remaining %q, want 1000 and 1000", l, r)
	}
	var out struct {
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	json.Unmarshal(b, &out)
	if out.Usage.TotalTokens == 0 {
		t.Fatalf("no usage in %s", b)
	}
	resp, b = chatWith(t, hs, vk.Key, "openai/ok")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("second call: %d %s", resp.StatusCode, b)
	}
	if r, want := resp.Header.Get("X-Ratelimit-Remaining-Tokens"), strconv.Itoa(1000-out.Usage.TotalTokens); r != want {
		t.Errorf("second call: remaining %q, want %s (the first answer's %d tokens taken)", r, want, out.Usage.TotalTokens)
	}
	plain := issue(t, s, `{}`)
	resp, _ = chatWith(t, hs, plain.Key, "openai/ok")
	if resp.Header.Get("X-Ratelimit-Limit-Tokens") != "" {
		t.Errorf("a key without tokens_per_minute carries x-ratelimit-limit-tokens %q", resp.Header.Get("X-Ratelimit-Limit-Tokens"))
	}
}
