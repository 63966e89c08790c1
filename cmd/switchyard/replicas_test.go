package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestTwoServeReplicasOnPostgres runs two `serve` replicas on one PostgreSQL database
// (--store through SWITCHYARD_STORE): a conversation started on one continues on the other
// with every turn, and both list it.
func TestTwoServeReplicasOnPostgres(t *testing.T) {
	replicaEnv(t, "serve_replicas")
	ctx, cancel := context.WithCancel(context.Background())
	a, _, doneA := startServe(t, ctx, t.TempDir())
	b, _, doneB := startServe(t, ctx, t.TempDir())
	t.Cleanup(func() { cancel(); <-doneA; <-doneB })

	complete := func(addr, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", addr, resp.StatusCode, raw)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := complete(a, `{"models":["openai/gpt-4o-mini"],"messages":[{"role":"user","content":[{"type":"text","text":"on replica A"}]}]}`)
	conv := first["conversationId"].(string)
	second := complete(b, fmt.Sprintf(`{"models":["openai/gpt-4o-mini"],"conversationId":%q,"messages":[{"role":"user","content":[{"type":"text","text":"on replica B"}]}]}`, conv))
	if second["conversationId"] != conv {
		t.Fatalf("B answered in conversation %v, want %s", second["conversationId"], conv)
	}
	for _, addr := range []string{a, b} {
		code, c := get(t, "http://"+addr+"/api/v1/conversations/"+conv, "k")
		if code != 200 || c["message_count"] != 4.0 {
			t.Fatalf("conversation on %s: %d %v", addr, code, c)
		}
	}
	if code, list := get(t, "http://"+b+"/api/v1/conversations", "k"); code != 200 || len(list["data"].([]any)) != 1 {
		t.Fatalf("list on B: %d %v", code, list)
	}
}

// TestRequestRateSharedByReplicasOnPostgres: two serve replicas on one PostgreSQL database
// hold a key to --requests-per-minute-per-key together: after its requests on A, B refuses
// the one beyond the bound once the replicas have shared their counts
// (--limits-sync-interval).
func TestRequestRateSharedByReplicasOnPostgres(t *testing.T) {
	replicaEnv(t, "serve_rates")
	t.Setenv("SWITCHYARD_REQUESTS_PER_MINUTE_PER_KEY", "3")
	t.Setenv("SWITCHYARD_LIMITS_SYNC_INTERVAL", "50ms")
	ctx, cancel := context.WithCancel(context.Background())
	a, _, doneA := startServe(t, ctx, t.TempDir())
	b, _, doneB := startServe(t, ctx, t.TempDir())
	t.Cleanup(func() { cancel(); <-doneA; <-doneB })
	post := func(addr string) int { return selectModel(t, addr) }
	time.Sleep(500 * time.Millisecond) // both have synced: each knows where the other stands
	for i := range 3 {
		if code := post(a); code != 200 {
			t.Fatalf("request %d on A: %d", i, code)
		}
	}
	time.Sleep(time.Second) // twenty intervals: B has read A's count
	if code := post(b); code != http.StatusTooManyRequests {
		t.Errorf("the key's 4th request, on B: %d, want 429 (3 per minute across the replicas)", code)
	}
}

func TestStoreFlagRejectsOtherURLs(t *testing.T) {
	code, _, errOut := cli(t, "serve", "--store", "mysql://u:secret@h/db", "--addr", "127.0.0.1:0")
	if code == 0 || !strings.Contains(errOut, "--store") || strings.Contains(errOut, "secret") {
		t.Fatalf("serve --store mysql://: %d %q", code, errOut)
	}
	if got := redactURL("postgres://u:pw@h:5432/db?sslmode=disable"); got != "postgres://u:xxxxx@h:5432/db?sslmode=disable" {
		t.Fatalf("redactURL = %q", got)
	}
}

// replicaEnv sets the environment of serve replicas sharing the test PostgreSQL database
// (SWITCHYARD_TEST_POSTGRES; the test skips without it) in schema: key k, an OpenAI
// provider on a scripted upstream.
func replicaEnv(t *testing.T, schema string) {
	t.Helper()
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/test.sh starts a throwaway PostgreSQL cluster and sets it (needs the Debian package postgresql)")
	}
	up := fakeOpenAIUpstream(t)
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("OPENAI_API_KEY", "sk-fake")
	t.Setenv("OPENAI_BASE_URL", up.URL+"/v1")
	t.Setenv("SWITCHYARD_STORE", dsn)
	t.Setenv("SWITCHYARD_STORE_SCHEMA", fmt.Sprintf("%s_%d", schema, os.Getpid()))
}

// selectModel sends key k's model selection request to the serve at addr and returns the
// status.
func selectModel(t *testing.T, addr string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/model-select", strings.NewReader(
		`{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o-mini"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
