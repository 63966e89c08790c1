package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestOversizedAnswerIsA502: an upstream answering past the 32 MiB cap on an answer is at
// fault, not the client: the fallback model is tried (the model itself is not called
// again), and when none answers the client gets a 502 saying the answer exceeded the cap,
// not a 400 as if its request were wrong.
func TestOversizedAnswerIsA502(t *testing.T) {
	for _, api := range []string{"openai", "native"} {
		hs, up := faultServer(t)
		url, body := hs.URL+"/v1/chat/completions", `{"model":"up/huge","fallback_models":[%s],"messages":[{"role":"user","content":"Hi"}]}`
		if api == "native" {
			url, body = hs.URL+"/api/v1/completions", `{"models":["up/huge"],"fallback_models":[%s],"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`
		}
		resp, b := post(t, url, testKey, fmt.Sprintf(body, `"up/ok"`))
		if resp.StatusCode != 200 || !strings.Contains(string(b), faultAnswer) || up.count("huge") != 1 || up.count("ok") != 1 {
			t.Errorf("%s, fallback: %d (huge called %d times, ok %d):\n%s", api, resp.StatusCode, up.count("huge"), up.count("ok"), b)
		}
		resp, b = post(t, url, testKey, fmt.Sprintf(body, `"pf/huge"`))
		if resp.StatusCode != 502 || !strings.Contains(string(b), "exceeded the 32 MiB cap") || up.count("huge") != 3 {
			t.Errorf("%s, every model too large: %d (huge called %d times in all, want 3):\n%s", api, resp.StatusCode, up.count("huge"), b)
		}
	}
}
