package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func scrapeMetrics(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeMetricsOnItsOwnListener runs serve with --metrics-addr and --metrics-token:
// /metrics moves off the API's listener, wants its token (not an API key), and shows the
// gateway, HTTP, model selection, store, jobs and Go runtime series after a scripted run.
func TestServeMetricsOnItsOwnListener(t *testing.T) {
	up := fakeOpenAIUpstream(t)
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("OPENAI_API_KEY", "sk-fake")
	t.Setenv("OPENAI_BASE_URL", up.URL+"/v1")
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(),
			"--metrics-addr", "127.0.0.1:0", "--metrics-token", "scrape-me"}, stdout, stderr)
	}()
	t.Cleanup(func() { cancel(); <-done })
	apiRe := regexp.MustCompile(`switchyard listening.*addr=(127\.0\.0\.1:\d+)`)
	metricsRe := regexp.MustCompile(`metrics listening.*addr=(127\.0\.0\.1:\d+)`)
	var api, metrics string
	for deadline := time.Now().Add(20 * time.Second); api == "" || metrics == ""; {
		if m := apiRe.FindStringSubmatch(stderr.String()); m != nil {
			api = m[1]
		}
		if m := metricsRe.FindStringSubmatch(stderr.String()); m != nil {
			metrics = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	post := func(path, body string) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+api+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	post("/api/v1/completions", `{"models":["openai/gpt-4o-mini"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	post("/v1/chat/completions", `{"model":"openai/gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	post("/api/v1/model-select", `{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"openai","model":"gpt-4o-mini"}]}`)

	if code, _ := scrapeMetrics(t, "http://"+metrics+"/metrics", ""); code != http.StatusUnauthorized {
		t.Fatalf("metrics without the token: %d", code)
	}
	if code, _ := scrapeMetrics(t, "http://"+metrics+"/metrics", "k"); code != http.StatusUnauthorized {
		t.Fatalf("metrics with an API key instead of the token: %d", code)
	}
	if code, _ := scrapeMetrics(t, "http://"+api+"/metrics", "scrape-me"); code != http.StatusNotFound {
		t.Fatalf("/metrics still on the API listener: %d", code)
	}
	code, text := scrapeMetrics(t, "http://"+metrics+"/metrics", "scrape-me")
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	for _, want := range []string{
		`switchyard_gateway_requests_total{error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="openai/gpt-4o-mini",outcome="ok",requested_model="openai/gpt-4o-mini",stream="false"} 1`,
		`switchyard_gateway_requests_total{error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="openai/gpt-4o-mini",outcome="ok",requested_model="openai/gpt-4o-mini",stream="true"} 1`,
		`gen_ai_server_time_to_first_token_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="openai/gpt-4o-mini",stream="true"} 1`,
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="openai/gpt-4o-mini",gen_ai_token_type="input"}`,
		`switchyard_gateway_cost_usd_total{gen_ai_provider_name="openai",gen_ai_request_model="openai/gpt-4o-mini",requested_model="openai/gpt-4o-mini"}`,
		`switchyard_model_select_requests_total{code="200",router="default"} 1`,
		`switchyard_http_requests_total{code="200",route="POST /v1/chat/completions"} 1`,
		`switchyard_store_operation_duration_seconds_count{operation="update",outcome="ok"}`,
		`switchyard_job_queue_depth{kind="training"} 0`,
		`switchyard_job_queue_depth{kind="optimization"} 0`,
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, `owner=`) {
		t.Error("per-key labels without --metrics-owner-label")
	}
}
