package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// serve --litellm-config holds a deployment to its rpm: with rpm: 2 on the first
// deployment of a model_name (its share too, so it is tried first), its third request
// goes to the other deployment; a model_name whose only deployment is at rpm: 2 answers
// its third request with a 429 in OpenAI's envelope, Retry-After and a message naming it.
// Counted at the scripted upstreams (the window is a minute: the test takes far less).
func TestServeLiteLLMConfigDeploymentRPM(t *testing.T) {
	a, aURL := newScripted(t, "a", false)
	b, bURL := newScripted(t, "b", false)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: %[1]q, api_key: key-a, rpm: 2}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: %[2]q, api_key: key-b}
  - model_name: solo
    litellm_params: {model: openai/solo-model, api_base: %[2]q, api_key: key-b, rpm: 2}
router_settings: {num_retries: 0}
general_settings: {master_key: sk-litellm-master-key-for-the-limits-test-01}
`, aURL, bURL)), 0o600)
	const master = "sk-litellm-master-key-for-the-limits-test-01"
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(dir, "data"))
	base := "http://" + addr

	var got []string
	for range 4 {
		code, text := chatAs(t, base, master, "gpt-4o")
		if code != 200 {
			t.Fatalf("gpt-4o: %d %s", code, text)
		}
		got = append(got, text)
	}
	if strings.Join(got, ",") != "from a,from a,from b,from b" || a.count("gpt-4o") != 2 || b.count("gpt-4o") != 2 {
		t.Fatalf("answers %v, upstream calls a=%d b=%d: want a twice (its rpm), then b", got, a.count("gpt-4o"), b.count("gpt-4o"))
	}

	for range 2 {
		if code, text := chatAs(t, base, master, "solo"); code != 200 {
			t.Fatalf("solo: %d %s", code, text)
		}
	}
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"solo","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+master)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusTooManyRequests || body.Error.Type != "rate_limit_error" || secs < 1 || secs > 60 ||
		!strings.Contains(body.Error.Message, "No deployments available for selected model") || !strings.Contains(body.Error.Message, `model group "solo"`) ||
		!strings.Contains(body.Error.Message, "rpm 2") {
		t.Fatalf("third solo request: %d Retry-After %q %+v; want a 429 rate_limit_error naming solo, Retry-After in 1..60", resp.StatusCode, resp.Header.Get("Retry-After"), body.Error)
	}
	if n := b.count("solo-model"); n != 2 {
		t.Fatalf("solo-model calls = %d, want 2 (the refused request calls nothing)", n)
	}
	cancel()
	<-done
}
